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
// Report.Merge.
package analyze
