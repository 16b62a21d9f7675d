package synth

import (
	"encoding/binary"
	"slices"

	"github.com/roce-dissect/roce-dissect/layers"
)

// srcPort returns the UDP source port a RoCE v2 packet is sent with (and
// its ICRC computed over): the ECMP entropy port of its direction of the
// connection, drawn per connection from 49152…65535; CM MADs go from a
// port of their sending host.
func srcPort(p *pkt) uint16 {
	c := p.c
	switch {
	case p.cm != cmNone && p.fromB:
		return 49152 + uint16(c.b.idx)
	case p.cm != cmNone:
		return 49152 + uint16(c.a.idx)
	case p.fromB:
		return c.sportB
	}
	return c.sportA
}

// rewriteSrcPort writes UDP source port 4791 into a serialized RoCE v2
// frame whose ICRC is already computed, as the NIC sniffer does: the ICRC
// then fails as captured, and only the original port makes it verify.
func (b *builder) rewriteSrcPort(frame []byte) {
	ipOff := 14
	if b.encap == EncapVLAN {
		ipOff += 4
	}
	ipLen := int(frame[ipOff]&0x0F) * 4
	if b.encap == EncapIPv6 {
		ipLen = 40
	}
	binary.BigEndian.PutUint16(frame[ipOff+ipLen:], uint16(layers.UDPPortRoCEv2))
}

// portRewritten records in the truth that the analyzer recovers p's
// source port from its ICRC (p's ICRC verifies with it).
func (t *tracker) portRewritten(p *pkt) {
	src, dst := p.c.a, p.c.b
	if p.fromB {
		src, dst = dst, src
	}
	fs := t.flows[flowKey{src.idx, dst.idx, p.destQP}]
	t.truth.Capture.ICRCPortRewritten++
	fs.f.ICRC.PortRewritten++
	if port := srcPort(p); !slices.Contains(fs.f.ICRC.OriginalSrcPorts, port) {
		fs.f.ICRC.OriginalSrcPorts = append(fs.f.ICRC.OriginalSrcPorts, port)
	}
}
