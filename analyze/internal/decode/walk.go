package decode

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/layers"
)

var errNoBTH = errors.New("no BTH")

// frameHeaders is what the walk of a frame's headers keeps between them.
type frameHeaders struct {
	frameLen int                   // captured length of the frame, for the offsets of Lens
	tags     int                   // VLAN tags on the innermost Ethernet header so far
	outerTag uint16                // the first of them (a QinQ S-VLAN)
	tagType  gplayers.EthernetType // the EtherType in front of the next tag
	qinq     bool                  // the innermost Ethernet header is QinQ
	pcp      int8                  // the innermost tag's priority; -1 untagged
	dscp     int8                  // the innermost IP or GRH DSCP; -1 none
	other    Other                 // where the walk of a frame that is not RDMA stopped, if it knows (otherAt)
	// etherLast: an Ethernet header decoded after the last IP header (a
	// tunnel's inner frame), so that an inner IP header that does not
	// decode names the inner EtherType, not the outer IP's protocol.
	etherLast bool
}

// Decode decodes a frame of a link type, numbered frame, captured as ci
// says. Its original length is ci.Length unless that is above
// MaxOriginalLength (Headers.OrigLength then keeps it).
//
// It walks the headers of the frame, one method per header: each decodes
// its header into the Decoder's layer, shows it in the Packet and returns
// the next layer type and its bytes, or gopacket.LayerTypeZero to stop.
//
// Why not a gopacket.DecodingLayerParser over layers.TransportLayers (as
// shared/DESIGN.md first planned): the parser ends at the first header
// with nothing after it, but a GRH or BTH cut there is a malformed RDMA
// packet, not another protocol; it follows UDP ports through gopacket's
// global registry, where the --decode-as ports of one Decoder cannot go;
// it decodes the first fragment of a fragmented IPv4 datagram on as a
// whole one; it returns the error without the header that raised it, yet
// whether an error makes the frame malformed depends on that header (an
// Ethernet or IP error: another protocol; an ERF error only for an
// InfiniBand record; an extension header only when the frame was not cut);
// and each header's fields (addresses, ECN, lengths, the ERF clock) would
// still need a switch over the decoded types afterwards. The switch below
// is that switch, with the decoding in it.
func (d *Decoder) Decode(frame uint64, ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte) *Packet {
	p := &d.pkt
	// Cleared, then set: a composite literal was built on the stack and
	// copied (170 instructions a frame, 5 % of the run).
	*p = Packet{}
	p.Frame, p.Time, p.Length, p.CapLength, p.VLAN, p.PayloadLen, p.Wraps = frame, ci.Timestamp, ClampOriginalLength(ci.Length, len(data)), len(data), -1, -1, d.wraps[:0]
	p.CarriedLength = p.Length
	d.fb = feedback{}
	// Of Headers, only what the walk may leave: it sets SrcMAC with a
	// MAC Control header, and Other for a frame that is not RDMA, unless
	// the Decoder does not decode its link type (Other then stays the
	// last frame's, as the Analyzer always counted it). The walk sets
	// IBLen, Network, NetHdr and UDPHdr in place, not in frameHeaders:
	// nothing to copy after it.
	hd := &d.hdr
	hd.Lens = Lens{}
	hd.OrigLength = ci.Length
	hd.IBLen, hd.Network, hd.NetHdr, hd.UDPHdr = -1, 0, nil, nil
	d.carried = -1
	h := frameHeaders{frameLen: len(data), pcp: -1, dscp: -1}
	typ, ok := firstLayer(linkType, data)
	if !ok {
		return p
	}
	// A GRH or BTH is decoded even with nothing left: an RDMA packet cut
	// there is malformed, not another protocol.
	for typ != gopacket.LayerTypeZero && (len(data) > 0 || typ == layers.LayerTypeBTH || typ == layers.LayerTypeGRH) {
		// The headers of plain RoCE v2 first, in a switch of their own:
		// the walk visits them for nearly every frame.
		switch typ {
		case gplayers.LayerTypeEthernet:
			typ, data = d.decodeEthernet(&h, data)
		case gplayers.LayerTypeIPv4:
			typ, data = d.decodeIPv4(&h, data)
		case gplayers.LayerTypeUDP:
			typ, data = d.decodeUDP(&h, data)
		case layers.LayerTypeBTH:
			d.decodeTransport(data)
			typ = gopacket.LayerTypeZero
		default:
			typ, data = d.decodeOther(&h, typ, data)
		}
	}
	// Every header that stops the walk leaves the packet not RDMA, in
	// error, or with its BTH: this only names an RDMA packet whose headers
	// ended before a BTH.
	if p.IsRDMA {
		if p.BTH == nil && p.Err == nil {
			p.Err = fmt.Errorf("%s packet: %w", p.Encap, errNoBTH)
		}
		if hd.Lens.badRecord && p.Err == nil {
			p.Err = hd.Lens.recordErr(p.Encap)
		}
	} else {
		hd.Other = d.otherAt(&h, linkType)
	}
	p.Priority = d.priority(&h)
	if d.carried >= 0 {
		p.CarriedLength -= h.frameLen - d.carried
	}
	return p
}

