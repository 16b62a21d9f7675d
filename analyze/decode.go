package analyze

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

var errNoBTH = errors.New("no BTH")

// decode walks the headers of a frame. It returns the IB packet length
// from the BTH through the ICRC as the length fields give it (-1 unknown),
// and the network header the ICRC covers.
func (a *Analyzer) decode(linkType gplayers.LinkType, data []byte) (ibLen int, kind layers.NetworkKind, netHdr, udpHdr []byte) {
	p := &a.pkt
	ibLen = -1
	typ, ok := firstLayer(linkType, data)
	if !ok {
		return
	}
	fb := &a.fb
	frameLen := len(data)
	// A GRH or BTH is decoded even with nothing left: an RDMA packet cut
	// there is malformed, not another protocol.
	for len(data) > 0 || typ == layers.LayerTypeBTH || typ == layers.LayerTypeGRH {
		switch typ {
		case gplayers.LayerTypeEthernet:
			if a.eth.DecodeFromBytes(data, fb) != nil {
				return
			}
			typ, data = a.eth.NextLayerType(), a.eth.Payload
		case gplayers.LayerTypeLinuxSLL:
			if a.sll.DecodeFromBytes(data, fb) != nil {
				return
			}
			typ, data = a.sll.NextLayerType(), a.sll.Payload
		case gplayers.LayerTypeLinuxSLL2:
			if a.sll2.DecodeFromBytes(data, fb) != nil {
				return
			}
			typ, data = a.sll2.NextLayerType(), a.sll2.Payload
		case gplayers.LayerTypeDot1Q:
			if a.dot1q.DecodeFromBytes(data, fb) != nil {
				return
			}
			if p.VLAN < 0 {
				p.VLAN = int(a.dot1q.VLANIdentifier)
			}
			typ, data = a.dot1q.NextLayerType(), a.dot1q.Payload
		case gplayers.LayerTypeIPv4:
			if a.ip4.DecodeFromBytes(data, fb) != nil || a.ip4.Flags&gplayers.IPv4MoreFragments != 0 || a.ip4.FragOffset != 0 {
				return
			}
			p.Src.IP, _ = netip.AddrFromSlice(a.ip4.SrcIP.To4())
			p.Dst.IP, _ = netip.AddrFromSlice(a.ip4.DstIP.To4())
			p.ECN = a.ip4.TOS & 3
			a.lens.network(frameLen-len(data), int(a.ip4.Length), int(a.ip4.Length)-int(a.ip4.IHL)*4)
			p.IPID = a.ip4.Id
			kind, netHdr = layers.NetworkIPv4, a.ip4.Contents
			typ, data = a.ip4.NextLayerType(), a.ip4.Payload
		case gplayers.LayerTypeIPv6:
			if a.ip6.DecodeFromBytes(data, fb) != nil {
				return
			}
			p.Src.IP, _ = netip.AddrFromSlice(a.ip6.SrcIP)
			p.Dst.IP, _ = netip.AddrFromSlice(a.ip6.DstIP)
			p.ECN = a.ip6.TrafficClass & 3
			if a.ip6.Length > 0 { // 0: a jumbogram, its length elsewhere
				a.lens.network(frameLen-len(data), layers.GRHLen+int(a.ip6.Length), int(a.ip6.Length))
			}
			kind, netHdr = layers.NetworkIPv6, a.ip6.Contents
			typ, data = a.ip6.NextLayerType(), a.ip6.Payload
		case gplayers.LayerTypeUDP:
			if a.udp.DecodeFromBytes(data, fb) != nil || !a.isRoCEPort(uint16(a.udp.DstPort)) {
				return
			}
			p.IsRDMA, p.Encap = true, EncapRoCEv2
			if err := a.lens.checkUDP(int(a.udp.Length)); err != nil {
				p.Err = err
				return
			}
			udpHdr = a.udp.Contents
			ibLen = int(a.udp.Length) - 8
			typ, data = layers.LayerTypeBTH, a.udp.Payload
		case layers.LayerTypeERF:
			if err := a.ib.ERF.DecodeFromBytes(data, fb); err != nil {
				if a.ib.ERF.Type == layers.ERFTypeInfiniBand || a.ib.ERF.Type == layers.ERFTypeInfiniBandLink {
					p.IsRDMA, p.Err = true, err
				}
				return
			}
			a.lens.erf(int(a.ib.ERF.RLen), int(a.ib.ERF.WLen), len(a.ib.ERF.Contents), len(data))
			typ, data = a.ib.ERF.NextLayerType(), a.ib.ERF.Payload
			if typ != gopacket.LayerTypePayload { // a record type decoded further: its clock is trusted
				p.Time = a.ib.ERF.Time()
			}
		case layers.LayerTypeLRH:
			p.IsRDMA, p.Encap = true, EncapIB
			lrh := &a.ib.LRH
			if err := lrh.DecodeFromBytes(data, fb); err != nil {
				p.Err = err
				return
			}
			p.LRH = lrh
			p.Src = Addr{LID: lrh.SLID, IsLID: true}
			p.Dst = Addr{LID: lrh.DLID, IsLID: true}
			ibLen = int(lrh.PktLen)*4 - layers.LRHLen
			a.lens.network(frameLen-len(data), int(lrh.PktLen)*4+layers.VCRCLen, -1)
			if lrh.LNH == layers.LNHIBALocal {
				kind, netHdr = layers.NetworkLRH, lrh.Contents
			}
			if lrh.LNH < layers.LNHIBALocal {
				p.IsRDMA = false // raw/IPv6 over IB (IPoIB is not RDMA traffic)
				return
			}
			typ, data = lrh.NextLayerType(), lrh.Payload
		case layers.LayerTypeGRH:
			p.IsRDMA = true
			if p.Encap != EncapIB {
				p.Encap = EncapRoCEv1
			}
			grh := &a.ib.GRH
			if err := grh.DecodeFromBytes(data, fb); err != nil {
				p.Err = err
				return
			}
			p.GRH = grh
			// One host, one name: an IPv4-mapped GID is its IPv4
			// address (the ICRC still covers the GRH as captured).
			p.Src.IP, _ = netip.AddrFromSlice(grh.SGID)
			p.Dst.IP, _ = netip.AddrFromSlice(grh.DGID)
			p.Src.IP, p.Dst.IP = p.Src.IP.Unmap(), p.Dst.IP.Unmap()
			p.Src.IsLID, p.Dst.IsLID = false, false
			p.ECN = grh.TClass & 3
			kind, netHdr = layers.NetworkGRH, grh.Contents
			if p.Encap == EncapIB {
				ibLen -= layers.GRHLen
			} else {
				ibLen = int(grh.PayLen)
				a.lens.network(frameLen-len(data), layers.GRHLen+int(grh.PayLen), -1)
			}
			if grh.NxtHdr != layers.NxtHdrBTH {
				p.IsRDMA = false // IPoIB and other non-IBA payloads
				return
			}
			typ, data = layers.LayerTypeBTH, grh.Payload
		case layers.LayerTypeBTH:
			a.decodeTransport(data)
			return
		default:
			return
		}
	}
	if p.IsRDMA && p.BTH == nil && p.Err == nil {
		p.Err = fmt.Errorf("%s packet: %w", p.Encap, errNoBTH)
	}
	return
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

// decodeTransport decodes the BTH and the extension headers its opcode
// implies.
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
	// step decodes the next header; a header is shown in p only once it
	// decoded.
	step := func(l gopacket.DecodingLayer) bool {
		if err := l.DecodeFromBytes(rest, &a.fb); err != nil {
			if !bth.Truncated {
				p.Err = err
			}
			return false
		}
		typ, rest = l.NextLayerType(), l.LayerPayload()
		return true
	}
	for {
		ib := a.ib
		switch typ {
		case layers.LayerTypeRDETH:
			if !step(&ib.RDETH) {
				return
			}
			p.RDETH = &ib.RDETH
		case layers.LayerTypeDETH:
			if !step(&ib.DETH) {
				return
			}
			p.DETH = &ib.DETH
		case layers.LayerTypeXRCETH:
			if !step(&ib.XRCETH) {
				return
			}
			p.XRCETH = &ib.XRCETH
		case layers.LayerTypeRETH:
			if !step(&ib.RETH) {
				return
			}
			p.RETH = &ib.RETH
		case layers.LayerTypeAtomicETH:
			if !step(&ib.AtomicETH) {
				return
			}
			p.AtomicETH = &ib.AtomicETH
		case layers.LayerTypeAETH:
			if !step(&ib.AETH) {
				return
			}
			p.AETH = &ib.AETH
		case layers.LayerTypeAtomicAckETH:
			if !step(&ib.AtomicAckETH) {
				return
			}
			p.AtomicAckETH = &ib.AtomicAckETH
		case layers.LayerTypeImmDt:
			if !step(&ib.ImmDt) {
				return
			}
			p.ImmDt = &ib.ImmDt
		case layers.LayerTypeIETH:
			if !step(&ib.IETH) {
				return
			}
			p.IETH = &ib.IETH
		case layers.LayerTypeFETH:
			if !step(&ib.FETH) {
				return
			}
			p.FETH = &ib.FETH
		case layers.LayerTypeDCETH:
			if !step(&ib.DCETH) {
				return
			}
			p.DCETH = &ib.DCETH
		case layers.LayerTypeCNP:
			if !step(&ib.CNP) {
				return
			}
			p.CNP = &ib.CNP
		case layers.LayerTypeMAD:
			p.MAD = rest
			if !bth.Truncated && p.DETH != nil && len(rest) < cm.MADLen {
				// A datagram whole in its frame, yet short: not a MAD (madcheck.go).
				p.Err = fmt.Errorf("%s to QP%d: %w: %d-byte MAD, need %d", bth.Opcode, bth.DestQP, errShortMAD, len(rest), cm.MADLen)
			}
			return
		default:
			a.checkEmptyMAD()
			return
		}
	}
}
