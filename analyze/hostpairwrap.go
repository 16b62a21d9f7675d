package analyze

import (
	"encoding/binary"
	"slices"

	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/layers"
)

// The host pair key of a frame that arrived in a tunnel is the key of the
// packet inside (wrap.go): the keys below walk the encapsulations the
// Analyzer walks, and fall back to the outer pair where the inside has no
// addresses (it is then not RDMA traffic, and any key will do).

// inner is the key of what an IP packet between the hosts of key outer
// carries as protocol proto: a tunnel's inner packet, or outer.
func (k keyReader) inner(outer uint64, proto gplayers.IPProtocol, data []byte) uint64 {
	if k.depth == maxWraps {
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
		in = k.greKey(data)
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
	data = data[8:]
	switch udpTunnel(gplayers.UDPPort(port)) {
	case gplayers.LayerTypeVXLAN:
		if len(data) < 8 {
			return 0
		}
		return k.etherKey(data[8:])
	case gplayers.LayerTypeGeneve:
		if len(data) < geneveLen || data[0]>>6 != 0 {
			return 0
		}
		n := geneveLen + int(data[0]&0x3F)*4
		if len(data) < n {
			return 0
		}
		return k.etherTypeKey(binary.BigEndian.Uint16(data[2:4]), data[n:])
	}
	return 0
}

// greKey reads a GRE packet's inner frame: ERSPAN I, II, III, NVGRE, or
// IP; 0 for GRE with routing (deprecated) or anything else.
func (k keyReader) greKey(data []byte) uint64 {
	if len(data) < 4 || data[0]&0x40 != 0 {
		return 0
	}
	n := 4
	for _, bit := range [...]byte{0x80, 0x20, 0x10} { // checksum, key, sequence
		if data[0]&bit != 0 {
			n += 4
		}
	}
	if len(data) < n {
		return 0
	}
	seq := data[0]&0x10 != 0
	et := binary.BigEndian.Uint16(data[2:4])
	data = data[n:]
	switch gplayers.EthernetType(et) {
	case gplayers.EthernetTypeERSPAN:
		if seq { // type II: an 8-byte header
			if len(data) < 8 {
				return 0
			}
			data = data[8:]
		}
		return k.etherKey(data)
	case layers.EthernetTypeERSPANIII:
		return k.erspan3Key(data)
	}
	return k.etherTypeKey(et, data)
}

// mplsKey reads an MPLS label stack, then IPv4 or IPv6 by its version.
func (k keyReader) mplsKey(data []byte) uint64 {
	for len(data) >= 4 {
		bottom := data[2]&1 != 0
		data = data[4:]
		if !bottom {
			continue
		}
		if len(data) == 0 {
			return 0
		}
		switch data[0] >> 4 {
		case 4:
			return k.ipv4Key(data)
		case 6:
			return k.ipv6Key(data)
		}
		return 0
	}
	return 0
}

// erspan3Key reads an ERSPAN III packet: its 12-byte header, the 8-byte
// platform subheader when the O bit says one follows, then an Ethernet
// frame (frame type 0) or an IP packet (frame type 2).
func (k keyReader) erspan3Key(data []byte) uint64 {
	if len(data) < layers.ERSPANIIIHeaderLen {
		return 0
	}
	n := layers.ERSPANIIIHeaderLen
	if data[11]&1 != 0 {
		n += layers.ERSPANIIIPlatformLen
	}
	if len(data) < n+1 {
		return 0
	}
	ft := layers.ERSPANFrameType(data[10] >> 2 & 0x1F)
	data = data[n:]
	switch {
	case ft == layers.ERSPANFrameTypeEthernet:
		return k.etherKey(data)
	case ft == layers.ERSPANFrameTypeIP && data[0]>>4 == 4:
		return k.ipv4Key(data)
	case ft == layers.ERSPANFrameTypeIP && data[0]>>4 == 6:
		return k.ipv6Key(data)
	}
	return 0
}