// decodeOther decodes a header of type typ other than those of plain
// RoCE v2, for Decode's walk.
func (d *Decoder) decodeOther(h *frameHeaders, typ gopacket.LayerType, data []byte) (gopacket.LayerType, []byte) {
	switch typ {
	case gplayers.LayerTypeLinuxSLL:
		typ, rest := d.decodeLink(&d.sll, data)
		if typ != gopacket.LayerTypeZero {
			h.tagType = d.sll.EthernetType // the protocol a frame that is not RDMA is counted under (otherAt)
		}
		return typ, rest
	case gplayers.LayerTypeLinuxSLL2:
		typ, rest := d.decodeLink(&d.sll2, data)
		if typ != gopacket.LayerTypeZero {
			h.tagType = d.sll2.ProtocolType
		}
		return typ, rest
	case gplayers.LayerTypeDot1Q:
		return d.decodeDot1Q(h, data)
	case gplayers.LayerTypeIPv6:
		return d.decodeIPv6(h, data)
	case layers.LayerTypeERF:
		return d.decodeERF(data)
	case layers.LayerTypeLRH:
		return d.decodeLRH(h, data)
	case layers.LayerTypeGRH:
		return d.decodeGRH(h, data)
	case gplayers.LayerTypeGRE:
		return d.decodeGRE(data)
	case gplayers.LayerTypeERSPANII:
		return d.decodeERSPANII(data)
	case layers.LayerTypeERSPANIII:
		return d.decodeERSPANIII(data)
	case gplayers.LayerTypeVXLAN:
		return d.decodeVXLAN(data)
	case gplayers.LayerTypeGeneve:
		return d.decodeGENEVE(data)
	case gplayers.LayerTypeMPLS:
		return d.decodeMPLS(data)
	case layers.LayerTypeMACControl:
		d.decodeMACControl(data)
	}
	h.other = d.otherStop(h, typ, data)
	return gopacket.LayerTypeZero, data
}

// decodeLink decodes a link header that shows nothing in the Packet.
func (d *Decoder) decodeLink(l gopacket.DecodingLayer, data []byte) (gopacket.LayerType, []byte) {
	if l.DecodeFromBytes(data, &d.fb) != nil {
		return gopacket.LayerTypeZero, nil
	}
	return l.NextLayerType(), l.LayerPayload()
}

// decodeEthernet decodes an Ethernet header: the frame's, or one an
// encapsulation carries, whose VLAN tags are then the packet's.
func (d *Decoder) decodeEthernet(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	e := &d.eth
	if e.DecodeFromBytes(data, &d.fb) != nil {
		return gopacket.LayerTypeZero, nil
	}
	h.tags, h.qinq, h.pcp, h.tagType, h.etherLast = 0, false, -1, e.EthernetType, d.hdr.Network != 0
	d.pkt.VLAN = -1
	return e.NextLayerType(), e.Payload
}

