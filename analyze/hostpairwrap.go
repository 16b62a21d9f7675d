package analyze

import (
	"encoding/binary"
	"slices"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
	"github.com/roce-dissect/roce-dissect/layers"
)

// The host pair key of a frame that arrived in a tunnel is the key of the
// packet inside (wrap.go): the keys below walk the encapsulations the
// decode stage walks, and fall back to the outer pair where the inside has no
// addresses (it is then not RDMA traffic, and any key will do).

// maxKeyDepth bounds the headers a key walks into: room for decode.MaxWraps
// encapsulations of several headers each (IP, GRE, ERSPAN, Ethernet).
const maxKeyDepth = 4 * decode.MaxWraps

// inner is the key of what an IP packet between the hosts of key outer
// carries as protocol proto: a tunnel's inner packet, or outer.
func (k keyReader) inner(outer uint64, proto gplayers.IPProtocol, data []byte) uint64 {
	if k.depth >= maxKeyDepth {
		return outer
	}
	k.depth++
	var in uint64
	switch proto {
	case gplayers.IPProtocolIPv4:
		in = k.ipv4Key(data)
	case gplayers.IPProtocolIPv6:
		in = k.ipv6Key(data)
	case gplayers.IPProtocolGRE:
		in = k.layerKey(gplayers.LayerTypeGRE, data)
	case gplayers.IPProtocolUDP:
		in = k.udpKey(data)
	}
	if in == 0 {
		return outer
	}
	return in
}

// udpKey reads a VXLAN or GENEVE packet's inner frame; 0 for other UDP.
func (k keyReader) udpKey(data []byte) uint64 {
	if len(data) < 8 {
		return 0
	}
	port := binary.BigEndian.Uint16(data[2:4])
	if slices.Contains(k.roce, port) {
		return 0
	}
	return k.layerKey(decode.UDPTunnel(gplayers.UDPPort(port)), data[8:])
}

// layerKey reads a tunnel's header of layer type typ and goes on into
// what it carries, by the same layers and header readers as the decode
// stage's walk (decode.Decoder), so that both reach the same inner packet;
// 0 for a header that does not decode.
func (k keyReader) layerKey(typ gopacket.LayerType, data []byte) uint64 {
	if k.depth >= maxKeyDepth {
		return 0
	}
	k.depth++
	switch typ {
	case gplayers.LayerTypeEthernet:
		return k.etherKey(data)
	case gplayers.LayerTypeIPv4:
		return k.ipv4Key(data)
	case gplayers.LayerTypeIPv6:
		return k.ipv6Key(data)
	case gplayers.LayerTypeMPLS:
		_, next, rest, err := decode.MPLSStack(data)
		if err != nil {
			return 0
		}
		return k.layerKey(next, rest)
	case gplayers.LayerTypeGeneve:
		next, _, n, err := decode.GENEVEHeader(data)
		if err != nil {
			return 0
		}
		return k.layerKey(next, data[n:])
	// Each layer is called as itself: through a gopacket.DecodingLayer
	// it would move to the heap, an allocation per frame.
	case gplayers.LayerTypeGRE:
		var g gplayers.GRE
		if g.DecodeFromBytes(data, gopacket.NilDecodeFeedback) == nil {
			return k.layerKey(g.NextLayerType(), g.Payload)
		}
	case gplayers.LayerTypeERSPANII:
		var e gplayers.ERSPANII
		if e.DecodeFromBytes(data, gopacket.NilDecodeFeedback) == nil {
			return k.layerKey(e.NextLayerType(), e.Payload)
		}
	case layers.LayerTypeERSPANIII:
		var e layers.ERSPANIII
		if e.DecodeFromBytes(data, gopacket.NilDecodeFeedback) == nil {
			return k.layerKey(e.NextLayerType(), e.Payload)
		}
	case gplayers.LayerTypeVXLAN:
		var v gplayers.VXLAN
		if v.DecodeFromBytes(data, gopacket.NilDecodeFeedback) == nil {
			return k.layerKey(v.NextLayerType(), v.Payload)
		}
	}
	return 0
}
