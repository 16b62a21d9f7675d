package decode

import (
	"errors"
	"fmt"

	"github.com/gopacket/gopacket"

	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// The transport headers of an RDMA packet, after walk.go's link and
// network headers: the BTH, and the extension headers its opcode implies,
// each decoded through the Decoder's extension table.

// ErrShortMAD is the error of a MAD shorter than 256 bytes in a frame that
// the capture did not cut.
//
// MADs whole in their frame are 256 bytes. A packet to or from QP0/QP1
// whose frame the capture did not cut (neither a header-only capture nor a
// tool's cut) and whose MAD is shorter is malformed: it makes no
// connection (a 28-byte REQ made one with QPN 0 and MTU 0). That holds for
// any length from 0 (a datagram to QP1 with no payload at all used to
// vanish as an ordinary packet) to 255. Only datagrams (with a DETH: UD
// SEND to or from QP0/QP1) carry MADs: the payload of another packet to
// QP1 (an RC SEND, which no stack sends there) is not decoded as a CM
// message and makes no connection.
var ErrShortMAD = errors.New("short MAD")

// decodeTransport decodes the BTH and the extension headers its opcode
// implies (through the layers' link to the BTH), each through the
// Decoder's extension table.
func (d *Decoder) decodeTransport(data []byte) {
	p := &d.pkt
	bth := &d.ib.BTH
	if err := bth.DecodeFromBytes(data, &d.fb); err != nil {
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
				// A datagram whole in its frame, yet short: not a MAD (ErrShortMAD).
				p.Err = fmt.Errorf("%s to QP%d: %w: %d-byte MAD, need %d", bth.Opcode, bth.DestQP, ErrShortMAD, len(rest), cm.MADLen)
			}
			return
		}
		x := d.ext.lookup(typ)
		if x == nil {
			p.Payload = rest
			p.checkEmptyMAD()
			return
		}
		// A header is shown in p only once it decoded.
		if err := x.layer.DecodeFromBytes(rest, &d.fb); err != nil {
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

// checkEmptyMAD flags a datagram to or from QP0/QP1 that carries no MAD at
// all in a frame the capture did not cut.
func (p *Packet) checkEmptyMAD() {
	bth := p.BTH
	if bth == nil || p.Err != nil || p.MAD != nil || bth.Truncated || p.DETH == nil || !bth.IsMAD() {
		return
	}
	p.Err = fmt.Errorf("%s to QP%d: %w: 0-byte MAD, need %d", bth.Opcode, bth.DestQP, ErrShortMAD, cm.MADLen)
}
