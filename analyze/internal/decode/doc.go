// Package decode is the first stage of the analyzer: it decodes a frame's
// headers into a Packet, without allocating.
//
// Use one Decoder per stream of frames:
//
//	d := decode.New(decode.Options{})
//	for each frame {
//		p := d.Decode(frame, ci, linkType, data) // valid until the next Decode
//		h := d.Headers()                         // what the checks after it need
//	}
//
// A Decoder walks the link header (Ethernet, Linux SLL and SLL2, ERF,
// InfiniBand, raw IP), VLAN tags, the network header (IPv4, IPv6, GRH,
// LRH), UDP, and the encapsulations a frame may have arrived in (ERSPAN,
// GRE, NVGRE, VXLAN, GENEVE, QinQ, MPLS: each a Wrap of the Packet) to
// the RDMA packet inside, then its BTH and the extension headers its
// opcode implies. The Packet shows every header decoded and the facts the
// headers state: whether the frame is RDMA traffic, and when it is one
// that cannot be decoded, why (Packet.Err; a frame that is not RDMA has no
// error). Headers adds what only the checks after decoding need: the
// network and UDP headers the ICRC covers, the lengths the headers declare
// (Lens: a frame shorter than them was cut), the protocol of a frame that
// is not RDMA (Other) and the sender of a pause frame.
//
// The stage records facts and judges nothing: findings, counts and flows
// are package analyze's, which composes this stage with the others.
//
// Files: decoder.go (Decoder, Headers), walk.go (Decode: the link and
// network headers), transport.go (the BTH and its extension headers),
// wrap.go (the kinds of encapsulations, a flow's tunnel) and tunnel.go
// (their headers), lens.go (the lengths a frame declares, original
// lengths), other.go (what a frame that is not RDMA is), packet.go (the
// decoded Packet).
package decode
