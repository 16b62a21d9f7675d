package analyze

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/layers"
)

var errNoBTH = errors.New("no BTH")

// frameHeaders is what decode learns for the checks after it: the IB
// packet length from the BTH through the ICRC as the length fields give
// it (-1 unknown), and the network and UDP headers the ICRC covers.
type frameHeaders struct {
	frameLen int // captured length of the frame, for the offsets of frameLens
	ibLen    int
	kind     layers.NetworkKind
	netHdr   []byte
	udpHdr   []byte
	tags     int                   // VLAN tags on the innermost Ethernet header so far
	outerTag uint16                // the first of them (a QinQ S-VLAN)
	tagType  gplayers.EthernetType // the EtherType in front of the next tag
	qinq     bool                  // the innermost Ethernet header is QinQ
	pcp      int8                  // the innermost tag's priority; -1 untagged
	dscp     int8                  // the innermost IP or GRH DSCP; -1 none
	other    otherKey              // where the walk of a frame that is not RDMA stopped, if it knows (otherAt)
	// etherLast: an Ethernet header decoded after the last IP header (a
	// tunnel's inner frame), so that an inner IP header that does not
	// decode names the inner EtherType, not the outer IP's protocol.
	etherLast bool
}

// decode walks the headers of a frame, one method per header: each
// decodes its header into the Analyzer's layer, shows it in the Packet and
// returns the next layer type and its bytes, or gopacket.LayerTypeZero
// to stop.
//
// Why not a gopacket.DecodingLayerParser over layers.TransportLayers (as
// shared/DESIGN.md first planned): the parser ends at the first header
// with nothing after it, but a GRH or BTH cut there is a malformed RDMA
// packet, not another protocol; it follows UDP ports through gopacket's
// global registry, where the --decode-as ports of one Analyzer cannot go;
// it decodes the first fragment of a fragmented IPv4 datagram on as a
// whole one; it returns the error without the header that raised it, yet
// whether an error makes the frame malformed depends on that header (an
// Ethernet or IP error: another protocol; an ERF error only for an
// InfiniBand record; an extension header only when the frame was not cut);
// and each header's fields (addresses, ECN, lengths, the ERF clock) would
// still need a switch over the decoded types afterwards. The switch below
// is that switch, with the decoding in it.
func (a *Analyzer) decode(linkType gplayers.LinkType, data []byte) (ibLen int, kind layers.NetworkKind, netHdr, udpHdr []byte) {
	p := &a.pkt
	h := frameHeaders{frameLen: len(data), ibLen: -1, pcp: -1, dscp: -1}
	typ, ok := firstLayer(linkType, data)
	if !ok {
		return h.ibLen, h.kind, h.netHdr, h.udpHdr
	}
	// A GRH or BTH is decoded even with nothing left: an RDMA packet cut
	// there is malformed, not another protocol.
	for typ != gopacket.LayerTypeZero && (len(data) > 0 || typ == layers.LayerTypeBTH || typ == layers.LayerTypeGRH) {
		// The headers of plain RoCE v2 first, in a switch of their own:
		// the walk visits them for nearly every frame.
		switch typ {
		case gplayers.LayerTypeEthernet:
			typ, data = a.decodeEthernet(&h, data)
		case gplayers.LayerTypeIPv4:
			typ, data = a.decodeIPv4(&h, data)
		case gplayers.LayerTypeUDP:
			typ, data = a.decodeUDP(&h, data)
		case layers.LayerTypeBTH:
			a.decodeTransport(data)
			typ = gopacket.LayerTypeZero
		default:
			typ, data = a.decodeOther(&h, typ, data)
		}
	}
	// Every header that stops the walk leaves the packet not RDMA, in
	// error, or with its BTH: this only names an RDMA packet whose headers
	// ended before a BTH.
	if p.IsRDMA {
		if p.BTH == nil && p.Err == nil {
			p.Err = fmt.Errorf("%s packet: %w", p.Encap, errNoBTH)
		}
	} else {
		a.other = a.otherAt(&h, linkType)
	}
	p.Priority = a.priority(&h)
	return h.ibLen, h.kind, h.netHdr, h.udpHdr
}

