// Package layers decodes and builds the InfiniBand transport headers as
// gopacket layers: RoCE v2 (UDP destination port 4791 over IPv4 or IPv6),
// RoCE v1 (EtherType 0x8915, GRH first) and native InfiniBand
// (LINKTYPE_INFINIBAND 247, LRH first, and ibdump's ERF records,
// LINKTYPE_ERF 197 with record type 21 or 25).
//
// # Layers
//
// LRH, GRH, BTH and the extension headers RDETH, DETH, XRCETH, RETH,
// AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, FETH, the DCETH of NVIDIA's
// DC transport and the CNP body, then the
// payload, the ICRC trailer and, on native IB, the VCRC; ERF is the record
// header of an ERF capture. Each has its bit diagram in its doc comment.
// The IBTA headers carry no next-header field: the BTH opcode (see Opcode
// and Opcode.Headers) fixes which extension headers follow; for the RD
// opcodes, which NVIDIA's Dynamically Connected (DC) transport reuses with
// 8 to 16 more header bytes, the BTH also decides per packet whether it
// is RD or DC (see RDDecoding, BTH.DC, BTH.Headers). Payloads to or
// from QP0/QP1 are management datagrams (LayerTypeMAD); importing package
// cm decodes them, otherwise they stay raw payload.
//
// Two more layers come from the switches of a RoCE fabric: ERSPANIII, the header
// of an ERSPAN type III mirror copy (GRE protocol type 0x22EB), through
// which a switch sends a copy of the RoCE traffic to a collector; and
// MACControl, the IEEE 802.3 MAC Control frame (EtherType 0x8808) of
// 802.3x PAUSE and 802.1Qbb priority flow control (PFC), the pause frames
// of a lossless fabric.
//
// Importing this package registers the layers with gopacket (UDP port
// 4791, EtherType 0x8915, link types 247 and 197, GRE protocol type
// 0x22EB, EtherType 0x8808), so gopacket.NewPacket decodes RoCE and
// native IB, mirrored or not, and checks every ICRC and VCRC: the ICRC and
// VCRC layers carry a Status (ok, bad, or unverifiable when the capture cut
// the packet short). In a mirror copy the ICRC covers the mirrored packet:
// it is checked against the last IPv4/IPv6 and UDP header, the inner ones.
//
// # Zero-allocation decoding
//
// For a hot loop use gopacket.DecodingLayerParser with the layers of a
// TransportLayers from NewTransportLayers, whose extension headers are
// linked to its BTH so that each knows what follows it (add a
// gplayers.GRE and an ERSPANIII for mirror copies, a MACControl for pause
// frames). Decoding allocates
// nothing; slices (Contents, Payload, GIDs, Pad, Trailer) alias the decoded
// data. The BTH keeps the ICRC in Trailer; CheckICRC verifies it against
// the IPv4/IPv6 and UDP, GRH or LRH header the parser decoded.
//
// QP0/QP1 packets (the CM, subnet management) carry a MAD after their
// DETH: add a cm.MAD to the parser's layers too (package cm decodes it;
// it imports this package, so TransportLayers cannot hold it), or the
// parser stops on every CM frame with "No decoder for layer type MAD"
// (see package cm's ExampleMAD_decodingLayerParser, over a capture with CM).
//
//	var mad cm.MAD
//	ib := layers.NewTransportLayers()
//	parser := gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet,
//		append([]gopacket.DecodingLayer{&eth, &ip4, &ip6, &udp, &mad}, ib.DecodingLayers()...)...)
//
// # Truncated and malformed packets
//
// Decoders check lengths before reading and report short data with an
// error wrapping ErrTruncated (after calling DecodeFeedback.SetTruncated);
// other errors wrap ErrBadHeader, ErrUnknownOpcode or, when serializing,
// ErrFieldRange. A capture cut inside the payload (snap length) decodes
// without error: the layers below flag the packet truncated, BTH.Truncated
// is set, and the ICRC cannot be verified. The BTH bounds the packet by the
// length fields below it (IPv4 total length, UDP length, GRH PayLen, LRH
// PktLen), so Ethernet padding is never taken for payload.
//
// # Building packets
//
// SerializeTo writes every header; with gopacket.SerializeOptions
// FixLengths it sets PadCnt and inserts the pad in front of the ICRC, GRH
// PayLen, LRH PktLen and ERF lengths; with ComputeChecksums it computes the
// ICRC — for RoCE v2 after BTH.SetNetworkLayerForChecksum, for RoCE v1 and
// native IB in the GRH and LRH — and the VCRC. Serialize an &ICRC{} layer
// after the payload; with gopacket.SerializeLayers a BTH whose layers end
// without one adds the 4 ICRC bytes itself (never taking the payload's
// last bytes for them).
//
// The UDP checksum: BTH.SetNetworkLayerForChecksum(ip, udp) also gives the
// UDP layer its network layer (no separate udp.SetNetworkLayerForChecksum
// is needed). With ComputeChecksums gopacket's UDP then writes a valid
// checksum; RoCE v2 senders write 0 (receivers accept both; the ICRC does
// not cover it). For 0, as a NIC sends, serialize the UDP layer wrapped in
// UDPZeroChecksum. See docs/protocol.md for the wire format.
package layers
