package layers

import (
	"encoding/binary"
	"fmt"
	"net"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// GRHLen is the length of the Global Route Header.
const GRHLen = 40

// NxtHdrBTH is the GRH next-header value announcing a BTH (IBA transport).
const NxtHdrBTH = 0x1B

// GRH is the InfiniBand Global Route Header: the network header of RoCE v1
// (EtherType 0x8915) and of routed native IB packets (LRH LNH = 3). Its
// layout is the IPv6 header's; the addresses are GIDs.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| IPVer |    TClass     |               Flow Label              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|         Payload Length        |    NxtHdr     |    HopLmt     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                      Source GID (128)                         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                   Destination GID (128)                       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// PayLen bounds the payload (Ethernet padding after a RoCE v1 packet is
// dropped). SGID and DGID alias the decoded data.
type GRH struct {
	gplayers.BaseLayer
	IPVer     uint8
	TClass    uint8
	FlowLabel uint32 // 20 bits
	PayLen    uint16
	NxtHdr    uint8
	HopLmt    uint8
	SGID      net.IP
	DGID      net.IP
}

var (
	_ gopacket.DecodingLayer     = (*GRH)(nil)
	_ gopacket.SerializableLayer = (*GRH)(nil)
)

// LayerType returns LayerTypeGRH.
func (g *GRH) LayerType() gopacket.LayerType { return LayerTypeGRH }

// CanDecode returns LayerTypeGRH.
func (g *GRH) CanDecode() gopacket.LayerClass { return LayerTypeGRH }

// NextLayerType returns LayerTypeBTH for NxtHdr 0x1B, else the payload.
func (g *GRH) NextLayerType() gopacket.LayerType {
	if g.NxtHdr == NxtHdrBTH {
		return LayerTypeBTH
	}
	return gopacket.LayerTypePayload
}

// NetworkFlow returns the flow between the GIDs, as an IPv6 flow.
func (g *GRH) NetworkFlow() gopacket.Flow {
	return gopacket.NewFlow(gplayers.EndpointIPv6, g.SGID, g.DGID)
}

// DecodeFromBytes decodes the GRH and bounds the payload by PayLen.
func (g *GRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*g = GRH{}
	if len(data) < GRHLen {
		df.SetTruncated()
		return fmt.Errorf("grh: %w: %d bytes, need %d", ErrTruncated, len(data), GRHLen)
	}
	w := binary.BigEndian.Uint32(data[0:4])
	g.IPVer = uint8(w >> 28)
	g.TClass = uint8(w >> 20)
	g.FlowLabel = w & 0xFFFFF
	g.PayLen = binary.BigEndian.Uint16(data[4:6])
	g.NxtHdr, g.HopLmt = data[6], data[7]
	g.SGID = net.IP(data[8:24])
	g.DGID = net.IP(data[24:40])
	g.Contents = data[:GRHLen]
	end := GRHLen + int(g.PayLen)
	if len(data) < end {
		df.SetTruncated()
		g.Payload = data[GRHLen:]
		return nil
	}
	g.Payload = data[GRHLen:end]
	return nil
}

// SerializeTo writes the GRH. With FixLengths, PayLen is the length of the
// bytes already in b, through the ICRC (a trailing VCRC is left out); with ComputeChecksums, when NxtHdr is a BTH and b
// ends with an ICRC, the ICRC is computed over the finished RoCE v1 packet.
func (g *GRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if g.IPVer > 0xF || g.FlowLabel > 0xFFFFF {
		return fmt.Errorf("grh: %w: IPVer %d, FlowLabel 0x%x", ErrFieldRange, g.IPVer, g.FlowLabel)
	}
	if opts.FixLengths {
		// PayLen runs through the ICRC. An IB packet is a whole number of
		// 4-byte words, so 2 bytes over a word boundary are the VCRC of a
		// native IB packet (LRH, GRH, …, ICRC, VCRC), not counted.
		n := len(b.Bytes())
		if serializedVCRC(b) || n%4 == VCRCLen {
			n -= VCRCLen
		}
		if n > 0xFFFF {
			return fmt.Errorf("grh: %w: payload of %d bytes", ErrFieldRange, n)
		}
		g.PayLen = uint16(n)
	}
	h, err := b.PrependBytes(GRHLen)
	if err != nil {
		return err
	}
	binary.BigEndian.PutUint32(h[0:4], uint32(g.IPVer)<<28|uint32(g.TClass)<<20|g.FlowLabel)
	binary.BigEndian.PutUint16(h[4:6], g.PayLen)
	h[6], h[7] = g.NxtHdr, g.HopLmt
	if err := putGID(h[8:24], g.SGID); err != nil {
		return err
	}
	if err := putGID(h[24:40], g.DGID); err != nil {
		return err
	}
	if !opts.ComputeChecksums || g.NxtHdr != NxtHdrBTH {
		return nil
	}
	pkt := b.Bytes()
	end := GRHLen + int(g.PayLen)
	if end > len(pkt) || end < GRHLen+BTHLen+ICRCLen {
		return fmt.Errorf("grh: %w: ComputeChecksums needs the ICRC serialized after the payload", ErrBadHeader)
	}
	crc, err := ComputeICRC(NetworkGRH, pkt[:GRHLen], nil, pkt[GRHLen:end-ICRCLen])
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(pkt[end-ICRCLen:end], crc)
	return nil
}

func putGID(dst []byte, ip net.IP) error {
	switch len(ip) {
	case 0:
		for i := range dst {
			dst[i] = 0
		}
	case net.IPv4len:
		copy(dst, ip.To16())
	case net.IPv6len:
		copy(dst, ip)
	default:
		return fmt.Errorf("grh: %w: GID of %d bytes", ErrFieldRange, len(ip))
	}
	return nil
}
