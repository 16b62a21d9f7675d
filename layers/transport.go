package layers

import "github.com/gopacket/gopacket"

// TransportLayers holds one layer of each IB type, with the extension
// headers linked to the BTH so that, in a gopacket.DecodingLayerParser,
// each header knows from the BTH's opcode which header comes next (the
// IBTA headers carry no next-header field). Reuse one TransportLayers per
// parser; decoding allocates nothing.
//
//	var eth layers.Ethernet; var ip4 layers.IPv4; var udp layers.UDP
//	ib := roce.NewTransportLayers()
//	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet,
//		append([]gopacket.DecodingLayer{&eth, &ip4, &udp}, ib.DecodingLayers()...)...)
//
// The parser's default container is a map; for the fastest lookups put
// the layers in a gopacket.DecodingLayerSparse and pass it to
// SetDecodingLayerContainer (about a third faster per frame). After
// DecodeLayers, CheckICRC(NetworkIPv4, ip4.Contents, udp.Contents, &ib.BTH)
// verifies the ICRC.
type TransportLayers struct {
	ERF          ERF
	LRH          LRH
	GRH          GRH
	BTH          BTH
	RDETH        RDETH
	DETH         DETH
	XRCETH       XRCETH
	RETH         RETH
	AtomicETH    AtomicETH
	AETH         AETH
	AtomicAckETH AtomicAckETH
	ImmDt        ImmDt
	IETH         IETH
	FETH         FETH
	DCETH        DCETH
	CNP          CNP
	Payload      gopacket.Payload
}

// NewTransportLayers returns a TransportLayers with its headers linked.
func NewTransportLayers() *TransportLayers {
	t := &TransportLayers{}
	for _, l := range []*extLink{
		&t.RDETH.extLink, &t.DETH.extLink, &t.XRCETH.extLink, &t.RETH.extLink,
		&t.AtomicETH.extLink, &t.AETH.extLink, &t.AtomicAckETH.extLink,
		&t.ImmDt.extLink, &t.IETH.extLink, &t.FETH.extLink, &t.DCETH.extLink, &t.CNP.extLink,
	} {
		l.bth = &t.BTH
	}
	return t
}

// DecodingLayers returns the layers to add to a DecodingLayerParser. A
// MAD (QP0/QP1 payload) is left to the caller: add package cm's MAD layer
// to decode it.
func (t *TransportLayers) DecodingLayers() []gopacket.DecodingLayer {
	return []gopacket.DecodingLayer{
		&t.ERF, &t.LRH, &t.GRH, &t.BTH, &t.RDETH, &t.DETH, &t.XRCETH, &t.RETH,
		&t.AtomicETH, &t.AETH, &t.AtomicAckETH, &t.ImmDt, &t.IETH, &t.FETH, &t.DCETH, &t.CNP, &t.Payload,
	}
}