// decodeDot1Q decodes an 802.1Q or 802.1ad tag. The innermost tag is the
// packet's VLAN (under a QinQ S-tag, the customer's). An 802.1ad S-tag
// (EtherType 0x88A8), or a second tag on one Ethernet header, makes the
// frame QinQ, its first tag the S-VLAN.
func (d *Decoder) decodeDot1Q(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	if d.dot1q.DecodeFromBytes(data, &d.fb) != nil {
		return gopacket.LayerTypeZero, nil
	}
	h.tags++
	if h.tags == 1 {
		h.outerTag = d.dot1q.VLANIdentifier
	}
	if !h.qinq && (h.tags == 2 || h.tagType == gplayers.EthernetTypeQinQ) {
		h.qinq = true
		if !d.pkt.wrap(WrapQinQ, uint32(h.outerTag), false) {
			return gopacket.LayerTypeZero, nil
		}
	}
	h.tagType = d.dot1q.Type
	h.pcp = int8(d.dot1q.Priority)
	d.pkt.VLAN = int(d.dot1q.VLANIdentifier)
	return d.dot1q.NextLayerType(), d.dot1q.Payload
}

// decodeIPv4 decodes an IPv4 header; a fragment is not followed.
func (d *Decoder) decodeIPv4(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	ip := &d.ip4
	if ip.DecodeFromBytes(data, &d.fb) != nil || ip.Flags&gplayers.IPv4MoreFragments != 0 || ip.FragOffset != 0 {
		return gopacket.LayerTypeZero, nil
	}
	p := &d.pkt
	p.Src.IP, _ = netip.AddrFromSlice(ip.SrcIP.To4())
	p.Dst.IP, _ = netip.AddrFromSlice(ip.DstIP.To4())
	p.ECN = ip.TOS & 3
	h.dscp = int8(ip.TOS >> 2)
	d.hdr.Lens.network(h.frameLen-len(data), int(ip.Length), int(ip.Length)-int(ip.IHL)*4)
	p.IPID, p.HopLimit = ip.Id, ip.TTL
	d.hdr.Network, d.hdr.NetHdr, h.etherLast = layers.NetworkIPv4, ip.Contents, false
	return ip.NextLayerType(), ip.Payload
}

// decodeIPv6 decodes an IPv6 header.
func (d *Decoder) decodeIPv6(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	ip := &d.ip6
	if ip.DecodeFromBytes(data, &d.fb) != nil {
		return gopacket.LayerTypeZero, nil
	}
	p := &d.pkt
	p.Src.IP, _ = netip.AddrFromSlice(ip.SrcIP)
	p.Dst.IP, _ = netip.AddrFromSlice(ip.DstIP)
	p.ECN = ip.TrafficClass & 3
	p.HopLimit, p.FlowLabel = ip.HopLimit, ip.FlowLabel
	h.dscp = int8(ip.TrafficClass >> 2)
	if ip.Length > 0 { // 0: a jumbogram, its length elsewhere
		d.hdr.Lens.network(h.frameLen-len(data), layers.GRHLen+int(ip.Length), int(ip.Length))
	}
	d.hdr.Network, d.hdr.NetHdr, h.etherLast = layers.NetworkIPv6, ip.Contents, false
	return ip.NextLayerType(), ip.Payload
}

// decodeUDP decodes a UDP header; to a RoCE port, a BTH follows.
func (d *Decoder) decodeUDP(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	udp := &d.udp
	if udp.DecodeFromBytes(data, &d.fb) != nil {
		return gopacket.LayerTypeZero, nil
	}
	if !d.IsRoCEPort(uint16(udp.DstPort)) {
		next := UDPTunnel(udp.DstPort)
		if next == gopacket.LayerTypeZero {
			h.other = Other{OtherUDP, servicePort(uint16(udp.SrcPort), uint16(udp.DstPort))}
		}
		return next, udp.Payload
	}
	p := &d.pkt
	p.IsRDMA, p.Encap = true, EncapRoCEv2
	if err := d.hdr.Lens.checkUDP(int(udp.Length)); err != nil {
		p.Err = err
		return gopacket.LayerTypeZero, nil
	}
	d.hdr.UDPHdr = udp.Contents
	d.hdr.IBLen = int(udp.Length) - 8
	return layers.LayerTypeBTH, udp.Payload
}

