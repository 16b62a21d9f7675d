package analyze

import (
	"encoding/binary"

	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/layers"
)

// hostAddr is a host as the shards group them: an IPv4 address (also the
// one an IPv4-mapped IPv6 address or GID holds), another IPv6 address or
// GID, or a LID.
type hostAddr struct {
	kind uint8 // 0 none, 1 LID, 2 IPv4, 3 IPv6/GID
	b    [16]byte
}

// hostOf is the host of a flow address.
func hostOf(a Addr) hostAddr {
	var h hostAddr
	switch {
	case a.IsLID:
		h.kind = 1
		binary.BigEndian.PutUint16(h.b[:2], a.LID)
	case !a.IP.IsValid():
	case a.IP.Unmap().Is4():
		h.kind = 2
		v := a.IP.Unmap().As4()
		copy(h.b[:4], v[:])
	default:
		h.kind, h.b = 3, a.IP.As16()
	}
	return h
}

// hostIP is the host of a 4- or 16-byte address.
func hostIP(ip []byte) hostAddr {
	var h hostAddr
	if len(ip) == 4 {
		h.kind = 2
		copy(h.b[:4], ip)
		return h
	}
	if isMapped(ip) {
		h.kind = 2
		copy(h.b[:4], ip[12:16])
		return h
	}
	h.kind = 3
	copy(h.b[:], ip)
	return h
}

// isMapped reports an IPv4-mapped IPv6 address (::ffff:a.b.c.d).
func isMapped(ip []byte) bool {
	for _, c := range ip[:10] {
		if c != 0 {
			return false
		}
	}
	return ip[10] == 0xFF && ip[11] == 0xFF
}

func hostLID(lid uint16) hostAddr {
	h := hostAddr{kind: 1}
	binary.BigEndian.PutUint16(h.b[:2], lid)
	return h
}

// addrHash is hostOf(a).hash(), an IPv4 address hashed without building
// the host.
func addrHash(a Addr) uint64 {
	if !a.IsLID && a.IP.Is4() {
		v := a.IP.As4()
		return hostHash(2, uint64(binary.LittleEndian.Uint32(v[:])), 0)
	}
	return hostOf(a).hash()
}

// hash mixes a host into 64 bits.
func (h hostAddr) hash() uint64 {
	return hostHash(h.kind, binary.LittleEndian.Uint64(h.b[:8]), binary.LittleEndian.Uint64(h.b[8:]))
}

// hostHash mixes a host given as its kind and the two little-endian
// words of its 16 bytes.
func hostHash(kind uint8, lo, hi uint64) uint64 {
	return fmix64(lo ^ fmix64(hi^uint64(kind)<<56^0x9E3779B97F4A7C15))
}

// pairKey hashes an unordered pair of hosts (never 0). Two pairs may
// share a key: they then share a shard, which only costs balance.
func pairKey(x, y hostAddr) uint64 { return pairHash(x.hash(), y.hash()) }

// pairHash combines the hashes of two hosts, in either order.
func pairHash(hx, hy uint64) uint64 {
	if hx > hy {
		hx, hy = hy, hx
	}
	h := fmix64(hx*0xff51afd7ed558ccd ^ hy)
	if h == 0 {
		h = 1
	}
	return h
}

// HostPairKey returns the key of the unordered pair of hosts a frame is
// between, as the Analyzer names them (IP addresses, GRH GIDs with
// IPv4-mapped ones as their IPv4 address, LRH LIDs when there is no GRH),
// reading only the headers that hold them; 0 when the frame has none (it
// is not RDMA traffic, or not one the Analyzer can place in a flow).
// Frames of one key can be analyzed apart from all others: see
// CombineShards.
//
// A frame that arrived in a tunnel (wrap.go) has the key of the packet
// inside: the hosts its flow is between.
func HostPairKey(lt gplayers.LinkType, data []byte) uint64 {
	return keyReader{}.key(lt, data)
}

// keyReader reads host pair keys: roce are the UDP ports besides 4791
// that carry RoCE v2 (Options.RoCEPorts), never a tunnel; depth counts
// the tunnels walked into.
type keyReader struct {
	roce  []uint16
	depth int
}

