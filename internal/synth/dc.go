package synth

import "github.com/roce-dissect/roce-dissect/layers"

// DC traffic (Config.DC): NVIDIA's Dynamically Connected transport, which
// carries the RC operations on the RD opcodes (0x40 | operation) with the
// RDETH, DETH and DCETH places between the BTH and the RC headers
// (layers.DCETH). There is no CM exchange: a DC initiator reaches a DC
// target by its number, with no connection setup on the wire.
//
// What the generator writes in those places follows the shape of a real
// DC capture (PROTOCOL.md): the RDETH place a non-zero first byte and 24
// bits, the DETH place a key-like word shared by both directions and the
// sending QP's number, the DCETH a small number in its first word and zero
// in its second. Their meaning is not public; the analyzer treats them as
// opaque, except that a DC flow follows the PSNs of the first sending QP
// its DETH place names (as for RD and UD).
const (
	dcRDETHPlace = 0x11009036
	dcKeyWord    = 0x00715001
	dcETHWord0   = 0x0000C0DC
)

// dcOpcode returns the RD-range opcode DC uses for an RC opcode.
func dcOpcode(op layers.Opcode) layers.Opcode {
	return layers.Opcode(layers.TransportRD) | layers.Opcode(op.Operation())
}

// dcScenario reports whether a scenario can run over DC: DC has sends,
// writes, reads and atomics, but no send with invalidate and no UD.
func dcScenario(s string) bool {
	return s == ScenarioWriteBW || s == ScenarioReadBW || s == ScenarioAtomic
}

// withoutCM drops the CM packets of a DC data connection.
func withoutCM(list []pkt) []pkt {
	out := list[:0]
	for _, p := range list {
		if p.cm == cmNone {
			out = append(out, p)
		}
	}
	return out
}

// pushDC pushes the DC headers of p (after the BTH, whose opcode and DC
// flag build set) up to the RC headers.
func (b *builder) pushDC(p *pkt) {
	srcQP := p.c.qa
	if p.fromB {
		srcQP = p.c.qb
	}
	b.rdeth = layers.RDETH{Reserved: dcRDETHPlace >> 24, EECnxt: dcRDETHPlace & 0xFFFFFF}
	b.deth = layers.DETH{QKey: dcKeyWord, SrcQP: srcQP}
	b.dceth = layers.DCETH{Word0: dcETHWord0}
	b.push(&b.rdeth)
	b.push(&b.deth)
	b.push(&b.dceth)
}