// decodeERF decodes an ERF record header; an InfiniBand record that does
// not decode is a malformed RDMA packet.
func (d *Decoder) decodeERF(data []byte) (gopacket.LayerType, []byte) {
	erf := &d.ib.ERF
	p := &d.pkt
	if err := erf.DecodeFromBytes(data, &d.fb); err != nil {
		if erf.Type == layers.ERFTypeInfiniBand || erf.Type == layers.ERFTypeInfiniBandLink {
			p.IsRDMA, p.Err = true, err
		}
		return gopacket.LayerTypeZero, nil
	}
	d.hdr.Lens.erf(int(erf.RLen), int(erf.WLen), len(erf.Contents), len(data))
	typ := erf.NextLayerType()
	if typ != gopacket.LayerTypePayload { // a record type decoded further: its clock is trusted
		p.Time = erf.Time()
	}
	return typ, erf.Payload
}

// decodeLRH decodes a native InfiniBand LRH; raw and IPv6 payloads
// (IPoIB) are not RDMA traffic.
func (d *Decoder) decodeLRH(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	p := &d.pkt
	p.IsRDMA, p.Encap = true, EncapIB
	lrh := &d.ib.LRH
	if err := lrh.DecodeFromBytes(data, &d.fb); err != nil {
		p.Err = err
		return gopacket.LayerTypeZero, nil
	}
	p.LRH = lrh
	p.Src = Addr{LID: lrh.SLID, IsLID: true}
	p.Dst = Addr{LID: lrh.DLID, IsLID: true}
	d.hdr.IBLen = int(lrh.PktLen)*4 - layers.LRHLen
	d.hdr.Lens.network(h.frameLen-len(data), int(lrh.PktLen)*4+layers.VCRCLen, -1)
	if lrh.LNH == layers.LNHIBALocal {
		d.hdr.Network, d.hdr.NetHdr = layers.NetworkLRH, lrh.Contents
	}
	if lrh.LNH < layers.LNHIBALocal {
		p.IsRDMA = false // raw/IPv6 over IB (IPoIB is not RDMA traffic)
		return gopacket.LayerTypeZero, nil
	}
	return lrh.NextLayerType(), lrh.Payload
}

// decodeGRH decodes a GRH: the network header of RoCE v1, or the global
// route of a native IB packet.
func (d *Decoder) decodeGRH(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	p := &d.pkt
	p.IsRDMA = true
	if p.Encap != EncapIB {
		p.Encap = EncapRoCEv1
	}
	grh := &d.ib.GRH
	if err := grh.DecodeFromBytes(data, &d.fb); err != nil {
		p.Err = err
		return gopacket.LayerTypeZero, nil
	}
	p.GRH = grh
	// One host, one name: an IPv4-mapped GID is its IPv4
	// address (the ICRC still covers the GRH as captured).
	p.Src.IP, _ = netip.AddrFromSlice(grh.SGID)
	p.Dst.IP, _ = netip.AddrFromSlice(grh.DGID)
	p.Src.IP, p.Dst.IP = p.Src.IP.Unmap(), p.Dst.IP.Unmap()
	p.Src.IsLID, p.Dst.IsLID = false, false
	p.ECN = grh.TClass & 3
	p.HopLimit, p.FlowLabel = grh.HopLmt, grh.FlowLabel
	if p.Encap != EncapIB {
		h.dscp = int8(grh.TClass >> 2)
	}
	d.hdr.Network, d.hdr.NetHdr = layers.NetworkGRH, grh.Contents
	if p.Encap == EncapIB {
		d.hdr.IBLen -= layers.GRHLen
	} else {
		d.hdr.IBLen = int(grh.PayLen)
		d.hdr.Lens.network(h.frameLen-len(data), layers.GRHLen+int(grh.PayLen), -1)
	}
	if grh.NxtHdr != layers.NxtHdrBTH {
		p.IsRDMA = false // IPoIB and other non-IBA payloads
		return gopacket.LayerTypeZero, nil
	}
	return layers.LayerTypeBTH, grh.Payload
}