// decodeOther decodes a header of type typ other than those of plain
// RoCE v2, for decode's walk.
func (a *Analyzer) decodeOther(h *frameHeaders, typ gopacket.LayerType, data []byte) (gopacket.LayerType, []byte) {
	switch typ {
	case gplayers.LayerTypeLinuxSLL:
		typ, rest := a.decodeLink(&a.sll, data)
		if typ != gopacket.LayerTypeZero {
			h.tagType = a.sll.EthernetType // the protocol a frame that is not RDMA is counted under (otherAt)
		}
		return typ, rest
	case gplayers.LayerTypeLinuxSLL2:
		typ, rest := a.decodeLink(&a.sll2, data)
		if typ != gopacket.LayerTypeZero {
			h.tagType = a.sll2.ProtocolType
		}
		return typ, rest
	case gplayers.LayerTypeDot1Q:
		return a.decodeDot1Q(h, data)
	case gplayers.LayerTypeIPv6:
		return a.decodeIPv6(h, data)
	case layers.LayerTypeERF:
		return a.decodeERF(data)
	case layers.LayerTypeLRH:
		return a.decodeLRH(h, data)
	case layers.LayerTypeGRH:
		return a.decodeGRH(h, data)
	case gplayers.LayerTypeGRE:
		return a.decodeGRE(data)
	case gplayers.LayerTypeERSPANII:
		return a.decodeERSPANII(data)
	case layers.LayerTypeERSPANIII:
		return a.decodeERSPANIII(data)
	case gplayers.LayerTypeVXLAN:
		return a.decodeVXLAN(data)
	case gplayers.LayerTypeGeneve:
		return a.decodeGENEVE(data)
	case gplayers.LayerTypeMPLS:
		return a.decodeMPLS(data)
	case layers.LayerTypeMACControl:
		a.decodeMACControl(data)
	}
	h.other = a.otherStop(h, typ, data)
	return gopacket.LayerTypeZero, data
}

// decodeLink decodes a link header that shows nothing in the Packet.
func (a *Analyzer) decodeLink(l gopacket.DecodingLayer, data []byte) (gopacket.LayerType, []byte) {
	if l.DecodeFromBytes(data, &a.fb) != nil {
		return gopacket.LayerTypeZero, nil
	}
	return l.NextLayerType(), l.LayerPayload()
}

// decodeEthernet decodes an Ethernet header: the frame's, or one an
// encapsulation carries, whose VLAN tags are then the packet's.
func (a *Analyzer) decodeEthernet(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	e := &a.eth
	if e.DecodeFromBytes(data, &a.fb) != nil {
		return gopacket.LayerTypeZero, nil
	}
	h.tags, h.qinq, h.pcp, h.tagType, h.etherLast = 0, false, -1, e.EthernetType, h.kind != 0
	a.pkt.VLAN = -1
	return e.NextLayerType(), e.Payload
}

// decodeDot1Q decodes an 802.1Q or 802.1ad tag. The innermost tag is the
// packet's VLAN (under a QinQ S-tag, the customer's). An 802.1ad S-tag
// (EtherType 0x88A8), or a second tag on one Ethernet header, makes the
// frame QinQ, its first tag the S-VLAN.
func (a *Analyzer) decodeDot1Q(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	if a.dot1q.DecodeFromBytes(data, &a.fb) != nil {
		return gopacket.LayerTypeZero, nil
	}
	h.tags++
	if h.tags == 1 {
		h.outerTag = a.dot1q.VLANIdentifier
	}
	if !h.qinq && (h.tags == 2 || h.tagType == gplayers.EthernetTypeQinQ) {
		h.qinq = true
		if !a.wrap(WrapQinQ, uint32(h.outerTag), false) {
			return gopacket.LayerTypeZero, nil
		}
	}
	h.tagType = a.dot1q.Type
	h.pcp = int8(a.dot1q.Priority)
	a.pkt.VLAN = int(a.dot1q.VLANIdentifier)
	return a.dot1q.NextLayerType(), a.dot1q.Payload
}

