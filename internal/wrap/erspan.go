package wrap

import (
	"encoding/binary"
	"time"
)

// Fields of the ERSPAN headers (draft-foschiano-erspan-03) that do not
// come from the frame or the Wrapper.
const (
	erspanPortIndex = 1 // type II index, type III platform subheader port index
	erspanHwID      = 1 // type III hardware ID (6 bits)
	platformID      = 3 // type III subheader: port index, upper 32 bits of the timestamp

	gra100us = 0 // type III timestamp granularity: 100 µs
	gra1588  = 2 // IEEE 1588: seconds (subheader) and nanoseconds
)

// erspan wraps f in an ERSPAN session from the switch to the collector;
// seq is the GRE sequence number of types II and III.
func (w *Wrapper) erspan(k Kind, seq uint32, out, f []byte, orig int, ts time.Time, fi *frameInfo) ([]byte, tunnelKey, error) {
	c := &w.cfg
	n := k.Overhead()
	out, h := grow(out, n+len(f))
	putEthernet(h, c.MirrorSrc, c.MirrorDst, etherTypeIPv4)
	putIPv4(h[ethLen:], 0, protoGRE, c.MirrorSrc, c.MirrorDst, orig+n-ethLen)
	g := h[ethLen+ipv4Len:]
	switch k {
	case ERSPAN1:
		putGRE(g, 0, etherTypeERSP2, 0, 0)
	case ERSPAN2:
		m := putGRE(g, greSeqBit, etherTypeERSP2, 0, seq)
		w.putERSPAN2(g[m:], fi)
	default:
		m := putGRE(g, greSeqBit, etherTypeERSP3, 0, seq)
		w.putERSPAN3(g[m:], k == ERSPAN3Platform, orig, ts, fi)
	}
	copy(h[n:], f)
	return out, tunnelKey{kind: k, src: c.MirrorSrc, dst: c.MirrorDst, id: uint32(c.SessionID)}, nil
}

// vlan returns the frame's VLAN ID and whether it carries a tag.
func (fi *frameInfo) vlan() uint16 {
	if fi.tagged {
		return fi.tci & 0x0FFF
	}
	return 0
}

// putERSPAN2 writes the 8-byte type II header: version 1, the frame's
// VLAN, its class of service, Encap 3 (tag kept in the frame) when it is
// tagged, not truncated, the session ID, the port index.
func (w *Wrapper) putERSPAN2(b []byte, fi *frameInfo) {
	en := uint16(0)
	if fi.tagged {
		en = 3
	}
	binary.BigEndian.PutUint16(b[0:2], 1<<12|fi.vlan())
	binary.BigEndian.PutUint16(b[2:4], uint16(fi.cos())<<13|en<<11|w.cfg.SessionID)
	binary.BigEndian.PutUint32(b[4:8], erspanPortIndex)
}

// putERSPAN3 writes the 12-byte type III header: version 2, the frame's
// VLAN and class of service, BSO from its wire length (short under 60
// bytes, oversized over 1514, as Linux reports them), not truncated, the
// session ID; the timestamp; SGT 0, P (an Ethernet frame), frame type 0,
// the hardware ID, ingress, the granularity and the O bit. Without the
// platform subheader the timestamp counts 100 µs; with it (platform ID 3)
// it is IEEE 1588: nanoseconds here, the seconds in the subheader.
func (w *Wrapper) putERSPAN3(b []byte, platform bool, orig int, ts time.Time, fi *frameInfo) {
	bso := uint16(0)
	switch {
	case orig < 60:
		bso = 1
	case orig > 1514:
		bso = 2
	}
	binary.BigEndian.PutUint16(b[0:2], 2<<12|fi.vlan())
	binary.BigEndian.PutUint16(b[2:4], uint16(fi.cos())<<13|bso<<11|w.cfg.SessionID)
	gra, o := uint16(gra100us), uint16(0)
	stamp := uint32(ts.UnixMicro() / 100)
	if platform {
		gra, o = gra1588, 1
		stamp = uint32(ts.Nanosecond())
	}
	binary.BigEndian.PutUint32(b[4:8], stamp)
	binary.BigEndian.PutUint16(b[8:10], 0) // SGT
	binary.BigEndian.PutUint16(b[10:12], 1<<15|erspanHwID<<4|gra<<1|o)
	if platform {
		binary.BigEndian.PutUint32(b[12:16], platformID<<26|erspanPortIndex&0x3FFF)
		binary.BigEndian.PutUint32(b[16:20], uint32(ts.Unix()))
	}
}
