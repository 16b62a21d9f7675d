package decode

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/layers"
)

// The headers of the encapsulations a Decoder walks through (wrap.go):
// each records its Wrap in the Packet, and where the carried frame starts.

// wrap records an encapsulation of the frame being decoded; false, the
// frame malformed, when it is nested deeper than maxWraps.
func (p *Packet) wrap(k WrapKind, id uint32, outer bool) bool {
	if len(p.Wraps) == MaxWraps {
		p.badTunnel(errTooDeep)
		return false
	}
	w := Wrap{Kind: k, ID: id}
	if outer {
		w.Src, w.Dst = p.Src.IP, p.Dst.IP
	}
	p.Wraps = append(p.Wraps, w)
	return true
}

// decodeGRE decodes a GRE header: ERSPAN I and NVGRE are recorded here,
// ERSPAN II and III by their own headers, GRE carrying IP as gre.
func (d *Decoder) decodeGRE(data []byte) (gopacket.LayerType, []byte) {
	g := &d.gre
	if err := g.DecodeFromBytes(data, &d.fb); err != nil {
		return d.pkt.badTunnel(err)
	}
	next := g.NextLayerType()
	ok := true
	switch {
	case g.Protocol == gplayers.EthernetTypeERSPAN && next == gplayers.LayerTypeEthernet:
		ok = d.pkt.wrap(WrapERSPAN1, 0, true)
	case g.Protocol == gplayers.EthernetTypeTransparentEthernetBridging:
		ok = d.pkt.wrap(WrapNVGRE, g.Key>>8, true)
	case next == gplayers.LayerTypeIPv4 || next == gplayers.LayerTypeIPv6:
		ok = d.pkt.wrap(WrapGRE, g.Key, true)
	}
	if !ok {
		return gopacket.LayerTypeZero, nil
	}
	if next != gplayers.LayerTypeERSPANII { // its own header follows
		d.carried = len(g.Payload)
	}
	return next, g.Payload
}

// decodeERSPANII decodes an ERSPAN II header; the mirrored Ethernet frame
// follows.
func (d *Decoder) decodeERSPANII(data []byte) (gopacket.LayerType, []byte) {
	e := &d.erspan2
	if err := e.DecodeFromBytes(data, &d.fb); err != nil {
		return d.pkt.badTunnel(err)
	}
	if !d.pkt.wrap(WrapERSPAN2, uint32(e.SessionID), true) {
		return gopacket.LayerTypeZero, nil
	}
	d.carried = len(e.Payload)
	return e.NextLayerType(), e.Payload
}

// decodeERSPANIII decodes an ERSPAN III header (and its platform
// subheader); the mirrored Ethernet frame or IP packet follows.
func (d *Decoder) decodeERSPANIII(data []byte) (gopacket.LayerType, []byte) {
	e := &d.erspan3
	if err := e.DecodeFromBytes(data, &d.fb); err != nil {
		return d.pkt.badTunnel(err)
	}
	if !d.pkt.wrap(WrapERSPAN3, uint32(e.SessionID), true) {
		return gopacket.LayerTypeZero, nil
	}
	d.carried = len(e.Payload)
	return e.NextLayerType(), e.Payload
}

// decodeVXLAN decodes a VXLAN header; an Ethernet frame follows.
func (d *Decoder) decodeVXLAN(data []byte) (gopacket.LayerType, []byte) {
	v := &d.vxlan
	if err := v.DecodeFromBytes(data, &d.fb); err != nil {
		return d.pkt.badTunnel(err)
	}
	if !d.pkt.wrap(WrapVXLAN, v.VNI, true) {
		return gopacket.LayerTypeZero, nil
	}
	d.carried = len(v.Payload)
	return v.NextLayerType(), v.Payload
}

// geneveLen is the fixed part of a GENEVE header (RFC 8926 §3.4).
const geneveLen = 8

