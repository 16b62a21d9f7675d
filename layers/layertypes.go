package layers

import (
	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// Layer type numbers. gopacket keeps numbers below 2000 in an array (the
// fast path), and its own layers use numbers far below 1900, so this package
// owns the block 1900–1929:
//
//	1900 LRH        1906 RETH          1912 CNP    1918 DCETH
//	1901 GRH        1907 AtomicETH     1913 ICRC   1919 ERSPANIII
//	1902 BTH        1908 AETH          1914 VCRC   1920 MACControl
//	1903 RDETH      1909 AtomicAckETH  1915 ERF
//	1904 DETH       1910 ImmDt         1916 MAD (decoded by package cm)
//	1905 XRCETH     1911 IETH          1917 FETH
const layerTypeBase = 1900

// Layer types of the InfiniBand transport, registered with gopacket.
var (
	LayerTypeLRH          = gopacket.RegisterLayerType(layerTypeBase+0, gopacket.LayerTypeMetadata{Name: "LRH", Decoder: gopacket.DecodeFunc(decodeLRH)})
	LayerTypeGRH          = gopacket.RegisterLayerType(layerTypeBase+1, gopacket.LayerTypeMetadata{Name: "GRH", Decoder: gopacket.DecodeFunc(decodeGRH)})
	LayerTypeBTH          = gopacket.RegisterLayerType(layerTypeBase+2, gopacket.LayerTypeMetadata{Name: "BTH", Decoder: gopacket.DecodeFunc(decodeBTH)})
	LayerTypeRDETH        = gopacket.RegisterLayerType(layerTypeBase+3, gopacket.LayerTypeMetadata{Name: "RDETH", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &RDETH{} })})
	LayerTypeDETH         = gopacket.RegisterLayerType(layerTypeBase+4, gopacket.LayerTypeMetadata{Name: "DETH", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &DETH{} })})
	LayerTypeXRCETH       = gopacket.RegisterLayerType(layerTypeBase+5, gopacket.LayerTypeMetadata{Name: "XRCETH", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &XRCETH{} })})
	LayerTypeRETH         = gopacket.RegisterLayerType(layerTypeBase+6, gopacket.LayerTypeMetadata{Name: "RETH", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &RETH{} })})
	LayerTypeAtomicETH    = gopacket.RegisterLayerType(layerTypeBase+7, gopacket.LayerTypeMetadata{Name: "AtomicETH", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &AtomicETH{} })})
	LayerTypeAETH         = gopacket.RegisterLayerType(layerTypeBase+8, gopacket.LayerTypeMetadata{Name: "AETH", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &AETH{} })})
	LayerTypeAtomicAckETH = gopacket.RegisterLayerType(layerTypeBase+9, gopacket.LayerTypeMetadata{Name: "AtomicAckETH", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &AtomicAckETH{} })})
	LayerTypeImmDt        = gopacket.RegisterLayerType(layerTypeBase+10, gopacket.LayerTypeMetadata{Name: "ImmDt", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &ImmDt{} })})
	LayerTypeIETH         = gopacket.RegisterLayerType(layerTypeBase+11, gopacket.LayerTypeMetadata{Name: "IETH", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &IETH{} })})
	LayerTypeCNP          = gopacket.RegisterLayerType(layerTypeBase+12, gopacket.LayerTypeMetadata{Name: "CNP", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &CNP{} })})
	LayerTypeICRC         = gopacket.RegisterLayerType(layerTypeBase+13, gopacket.LayerTypeMetadata{Name: "ICRC", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &ICRC{} })})
	LayerTypeVCRC         = gopacket.RegisterLayerType(layerTypeBase+14, gopacket.LayerTypeMetadata{Name: "VCRC", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &VCRC{} })})
	LayerTypeERF          = gopacket.RegisterLayerType(layerTypeBase+15, gopacket.LayerTypeMetadata{Name: "ERF", Decoder: gopacket.DecodeFunc(decodeERF)})
	// LayerTypeMAD is the layer type of an InfiniBand management datagram.
	// This package registers it with a fallback that keeps the MAD as raw
	// payload; importing package cm replaces the decoder with the real one
	// (same number, so cm.LayerTypeMAD == LayerTypeMAD).
	LayerTypeMAD  = gopacket.RegisterLayerType(layerTypeBase+16, gopacket.LayerTypeMetadata{Name: "MAD", Decoder: gopacket.DecodeFunc(decodeRawMAD)})
	LayerTypeFETH = gopacket.RegisterLayerType(layerTypeBase+17, gopacket.LayerTypeMetadata{Name: "FETH", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &FETH{} })})
	// LayerTypeDCETH is the 8-byte header of NVIDIA's DC transport (see DCETH).
	LayerTypeDCETH = gopacket.RegisterLayerType(layerTypeBase+18, gopacket.LayerTypeMetadata{Name: "DCETH", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &DCETH{} })})
	// LayerTypeERSPANIII is the header of an ERSPAN type III mirror packet
	// (GRE protocol type 0x22EB), the way a switch mirrors RoCE traffic.
	LayerTypeERSPANIII = gopacket.RegisterLayerType(layerTypeBase+19, gopacket.LayerTypeMetadata{Name: "ERSPANIII", Decoder: decodeAlone(func() gopacket.DecodingLayer { return &ERSPANIII{} })})
	// LayerTypeMACControl is an IEEE 802.3 MAC Control frame: PAUSE or
	// PFC (EtherType 0x8808).
	LayerTypeMACControl = gopacket.RegisterLayerType(layerTypeBase+20, gopacket.LayerTypeMetadata{Name: "MACControl", Decoder: gopacket.DecodeFunc(decodeMACControl)})
)

