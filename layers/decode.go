package layers

import (
	"fmt"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// newExtHeader returns a fresh extension header layer linked to bth.
func newExtHeader(t gopacket.LayerType, bth *BTH) gopacket.DecodingLayer {
	link := extLink{bth: bth}
	switch t {
	case LayerTypeRDETH:
		return &RDETH{extLink: link}
	case LayerTypeDETH:
		return &DETH{extLink: link}
	case LayerTypeXRCETH:
		return &XRCETH{extLink: link}
	case LayerTypeRETH:
		return &RETH{extLink: link}
	case LayerTypeAtomicETH:
		return &AtomicETH{extLink: link}
	case LayerTypeAETH:
		return &AETH{extLink: link}
	case LayerTypeAtomicAckETH:
		return &AtomicAckETH{extLink: link}
	case LayerTypeImmDt:
		return &ImmDt{extLink: link}
	case LayerTypeIETH:
		return &IETH{extLink: link}
	case LayerTypeFETH:
		return &FETH{extLink: link}
	case LayerTypeDCETH:
		return &DCETH{extLink: link}
	case LayerTypeCNP:
		return &CNP{extLink: link}
	}
	return nil
}

// decodeBTH is the gopacket decoder for a whole IB transport packet: the
// BTH, the extension headers its opcode implies, the payload (a MAD for
// QP0/QP1 traffic) and the ICRC, checked against the packet's network
// header.
func decodeBTH(data []byte, p gopacket.PacketBuilder) error {
	bth := &BTH{}
	err := bth.DecodeFromBytes(data, p)
	if len(data) >= BTHLen {
		// A BTH too short to hold its 12 bytes is not added: its
		// zeroed fields would read as a decoded header.
		p.AddLayer(bth)
	}
	if err != nil {
		return err
	}
	if !bth.Opcode.Known() {
		return fmt.Errorf("bth: %w 0x%02x: extension headers and payload not decoded", ErrUnknownOpcode, uint8(bth.Opcode))
	}
	rest := bth.Payload
	for _, t := range bth.Headers() {
		l := newExtHeader(t, bth)
		if err := l.DecodeFromBytes(rest, p); err != nil {
			return err
		}
		p.AddLayer(l.(gopacket.Layer))
		rest = l.LayerPayload()
	}
	var payloadErr error
	if len(rest) > 0 {
		if bth.carriesMAD() {
			payloadErr = LayerTypeMAD.Decode(rest, p)
		} else {
			payload := gopacket.Payload(rest)
			p.AddLayer(&payload)
			p.SetApplicationLayer(&payload)
		}
	}
	if bth.Trailer != nil {
		icrc := &ICRC{}
		if err := icrc.DecodeFromBytes(bth.Trailer, p); err != nil {
			return err
		}
		kind, netHdr, udpHdr := networkOf(p)
		r := CheckICRC(kind, netHdr, udpHdr, bth)
		icrc.Status, icrc.Expected = r.Status, r.Expected
		p.AddLayer(icrc)
	}
	return payloadErr
}

// networkOf finds, among the layers decoded so far, the network header the
// ICRC covers: the last IPv4/IPv6 (with its UDP), GRH or LRH.
func networkOf(p gopacket.PacketBuilder) (NetworkKind, []byte, []byte) {
	pkt, ok := p.(gopacket.Packet)
	if !ok {
		return NetworkNone, nil, nil
	}
	kind, netHdr, udpHdr := NetworkNone, []byte(nil), []byte(nil)
	for _, l := range pkt.Layers() {
		switch v := l.(type) {
		case *gplayers.IPv4:
			kind, netHdr, udpHdr = NetworkIPv4, v.Contents, nil
		case *gplayers.IPv6:
			kind, netHdr, udpHdr = NetworkIPv6, v.Contents, nil
		case *gplayers.UDP:
			udpHdr = v.Contents
		case *GRH:
			kind, netHdr = NetworkGRH, v.Contents
		case *LRH:
			if v.LNH == LNHIBALocal {
				kind, netHdr = NetworkLRH, v.Contents
			}
		}
	}
	return kind, netHdr, udpHdr
}

func decodeGRH(data []byte, p gopacket.PacketBuilder) error {
	grh := &GRH{}
	err := grh.DecodeFromBytes(data, p)
	p.AddLayer(grh)
	if err != nil {
		return err
	}
	p.SetNetworkLayer(grh)
	if len(grh.Payload) == 0 {
		if grh.PayLen > 0 {
			return fmt.Errorf("grh: %w: nothing captured of its %d-byte payload", ErrTruncated, grh.PayLen)
		}
		return nil
	}
	if grh.NxtHdr == NxtHdrBTH {
		// Decoded at once, not through p.NextDecoder, so that an LRH
		// decoding this GRH can add the VCRC after the whole packet even
		// when the packet is decoded lazily.
		return decodeBTH(grh.Payload, p)
	}
	return p.NextDecoder(grh.NextLayerType())
}

func decodeLRH(data []byte, p gopacket.PacketBuilder) error {
	lrh := &LRH{}
	err := lrh.DecodeFromBytes(data, p)
	p.AddLayer(lrh)
	if err != nil {
		return err
	}
	if len(lrh.Payload) == 0 && int(lrh.PktLen)*4 > LRHLen {
		return fmt.Errorf("lrh: %w: nothing captured after the LRH", ErrTruncated)
	}
	// The layers inside are decoded at once (GRH and BTH do not defer to
	// p.NextDecoder), so that the VCRC comes last. (A raw IPv6 packet
	// decoded lazily ends after its IPv6 header.)
	var innerErr error
	if len(lrh.Payload) > 0 {
		innerErr = lrh.NextLayerType().Decode(lrh.Payload, p)
	}
	if lrh.Trailer != nil {
		vcrc := &VCRC{}
		if err := vcrc.DecodeFromBytes(lrh.Trailer, p); err != nil {
			return err
		}
		r := lrh.CheckVCRC()
		vcrc.Status, vcrc.Expected = r.Status, r.Expected
		p.AddLayer(vcrc)
	}
	return innerErr
}

func decodeERF(data []byte, p gopacket.PacketBuilder) error {
	erf := &ERF{}
	err := erf.DecodeFromBytes(data, p)
	p.AddLayer(erf)
	if err != nil {
		return err
	}
	if len(erf.Payload) == 0 && erf.WLen > 0 {
		return fmt.Errorf("erf: %w: nothing captured of the %d-byte packet", ErrTruncated, erf.WLen)
	}
	return p.NextDecoder(erf.NextLayerType())
}

// decodeRawMAD keeps a MAD as raw payload when package cm is not imported.
func decodeRawMAD(data []byte, p gopacket.PacketBuilder) error {
	payload := gopacket.Payload(data)
	p.AddLayer(&payload)
	p.SetApplicationLayer(&payload)
	return nil
}