// decodeIPv4 decodes an IPv4 header; a fragment is not followed.
func (a *Analyzer) decodeIPv4(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	ip := &a.ip4
	if ip.DecodeFromBytes(data, &a.fb) != nil || ip.Flags&gplayers.IPv4MoreFragments != 0 || ip.FragOffset != 0 {
		return gopacket.LayerTypeZero, nil
	}
	p := &a.pkt
	p.Src.IP, _ = netip.AddrFromSlice(ip.SrcIP.To4())
	p.Dst.IP, _ = netip.AddrFromSlice(ip.DstIP.To4())
	p.ECN = ip.TOS & 3
	h.dscp = int8(ip.TOS >> 2)
	a.lens.network(h.frameLen-len(data), int(ip.Length), int(ip.Length)-int(ip.IHL)*4)
	p.IPID, p.HopLimit = ip.Id, ip.TTL
	h.kind, h.netHdr, h.etherLast = layers.NetworkIPv4, ip.Contents, false
	return ip.NextLayerType(), ip.Payload
}

// decodeIPv6 decodes an IPv6 header.
func (a *Analyzer) decodeIPv6(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	ip := &a.ip6
	if ip.DecodeFromBytes(data, &a.fb) != nil {
		return gopacket.LayerTypeZero, nil
	}
	p := &a.pkt
	p.Src.IP, _ = netip.AddrFromSlice(ip.SrcIP)
	p.Dst.IP, _ = netip.AddrFromSlice(ip.DstIP)
	p.ECN = ip.TrafficClass & 3
	p.HopLimit, p.FlowLabel = ip.HopLimit, ip.FlowLabel
	h.dscp = int8(ip.TrafficClass >> 2)
	if ip.Length > 0 { // 0: a jumbogram, its length elsewhere
		a.lens.network(h.frameLen-len(data), layers.GRHLen+int(ip.Length), int(ip.Length))
	}
	h.kind, h.netHdr, h.etherLast = layers.NetworkIPv6, ip.Contents, false
	return ip.NextLayerType(), ip.Payload
}

// decodeUDP decodes a UDP header; to a RoCE port, a BTH follows.
func (a *Analyzer) decodeUDP(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	udp := &a.udp
	if udp.DecodeFromBytes(data, &a.fb) != nil {
		return gopacket.LayerTypeZero, nil
	}
	if !a.isRoCEPort(uint16(udp.DstPort)) {
		next := udpTunnel(udp.DstPort)
		if next == gopacket.LayerTypeZero {
			h.other = otherKey{otherUDP, servicePort(uint16(udp.SrcPort), uint16(udp.DstPort))}
		}
		return next, udp.Payload
	}
	p := &a.pkt
	p.IsRDMA, p.Encap = true, EncapRoCEv2
	if err := a.lens.checkUDP(int(udp.Length)); err != nil {
		p.Err = err
		return gopacket.LayerTypeZero, nil
	}
	h.udpHdr = udp.Contents
	h.ibLen = int(udp.Length) - 8
	return layers.LayerTypeBTH, udp.Payload
}

// decodeERF decodes an ERF record header; an InfiniBand record that does
// not decode is a malformed RDMA packet.
func (a *Analyzer) decodeERF(data []byte) (gopacket.LayerType, []byte) {
	erf := &a.ib.ERF
	p := &a.pkt
	if err := erf.DecodeFromBytes(data, &a.fb); err != nil {
		if erf.Type == layers.ERFTypeInfiniBand || erf.Type == layers.ERFTypeInfiniBandLink {
			p.IsRDMA, p.Err = true, err
		}
		return gopacket.LayerTypeZero, nil
	}
	a.lens.erf(int(erf.RLen), int(erf.WLen), len(erf.Contents), len(data))
	typ := erf.NextLayerType()
	if typ != gopacket.LayerTypePayload { // a record type decoded further: its clock is trusted
		p.Time = erf.Time()
	}
	return typ, erf.Payload
}