// Link-level numbers this package hooks into gopacket.
const (
	// UDPPortRoCEv2 is the IANA UDP destination port of RoCE v2.
	UDPPortRoCEv2 gplayers.UDPPort = 4791
	// EthernetTypeRoCEv1 is the EtherType of RoCE v1 (a GRH follows).
	EthernetTypeRoCEv1 gplayers.EthernetType = 0x8915
	// LinkTypeInfiniBand is LINKTYPE_INFINIBAND (libpcap rdmasniff): the
	// frame starts with the LRH.
	LinkTypeInfiniBand gplayers.LinkType = 247
	// LinkTypeERF is LINKTYPE_ERF (Endace ERF records, written by ibdump).
	LinkTypeERF gplayers.LinkType = 197
	// EthernetTypeERSPANIII is the GRE protocol type of ERSPAN type III
	// (an ERSPANIII header follows the GRE header).
	EthernetTypeERSPANIII gplayers.EthernetType = 0x22EB
	// EthernetTypeMACControl is the EtherType of IEEE 802.3 MAC Control
	// frames, PAUSE and PFC (see MACControl).
	EthernetTypeMACControl gplayers.EthernetType = 0x8808
)

func init() {
	gplayers.RegisterUDPPortLayerType(UDPPortRoCEv2, LayerTypeBTH)
	gplayers.EthernetTypeMetadata[EthernetTypeRoCEv1] = gplayers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeGRH), Name: "RoCEv1", LayerType: LayerTypeGRH,
	}
	gplayers.EthernetTypeMetadata[EthernetTypeERSPANIII] = gplayers.EnumMetadata{
		DecodeWith: LayerTypeERSPANIII, Name: "ERSPANIII", LayerType: LayerTypeERSPANIII,
	}
	gplayers.EthernetTypeMetadata[EthernetTypeMACControl] = gplayers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeMACControl), Name: "MACControl", LayerType: LayerTypeMACControl,
	}
	gplayers.LinkTypeMetadata[LinkTypeInfiniBand] = gplayers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeLRH), Name: "InfiniBand", LayerType: LayerTypeLRH,
	}
	gplayers.LinkTypeMetadata[LinkTypeERF] = gplayers.EnumMetadata{
		DecodeWith: gopacket.DecodeFunc(decodeERF), Name: "ERF", LayerType: LayerTypeERF,
	}
}

// decodeAlone decodes a layer met on its own (not through a BTH), for a
// user who calls gopacket.NewPacket(data, LayerTypeRETH, …) directly, and
// the ERSPANIII header after its GRE header; decoding goes on with the
// layer's NextLayerType.
func decodeAlone(newLayer func() gopacket.DecodingLayer) gopacket.Decoder {
	return gopacket.DecodeFunc(func(data []byte, p gopacket.PacketBuilder) error {
		l := newLayer()
		if err := l.DecodeFromBytes(data, p); err != nil {
			return err
		}
		p.AddLayer(l.(gopacket.Layer))
		return p.NextDecoder(l.NextLayerType())
	})
}
