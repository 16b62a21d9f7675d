package decode

import (
	"encoding/binary"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/layers"
)

// OtherLevel is how far the walk reached into a frame that is not RDMA
// traffic: the innermost protocol an Other names.
type OtherLevel uint8

// The levels of Other, outermost first.
const (
	OtherLink  OtherLevel = iota + 1 // nothing past the link header: the number is the link type
	OtherEther                       // the number is the EtherType
	OtherIP                          // the number is the IP protocol (IPv6: the next header)
	OtherTCP                         // the number is the service port
	OtherUDP                         // the number is the service port
)

// Other names the protocol of a frame that is not RDMA traffic
// (Headers.Other): its level and number.
type Other struct {
	Level OtherLevel
	Num   uint16
}

// servicePort is the port a TCP or UDP header's frame is counted under:
// the lower of its two, which is the server's for a client on an
// ephemeral port.
func servicePort(src, dst uint16) uint16 { return min(src, dst) }

// otherStop is the Other of a frame whose walk stopped at a header of
// type typ (data its bytes) that the walk does not decode; the zero
// Other when typ is none of the innermost headers' next ones (otherAt
// then names the frame by the headers decoded).
func (d *Decoder) otherStop(h *frameHeaders, typ gopacket.LayerType, data []byte) Other {
	switch {
	case typ == gplayers.LayerTypeTCP && len(data) >= 4:
		return Other{OtherTCP, servicePort(binary.BigEndian.Uint16(data), binary.BigEndian.Uint16(data[2:]))}
	case h.tagType != 0 && typ == h.tagType.LayerType():
		return Other{OtherEther, uint16(h.tagType)}
	case (d.hdr.Network == layers.NetworkIPv4 || d.hdr.Network == layers.NetworkIPv6) && typ == gplayers.IPProtocol(d.ipProtocol()).LayerType():
		return Other{OtherIP, uint16(d.ipProtocol())}
	}
	return Other{}
}

// ipProtocol is the protocol the innermost IP header (Headers.NetHdr) carries.
// gopacket decodes an IPv6 hop-by-hop options header (MLD's) with the
// fixed header and goes on past it: its next header, when d.ip6 is the
// header decoded.
func (d *Decoder) ipProtocol() uint8 {
	if d.hdr.Network == layers.NetworkIPv4 {
		return d.hdr.NetHdr[9]
	}
	ip := &d.ip6
	if nh := d.hdr.NetHdr[6]; nh != uint8(gplayers.IPProtocolIPv6HopByHop) || ip.HopByHop == nil || len(ip.Contents) == 0 || &ip.Contents[0] != &d.hdr.NetHdr[0] {
		return nh
	}
	return uint8(ip.HopByHop.NextHeader)
}

// otherAt is the Other of a frame that is not RDMA traffic: where its
// walk stopped, or else the innermost IP header or EtherType decoded, or
// else its link type.
func (d *Decoder) otherAt(h *frameHeaders, lt gplayers.LinkType) Other {
	switch {
	case h.other.Level != 0:
		return h.other
	case (d.hdr.Network == layers.NetworkIPv4 || d.hdr.Network == layers.NetworkIPv6) && !h.etherLast:
		return Other{OtherIP, uint16(d.ipProtocol())}
	case h.tagType != 0:
		return Other{OtherEther, uint16(h.tagType)}
	}
	return Other{OtherLink, uint16(lt)}
}

// decodeMACControl decodes a MAC Control frame (PFC or 802.3x PAUSE): the
// Packet shows it, and Headers.SrcMAC is its sender.
func (d *Decoder) decodeMACControl(data []byte) {
	if d.mac.DecodeFromBytes(data, &d.fb) != nil {
		return
	}
	d.pkt.MACControl = &d.mac
	d.pkt.Src, d.pkt.Dst = Addr{}, Addr{}
	d.hdr.SrcMAC = d.eth.SrcMAC
}
