package wrap

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// The Geneve option every Geneve packet carries: class 0xFFF0
// (experimental use), type 0x01, 4 bytes of data (the flow's hash), for
// decoders to skip by its length.
const (
	geneveOptClass = 0xFFF0
	geneveOptType  = 0x01
)

// overlay wraps f in a VXLAN, Geneve or NVGRE tunnel from the VTEP of its
// source host to the VTEP of its destination host. The outer IPv4 header
// copies the frame's DSCP and ECN (RFC 6040, normal mode).
func (w *Wrapper) overlay(k Kind, out, f []byte, orig int, fi *frameInfo) ([]byte, tunnelKey, error) {
	src, err := w.vtep(fi.src)
	if err != nil {
		return out, tunnelKey{}, err
	}
	dst, err := w.vtep(fi.dst)
	if err != nil {
		return out, tunnelKey{}, err
	}
	vni := w.cfg.VNI
	n := k.Overhead()
	total := orig + n - ethLen
	tos := uint8(0)
	if fi.ip {
		tos = fi.tos
	}
	proto := uint8(protoUDP)
	if k == NVGRE {
		proto = protoGRE
	}
	out, h := grow(out, n+len(f))
	putEthernet(h, src, dst, etherTypeIPv4)
	putIPv4(h[ethLen:], tos, proto, src, dst, total)
	l4 := h[ethLen+ipv4Len:]
	switch k {
	case VXLAN:
		putUDP(l4, fi.srcPort(), portVXLAN, total-ipv4Len)
		v := l4[udpLen:]
		binary.BigEndian.PutUint32(v[0:4], 0x08<<24) // I: the VNI is valid
		binary.BigEndian.PutUint32(v[4:8], vni<<8)
	case Geneve:
		putUDP(l4, fi.srcPort(), portGeneve, total-ipv4Len)
		g := l4[udpLen:]
		g[0], g[1] = geneveOptLen/4, 0 // version 0, options length in 4-byte words
		binary.BigEndian.PutUint16(g[2:4], etherTypeTEB)
		binary.BigEndian.PutUint32(g[4:8], vni<<8)
		o := g[geneveLen:]
		binary.BigEndian.PutUint16(o[0:2], geneveOptClass)
		o[2], o[3] = geneveOptType, (geneveOptLen-4)/4
		binary.BigEndian.PutUint32(o[4:8], fi.hash)
	case NVGRE:
		// The key is the VSID and an 8-bit flow ID from the flow's hash
		// (RFC 7637 section 3.2).
		putGRE(l4, greKeyBit, etherTypeTEB, vni<<8|fi.hash&0xFF, 0)
	}
	copy(h[n:], f)
	return out, tunnelKey{kind: k, src: src, dst: dst, id: vni}, nil
}

// vtep returns the VTEP address of an inner host, the next one of the
// underlay for a host seen the first time.
func (w *Wrapper) vtep(h host) (netip.Addr, error) {
	if a, ok := w.vteps[h]; ok {
		return a, nil
	}
	base := w.cfg.Underlay.Addr().As4()
	v := binary.BigEndian.Uint32(base[:]) + uint32(len(w.vteps)) + 1
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	a := netip.AddrFrom4(b)
	if !w.cfg.Underlay.Contains(a) {
		return netip.Addr{}, fmt.Errorf("wrap: %w: underlay %s has no address left for a VTEP", ErrConfig, w.cfg.Underlay)
	}
	w.vteps[h] = a
	return a, nil
}