// decodeLRH decodes a native InfiniBand LRH; raw and IPv6 payloads
// (IPoIB) are not RDMA traffic.
func (a *Analyzer) decodeLRH(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	p := &a.pkt
	p.IsRDMA, p.Encap = true, EncapIB
	lrh := &a.ib.LRH
	if err := lrh.DecodeFromBytes(data, &a.fb); err != nil {
		p.Err = err
		return gopacket.LayerTypeZero, nil
	}
	p.LRH = lrh
	p.Src = Addr{LID: lrh.SLID, IsLID: true}
	p.Dst = Addr{LID: lrh.DLID, IsLID: true}
	h.ibLen = int(lrh.PktLen)*4 - layers.LRHLen
	a.lens.network(h.frameLen-len(data), int(lrh.PktLen)*4+layers.VCRCLen, -1)
	if lrh.LNH == layers.LNHIBALocal {
		h.kind, h.netHdr = layers.NetworkLRH, lrh.Contents
	}
	if lrh.LNH < layers.LNHIBALocal {
		p.IsRDMA = false // raw/IPv6 over IB (IPoIB is not RDMA traffic)
		return gopacket.LayerTypeZero, nil
	}
	return lrh.NextLayerType(), lrh.Payload
}

// decodeGRH decodes a GRH: the network header of RoCE v1, or the global
// route of a native IB packet.
func (a *Analyzer) decodeGRH(h *frameHeaders, data []byte) (gopacket.LayerType, []byte) {
	p := &a.pkt
	p.IsRDMA = true
	if p.Encap != EncapIB {
		p.Encap = EncapRoCEv1
	}
	grh := &a.ib.GRH
	if err := grh.DecodeFromBytes(data, &a.fb); err != nil {
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
	h.kind, h.netHdr = layers.NetworkGRH, grh.Contents
	if p.Encap == EncapIB {
		h.ibLen -= layers.GRHLen
	} else {
		h.ibLen = int(grh.PayLen)
		a.lens.network(h.frameLen-len(data), layers.GRHLen+int(grh.PayLen), -1)
	}
	if grh.NxtHdr != layers.NxtHdrBTH {
		p.IsRDMA = false // IPoIB and other non-IBA payloads
		return gopacket.LayerTypeZero, nil
	}
	return layers.LayerTypeBTH, grh.Payload
}

// firstLayer returns the layer a frame of the link type starts with.
func firstLayer(lt gplayers.LinkType, data []byte) (gopacket.LayerType, bool) {
	switch lt {
	case gplayers.LinkTypeEthernet:
		return gplayers.LayerTypeEthernet, true
	case layers.LinkTypeInfiniBand:
		return layers.LayerTypeLRH, true
	case layers.LinkTypeERF:
		return layers.LayerTypeERF, true
	case gplayers.LinkTypeLinuxSLL:
		return gplayers.LayerTypeLinuxSLL, true
	case gplayers.LinkTypeLinuxSLL2:
		return gplayers.LayerTypeLinuxSLL2, true
	case gplayers.LinkTypeRaw: // IPv4 or IPv6, as the version nibble says
		if len(data) > 0 && data[0]>>4 == 6 {
			return gplayers.LayerTypeIPv6, true
		}
		return gplayers.LayerTypeIPv4, true
	case gplayers.LinkTypeIPv4:
		return gplayers.LayerTypeIPv4, true
	case gplayers.LinkTypeIPv6:
		return gplayers.LayerTypeIPv6, true
	}
	return 0, false
}

// SupportsLinkType reports whether the Analyzer decodes frames of a link
// type; frames of other link types are counted as other packets.
func SupportsLinkType(lt gplayers.LinkType) bool {
	_, ok := firstLayer(lt, nil)
	return ok
}

func (a *Analyzer) isRoCEPort(port uint16) bool {
	if port == uint16(layers.UDPPortRoCEv2) {
		return true
	}
	for _, p := range a.opts.RoCEPorts {
		if p == port {
			return true
		}
	}
	return false
}
