package cm

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
)

// ServiceID is the 64-bit service identifier of a REQ or SIDR_REQ.
//
// The RDMA CM (librdmacm, IBTA Annex A11) uses service IDs of the form
//
//	0x00 00 00 00 01 | port space (8) | port (16)
//
// e.g. 0x0000000001064853 is TCP port space, port 0x4853 (18515).
type ServiceID uint64

// rdmaCMPrefix is the top 40 bits of an RDMA CM service ID.
const rdmaCMPrefix = 0x0000000001

// IsRDMACM reports whether the service ID has the RDMA CM IP form.
func (s ServiceID) IsRDMACM() bool { return uint64(s)>>24 == rdmaCMPrefix }

// PortSpace returns the port-space byte of an RDMA CM service ID
// (meaningful when IsRDMACM).
func (s ServiceID) PortSpace() PortSpace { return PortSpace(s >> 16) }

// Port returns the port of an RDMA CM service ID (meaningful when
// IsRDMACM): the destination port the passive side listens on.
func (s ServiceID) Port() uint16 { return uint16(s) }

// String returns "0x%016x".
func (s ServiceID) String() string { return fmt.Sprintf("0x%016x", uint64(s)) }

// RDMACMServiceID builds the RDMA CM service ID of a port space and port.
func RDMACMServiceID(ps PortSpace, port uint16) ServiceID {
	return ServiceID(uint64(rdmaCMPrefix)<<24 | uint64(ps)<<16 | uint64(port))
}

// PortSpace is the RDMA CM port space (the rdma_port_space of librdmacm,
// low byte).
type PortSpace uint8

// RDMA CM port spaces.
const (
	PortSpaceTCP PortSpace = 0x06 // RDMA_PS_TCP: reliable connections
	PortSpaceUDP PortSpace = 0x11 // RDMA_PS_UDP: unreliable datagrams
	PortSpaceIB  PortSpace = 0x3F // RDMA_PS_IB: any QP type
)

// String returns "TCP", "UDP", "IB" or "PortSpace(0x..)".
func (p PortSpace) String() string {
	switch p {
	case PortSpaceTCP:
		return "TCP"
	case PortSpaceUDP:
		return "UDP"
	case PortSpaceIB:
		return "IB"
	}
	return fmt.Sprintf("PortSpace(0x%02x)", uint8(p))
}

// IPPrivateDataLen is the length of the RDMA CM header at the start of a
// REQ's private data; the consumer's own private data follows it.
const IPPrivateDataLen = 36

// IPPrivateData is the header the RDMA CM puts at the start of a REQ's
// private data when the service ID has the RDMA CM form (IBTA Annex A11):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| MajV  | MinV  | IPV   |  rsv  |          Source port          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            Source IP (128; IPv4 in the last 32 bits)          |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|         Destination IP (128; IPv4 in the last 32 bits)        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                  consumer private data (56 bytes)             |
//
// The ports and addresses are those of the rdma_cm sockets-like endpoints:
// on RoCE they are the IP addresses the GIDs are made of.
type IPPrivateData struct {
	MajorVersion  uint8 // 4 bits
	MinorVersion  uint8 // 4 bits
	IPVersion     uint8 // 4 bits: 4 or 6
	SourcePort    uint16
	SourceIP      netip.Addr // IPv4 when IPVersion is 4
	DestinationIP netip.Addr
	// ConsumerData is the private data of the application after the
	// header; it aliases the decoded bytes.
	ConsumerData []byte
}

// DecodeIPPrivateData decodes the RDMA CM header at the start of a REQ's
// private data. The addresses are IPv4 when IPVersion is 4 and IPv6
// otherwise. It does not allocate.
func DecodeIPPrivateData(b []byte) (IPPrivateData, error) {
	var p IPPrivateData
	if len(b) < IPPrivateDataLen {
		return p, fmt.Errorf("cm: %w: RDMA CM private data: %d bytes, need %d", ErrTruncated, len(b), IPPrivateDataLen)
	}
	p.MajorVersion = b[0] >> 4
	p.MinorVersion = b[0] & 0x0F
	p.IPVersion = b[1] >> 4
	p.SourcePort = binary.BigEndian.Uint16(b[2:4])
	if p.IPVersion == 4 {
		p.SourceIP = netip.AddrFrom4([4]byte(b[16:20]))
		p.DestinationIP = netip.AddrFrom4([4]byte(b[32:36]))
	} else {
		p.SourceIP = netip.AddrFrom16([16]byte(b[4:20]))
		p.DestinationIP = netip.AddrFrom16([16]byte(b[20:36]))
	}
	p.ConsumerData = b[IPPrivateDataLen:]
	return p, nil
}

// AppendBinary appends the 36-byte header and ConsumerData to b. An
// IPv4 address (or an IPv4-mapped one) is written in the last 32 bits of
// its field when IPVersion is 4; other versions write the 16-byte form.
func (p *IPPrivateData) AppendBinary(b []byte) ([]byte, error) {
	if p.MajorVersion > 0xF || p.MinorVersion > 0xF || p.IPVersion > 0xF {
		return b, fmt.Errorf("cm: %w: RDMA CM versions %d.%d, IP version %d (4 bits)", ErrFieldRange, p.MajorVersion, p.MinorVersion, p.IPVersion)
	}
	n := len(b)
	b = slices.Grow(b, IPPrivateDataLen+len(p.ConsumerData))
	b = b[:n+IPPrivateDataLen]
	h := b[n:]
	clear(h)
	h[0] = p.MajorVersion<<4 | p.MinorVersion
	h[1] = p.IPVersion << 4
	binary.BigEndian.PutUint16(h[2:4], p.SourcePort)
	if p.IPVersion == 4 {
		src, dst := p.SourceIP.Unmap(), p.DestinationIP.Unmap()
		if !src.Is4() || !dst.Is4() {
			return b[:n], fmt.Errorf("cm: %w: RDMA CM IP version 4 with addresses %v, %v", ErrFieldRange, p.SourceIP, p.DestinationIP)
		}
		s4, d4 := src.As4(), dst.As4()
		copy(h[16:20], s4[:])
		copy(h[32:36], d4[:])
	} else {
		s16, d16 := p.SourceIP.As16(), p.DestinationIP.As16()
		copy(h[4:20], s16[:])
		copy(h[20:36], d16[:])
	}
	return append(b, p.ConsumerData...), nil
}

// String returns e.g. "RDMA-CM v0.0 10.1.16.62:52471 -> 10.1.16.61".
func (p IPPrivateData) String() string {
	return fmt.Sprintf("RDMA-CM v%d.%d %s -> %s", p.MajorVersion, p.MinorVersion,
		netip.AddrPortFrom(p.SourceIP, p.SourcePort), p.DestinationIP)
}
