package analyze

import (
	"fmt"

	"github.com/gopacket/gopacket"

	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// The transport headers of an RDMA packet, after decode.go's link and
// network headers: the BTH, and the extension headers its opcode implies,
// each decoded through the Analyzer's extension table.

// decodeTransport decodes the BTH and the extension headers its opcode
// implies (through the layers' link to the BTH), each through the
// Analyzer's extension table.
func (a *Analyzer) decodeTransport(data []byte) {
	p := &a.pkt
	bth := &a.ib.BTH
	if err := bth.DecodeFromBytes(data, &a.fb); err != nil {
		p.Err = err
		return
	}
	p.BTH = bth
	p.Truncated = bth.Truncated
	typ, rest := bth.NextLayerType(), bth.Payload
	for {
		if typ == layers.LayerTypeMAD {
			p.MAD = rest
			if !bth.Truncated && p.DETH != nil && len(rest) < cm.MADLen {
				// A datagram whole in its frame, yet short: not a MAD (madcheck.go).
				p.Err = fmt.Errorf("%s to QP%d: %w: %d-byte MAD, need %d", bth.Opcode, bth.DestQP, ErrShortMAD, len(rest), cm.MADLen)
			}
			return
		}
		x := a.ext.lookup(typ)
		if x == nil {
			p.Payload = rest
			a.checkEmptyMAD()
			return
		}
		// A header is shown in p only once it decoded.
		if err := x.layer.DecodeFromBytes(rest, &a.fb); err != nil {
			if !bth.Truncated {
				p.Err = err
			}
			return
		}
		x.show()
		typ, rest = x.layer.NextLayerType(), x.layer.LayerPayload()
	}
}

// extHeader is one extension header of the transport: its layer, and how
// the Packet shows it once decoded.
type extHeader struct {
	typ   gopacket.LayerType
	layer gopacket.DecodingLayer
	show  func()
}

// extTable holds the extension headers by layer type: a slice indexed by
// the type less the lowest one (the types are registered close together),
// so that a lookup is an index, as fast as the switch it replaced.
type extTable struct {
	base   gopacket.LayerType
	byType []extHeader
}

// ext is one row of the extension table: the layer decodes into l, and
// the Packet shows it in *field.
func ext[T any, PT interface {
	*T
	gopacket.DecodingLayer
	LayerType() gopacket.LayerType
}](l PT, field **T) extHeader {
	return extHeader{typ: l.LayerType(), layer: l, show: func() { *field = l }}
}

// newExtTable returns the extension headers of ib, shown in p: one line
// per header.
func newExtTable(ib *layers.TransportLayers, p *Packet) extTable {
	rows := [...]extHeader{
		ext(&ib.RDETH, &p.RDETH),
		ext(&ib.DETH, &p.DETH),
		ext(&ib.XRCETH, &p.XRCETH),
		ext(&ib.RETH, &p.RETH),
		ext(&ib.AtomicETH, &p.AtomicETH),
		ext(&ib.AETH, &p.AETH),
		ext(&ib.AtomicAckETH, &p.AtomicAckETH),
		ext(&ib.ImmDt, &p.ImmDt),
		ext(&ib.IETH, &p.IETH),
		ext(&ib.FETH, &p.FETH),
		ext(&ib.DCETH, &p.DCETH),
		ext(&ib.CNP, &p.CNP),
	}
	lo, hi := rows[0].typ, rows[0].typ
	for _, x := range rows {
		lo, hi = min(lo, x.typ), max(hi, x.typ)
	}
	t := extTable{base: lo, byType: make([]extHeader, hi-lo+1)}
	for _, x := range rows {
		t.byType[x.typ-lo] = x
	}
	return t
}

// lookup returns the extension header of a layer type, nil if none.
func (t *extTable) lookup(typ gopacket.LayerType) *extHeader {
	i := int(typ) - int(t.base)
	if i < 0 || i >= len(t.byType) || t.byType[i].layer == nil {
		return nil
	}
	return &t.byType[i]
}