// key is HostPairKey.
func (k keyReader) key(lt gplayers.LinkType, data []byte) uint64 {
	var et uint16
	switch lt {
	case gplayers.LinkTypeEthernet:
		return k.etherKey(data)
	case layers.LinkTypeInfiniBand:
		return k.lrhKey(data)
	case layers.LinkTypeERF:
		return k.erfKey(data)
	case gplayers.LinkTypeLinuxSLL:
		if len(data) < 16 {
			return 0
		}
		et, data = binary.BigEndian.Uint16(data[14:16]), data[16:]
	case gplayers.LinkTypeLinuxSLL2:
		if len(data) < 20 {
			return 0
		}
		if binary.BigEndian.Uint16(data[8:10]) == uint16(gplayers.ARPHardwareTypeIPGRE) {
			return k.etherKey(data[20:])
		}
		et, data = binary.BigEndian.Uint16(data[0:2]), data[20:]
	case gplayers.LinkTypeRaw:
		if len(data) > 0 && data[0]>>4 == 6 {
			return k.ipv6Key(data)
		}
		return k.ipv4Key(data)
	case gplayers.LinkTypeIPv4:
		return k.ipv4Key(data)
	case gplayers.LinkTypeIPv6:
		return k.ipv6Key(data)
	default:
		return 0
	}
	return k.etherTypeKey(et, data)
}

// etherKey reads an Ethernet frame.
func (k keyReader) etherKey(data []byte) uint64 {
	if len(data) < 14 {
		return 0
	}
	return k.etherTypeKey(binary.BigEndian.Uint16(data[12:14]), data[14:])
}

// etherTypeKey reads what follows an EtherType, through VLAN tags and
// MPLS labels. It goes by the layer gopacket decodes for the EtherType,
// as the analyzer does (gopacket also reads 0xFFFF, "raw", as IPv4).
func (k keyReader) etherTypeKey(et uint16, data []byte) uint64 {
	for {
		switch gplayers.EthernetType(et).LayerType() {
		case gplayers.LayerTypeDot1Q:
			if len(data) < 4 {
				return 0
			}
			et, data = binary.BigEndian.Uint16(data[2:4]), data[4:]
		case layers.LayerTypeGRH:
			return grhKey(data)
		default: // IPv4, IPv6, MPLS, and Ethernet (0x6558 in GRE or GENEVE: a whole frame)
			return k.layerKey(gplayers.EthernetType(et).LayerType(), data)
		}
	}
}

func (k keyReader) ipv4Key(data []byte) uint64 {
	if len(data) < 20 {
		return 0
	}
	// hostIP's IPv4 host, hashed without building it.
	src := hostHash(2, uint64(binary.LittleEndian.Uint32(data[12:16])), 0)
	dst := hostHash(2, uint64(binary.LittleEndian.Uint32(data[16:20])), 0)
	outer := pairHash(src, dst)
	// Not a fragment (the analyzer follows none): what the protocol carries.
	if binary.BigEndian.Uint16(data[6:8])&0x3FFF == 0 {
		if ihl := int(data[0]&0xF) * 4; ihl >= 20 && len(data) >= ihl {
			return k.inner(outer, gplayers.IPProtocol(data[9]), data[ihl:])
		}
	}
	return outer
}

func (k keyReader) ipv6Key(data []byte) uint64 {
	if len(data) < 40 {
		return 0
	}
	return k.inner(grhKey(data), gplayers.IPProtocol(data[6]), data[40:])
}

// grhKey reads the GIDs of a GRH (the same offsets as IPv6's addresses).
func grhKey(data []byte) uint64 {
	if len(data) < 40 {
		return 0
	}
	return pairKey(hostIP(data[8:24]), hostIP(data[24:40]))
}

// lrhKey reads a native IB packet: the GIDs of its GRH when the LRH says
// one follows, else its LIDs.
func (k keyReader) lrhKey(data []byte) uint64 {
	if len(data) < layers.LRHLen {
		return 0
	}
	if data[1]&3 == layers.LNHIBAGlobal && len(data) >= layers.LRHLen+layers.GRHLen {
		return grhKey(data[layers.LRHLen:])
	}
	return pairKey(hostLID(binary.BigEndian.Uint16(data[6:8])), hostLID(binary.BigEndian.Uint16(data[2:4])))
}

// erfKey reads an ERF record: its extension headers, then the IB packet
// or (after a 2-byte pad) the Ethernet frame, up to the wire length.
func (k keyReader) erfKey(data []byte) uint64 {
	if len(data) < layers.ERFHeaderLen {
		return 0
	}
	typ, more := data[8]&0x7F, data[8]&0x80 != 0
	wlen := int(binary.BigEndian.Uint16(data[14:16]))
	off := layers.ERFHeaderLen
	for more {
		if len(data) < off+8 {
			return 0
		}
		more = data[off]&0x80 != 0
		off += 8
	}
	if typ == layers.ERFTypeEthernet {
		off += 2
	}
	if len(data) < off {
		return 0
	}
	data = data[off:min(len(data), off+wlen)]
	switch typ {
	case layers.ERFTypeInfiniBand, layers.ERFTypeInfiniBandLink:
		return k.lrhKey(data)
	case layers.ERFTypeEthernet:
		return k.etherKey(data)
	}
	return 0
}