// GENEVEHeader reads a GENEVE header: the layer it carries, its VNI and
// its length with the options, which it skips by their length
// (gopacket's Geneve allocates every option it decodes; nothing here
// needs them); err says why a header cut short, whose options run past
// the frame, or of another version does not decode.
func GENEVEHeader(data []byte) (next gopacket.LayerType, vni uint32, n int, err error) {
	if len(data) < geneveLen {
		return gopacket.LayerTypeZero, 0, 0, fmt.Errorf("geneve: %w: %d bytes, need %d", layers.ErrTruncated, len(data), geneveLen)
	}
	if v := data[0] >> 6; v != 0 {
		return gopacket.LayerTypeZero, 0, 0, fmt.Errorf("geneve: %w: version %d, want 0", layers.ErrBadHeader, v)
	}
	n = geneveLen + int(data[0]&0x3F)*4
	if len(data) < n {
		return gopacket.LayerTypeZero, 0, 0, fmt.Errorf("geneve: %w: options run to byte %d, past the %d bytes left", layers.ErrTruncated, n, len(data))
	}
	vni = uint32(data[4])<<16 | uint32(data[5])<<8 | uint32(data[6])
	return gplayers.EthernetType(binary.BigEndian.Uint16(data[2:4])).LayerType(), vni, n, nil
}

// decodeGENEVE decodes a GENEVE header.
func (d *Decoder) decodeGENEVE(data []byte) (gopacket.LayerType, []byte) {
	next, vni, n, err := GENEVEHeader(data)
	if err != nil {
		return d.pkt.badTunnel(err)
	}
	if !d.pkt.wrap(WrapGENEVE, vni, true) {
		return gopacket.LayerTypeZero, nil
	}
	d.carried = len(data) - n
	return next, data[n:]
}

// MPLSStack reads an MPLS label stack to its bottom: its top label, and
// what follows by its version nibble (IPv4 or IPv6), as routers go on;
// next is gopacket.LayerTypeZero for anything else. err says why a stack
// that ends without its bottom of stack (cut short, or no label has the
// S bit) does not decode. (gopacket's MPLS has no DecodingLayer.)
func MPLSStack(data []byte) (top uint32, next gopacket.LayerType, rest []byte, err error) {
	if len(data) < 4 {
		return 0, gopacket.LayerTypeZero, nil, fmt.Errorf("mpls: %w: %d bytes, need 4", layers.ErrTruncated, len(data))
	}
	top = binary.BigEndian.Uint32(data) >> 12
	for labels := 1; len(data) >= 4; labels++ {
		bottom := data[2]&1 != 0
		data = data[4:]
		if !bottom {
			if len(data) < 4 {
				return top, gopacket.LayerTypeZero, nil, fmt.Errorf("mpls: %w: no bottom of stack in %d labels", layers.ErrTruncated, labels)
			}
			continue
		}
		if len(data) > 0 {
			switch data[0] >> 4 {
			case 4:
				return top, gplayers.LayerTypeIPv4, data, nil
			case 6:
				return top, gplayers.LayerTypeIPv6, data, nil
			}
		}
		break
	}
	return top, gopacket.LayerTypeZero, nil, nil
}

// decodeMPLS decodes an MPLS label stack; its top label names it.
func (d *Decoder) decodeMPLS(data []byte) (gopacket.LayerType, []byte) {
	top, next, rest, err := MPLSStack(data)
	if err != nil {
		return d.pkt.badTunnel(err)
	}
	if !d.pkt.wrap(WrapMPLS, top, false) {
		return gopacket.LayerTypeZero, nil
	}
	return next, rest
}

// UDPTunnel is the encapsulation a UDP destination port carries.
func UDPTunnel(port gplayers.UDPPort) gopacket.LayerType {
	switch port {
	case 4789:
		return gplayers.LayerTypeVXLAN
	case 6081:
		return gplayers.LayerTypeGeneve
	}
	return gopacket.LayerTypeZero
}
