// Package synth generates RoCE and InfiniBand captures with their ground
// truth: there is no RDMA hardware to capture from, and public captures
// never show loss, NAKs, CNP storms, PSN wrap, IPv6 or VLANs. Frames are
// built with the project's layers (SerializeTo, ICRC and VCRC computed by
// the layers) and written as pcap (µs or ns) or pcapng, whole or cut to a
// snap length; the truth (see Truth) is computed from what was written.
// Output is byte-identical for the same Config: every random choice comes
// from Config.Seed and the timestamps start at StartTime and follow the
// link rate.
//
// # Scenarios
//
//   - write-bw: CM REQ/REP/RTU, RC RDMA WRITE messages (FIRST/MIDDLE/LAST or
//     ONLY) each ACKed by the responder, DREQ/DREP.
//   - read-bw: RDMA READ REQUEST (reserving ceil(size/MTU) PSNs) and the
//     READ_RESPONSE FIRST/MIDDLE/LAST or ONLY.
//   - send-bw: SEND messages in turn plain, with immediate, with invalidate.
//   - atomic: COMPARE_SWAP and FETCH_ADD in turn, each with its
//     ATOMIC_ACKNOWLEDGE.
//   - ud: UD SEND_ONLY with DETH, in turn without and with immediate (no CM).
//   - mix: Config.QPs RC connections (WRITE, SEND or READ) over QPs/4 host
//     pairs, set up one after the other, then interleaved at random packet
//     by packet, then torn down: exactly Config.Packets frames, streamed
//     (memory does not grow with the packets).
//
// Every scenario runs over any Encap: RoCE v2 over IPv4, IPv6 or 802.1Q
// VLAN (UDP 4791), RoCE v1 (EtherType 0x8915, GRH), native InfiniBand in
// LINKTYPE_INFINIBAND (247) or in ERF records (LINKTYPE_ERF, type 21); the
// native IB packets have an LRH and no GRH.
//
// # Impairments
//
// Impairments name request PSNs of the data connection (absolute, or +N
// from the starting PSN) and apply to the first occurrence of that
// request; see Impairments. The capture is taken by a tap between the
// hosts: a drop means the frame is absent from the capture while the
// conversation goes on; a NAK means the request was lost after the tap,
// the next two requests were already sent, the responder sent one NAK
// (PSN sequence error) and the requester resent everything from the lost
// PSN (go-back-N). An RNR NAK is the same with one request in flight and
// the resend 0.64 ms later. ECN CE marks are answered by a CNP (0x81, BECN,
// PSN 0) from the responder to the requester's QP.
//
// # Truth
//
// The REQ's StartingPSN is where the responder's requests start and the
// REP's where the requester's do, as real stacks use them (Linux cm.c);
// the truth gives each endpoint both (starting_psn, send_psn).
//
// The truth lists the CM connections (both QPNs and starting PSNs) and,
// per flow (source address, destination address, DestQP), the counters the
// analyzer reports, by the definitions it shares: requests and responses
// are separate PSN streams; missing PSNs are those between the first
// request PSN of the capture and the highest never seen (a READ REQUEST
// covers its PSN range); a retransmission is a request whose PSN was seen
// before and that is not a byte-identical copy of the flow's previous
// request (a duplicate); an out-of-order request fills a hole below the
// highest PSN. A message (SEND, WRITE, UD SEND incl. CM MADs, READ
// response) counts once when every packet of it is in the capture; packets
// with a bad ICRC still count. ICRC status is unverifiable when the snap
// length cut the ICRC off. CNPs belong to the flow of their DestQP; such a
// flow takes the transport of the QP it goes to.
//
// Missing PSNs are counted from the requester's send PSN when the capture
// holds the REP's StartingPSN. Each is lost when a NAK (PSN sequence
// error) names it or a go-back-N resend sends it again, not captured when
// a later response covers it (--drop, --tap-drop: the tap missed it, the
// responder ACKs it), else unknown. Retransmissions carry the cause the
// generator gave them (NAK, RNR NAK, else timeout). Findings lists every
// finding the analyzer should report (kind, severity, frame); a new kind
// is one tracker.finding call where the generator writes its cause.
//
// The testdata/ captures are listed by Golden and written by
// `go generate ./...`; cmd/roce-synth is the command line (Run).
package synth
