// Package analyze is the streaming analyzer of roce-dissect: frames go in
// one by one (gopacket.CaptureInfo, link type, bytes), a Report comes out.
//
// The report answers what a capture of RDMA traffic cannot show packet by
// packet: which queue pairs talked and what the CM handshake set up
// (Connections), and for every flow — network source, network
// destination, destination QP — its packets and bytes, the requester's PSN
// stream (missing PSNs as ranges, retransmissions, duplicates, reordering),
// the responder's ACKs, NAKs and RNR NAKs with the request→ACK round trip,
// reassembled messages, the path MTU inferred and negotiated, congestion
// signals (ECN CE, FECN, BECN, CNPs), ICRC results and throughput, overall
// and per interval. Every anomaly is also a Finding with the frame number
// to open in Wireshark. docs/analysis.md defines each number; docs/json.md
// the JSON form.
//
// Memory grows with the number of flows (and gaps), never with the number
// of packets, and a packet of an existing flow is analyzed without
// allocating. Reports of parts analyzed separately combine with
// Report.Merge (reports as Analyzers return them: see ErrNotMergeable).
//
// Where things are: Feed (analyzer.go) decodes a frame (decode.go) into
// a Packet (packet.go) and hands it to its flow (flow.go: the flow table
// and its keys). Requests follow the PSN stream (request.go, psn.go),
// messages are reassembled (reassembly.go), responses give ACK/NAK counts,
// the RTT and the reverse flow (response.go, rtt.go, pendingring.go); the path MTU is in
// mtu.go, the throughput series in series.go, CM connections in conn.go,
// loss attribution in loss.go and lossclass.go, NIC timing in nic.go,
// nicpacket.go and nicreport.go. Finish/Report build the Report
// (build.go), Merge combines them (merge.go, mergepsn.go).
//
// Adding a finding kind: a Kind constant and one entry in Kinds
// (findings.go), and the same row in docs/analysis.md's table of
// findings (a test compares them); report it with Analyzer.finding, which
// checks the cap before the detail is formatted. Adding a CM message: see
// package cm.
package analyze
