package cm

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"time"
)

// GID is a 128-bit InfiniBand global identifier, laid out like an IPv6
// address (and convertible to one). On RoCE v2 over IPv4 the GIDs of the
// CM messages are IPv4-mapped IPv6 addresses (::ffff:a.b.c.d); String shows
// them as the IPv4 address.
type GID [16]byte

// IP returns the GID as a 16-byte net.IP (a copy). For an IPv4-mapped GID,
// ip.To4() gives the IPv4 address and ip.String() prints it dotted.
func (g GID) IP() net.IP {
	ip := make(net.IP, net.IPv6len)
	copy(ip, g[:])
	return ip
}

// Addr returns the GID as a netip.Addr, unmapped to IPv4 when the GID is
// IPv4-mapped. It does not allocate.
func (g GID) Addr() netip.Addr { return netip.AddrFrom16(g).Unmap() }

// IsIPv4Mapped reports whether the GID is an IPv4-mapped IPv6 address
// (::ffff:a.b.c.d), the RoCE v2 form of an IPv4 address.
func (g GID) IsIPv4Mapped() bool { return netip.AddrFrom16(g).Is4In6() }

// IsZero reports whether all 128 bits are zero (no GID, as in the unused
// alternate path of a REQ).
func (g GID) IsZero() bool { return g == GID{} }

// String returns "a.b.c.d" for an IPv4-mapped GID and the IPv6 text form
// (fe80::2:c902:24:f636) otherwise.
func (g GID) String() string { return g.Addr().String() }

// GIDFromIP returns the GID of an IPv4 or IPv6 address (IPv4 becomes
// IPv4-mapped), and false when ip has neither length.
func GIDFromIP(ip net.IP) (GID, bool) {
	var g GID
	if ip4 := ip.To4(); ip4 != nil {
		g[10], g[11] = 0xff, 0xff
		copy(g[12:], ip4)
		return g, true
	}
	if len(ip) != net.IPv6len {
		return g, false
	}
	copy(g[:], ip)
	return g, true
}

// GIDFromAddr returns the GID of an address (IPv4 becomes IPv4-mapped).
func GIDFromAddr(a netip.Addr) GID {
	if a.Is4() {
		a = netip.AddrFrom16(a.As16())
	}
	return GID(a.As16())
}

// LID is a 16-bit InfiniBand local identifier.
type LID uint16

// IsPlaceholder reports whether the LID is 0 or 0xFFFF. RoCE has no LIDs:
// the CM messages of an Ethernet link carry one of these two values in
// place of a LID, and the GIDs are what identify the ports. (On native
// InfiniBand 0 is reserved and 0xFFFF is the permissive LID.)
func (l LID) IsPlaceholder() bool { return l == 0 || l == 0xFFFF }

// String returns the LID in decimal, as ibstat and Wireshark show LIDs.
func (l LID) String() string { return strconv.Itoa(int(l)) }

// PathMTU is the 4-bit path MTU enumeration of the CM messages.
type PathMTU uint8

// The path MTU values defined by IBTA.
const (
	MTU256  PathMTU = 1
	MTU512  PathMTU = 2
	MTU1024 PathMTU = 3
	MTU2048 PathMTU = 4
	MTU4096 PathMTU = 5
)

// Bytes returns the MTU in bytes (1 → 256 … 5 → 4096), or 0 for a value
// outside the enumeration.
func (m PathMTU) Bytes() int {
	if m < MTU256 || m > MTU4096 {
		return 0
	}
	return 128 << m
}

// String returns the MTU in bytes ("1024"), or "invalid(N)".
func (m PathMTU) String() string {
	if b := m.Bytes(); b != 0 {
		return strconv.Itoa(b)
	}
	return "invalid(" + strconv.Itoa(int(m)) + ")"
}

// PathMTUFromBytes returns the enumeration value of an MTU in bytes, and
// false for a size that is not one of 256, 512, 1024, 2048, 4096.
func PathMTUFromBytes(n int) (PathMTU, bool) {
	for m := MTU256; m <= MTU4096; m++ {
		if m.Bytes() == n {
			return m, true
		}
	}
	return 0, false
}

// GUID is a 64-bit globally unique identifier (a channel adapter's node
// GUID in LocalCAGUID).
type GUID uint64

// String returns "0x%016x", as Wireshark shows GUIDs.
func (g GUID) String() string { return fmt.Sprintf("0x%016x", uint64(g)) }

// TransportServiceType is the 2-bit transport of a REQ.
type TransportServiceType uint8

// Transport service types. TransportExtended (3) means the transport is
// given by the REQ's ExtendedTransportType (1 = XRC).
const (
	TransportRC       TransportServiceType = 0
	TransportUC       TransportServiceType = 1
	TransportRD       TransportServiceType = 2
	TransportExtended TransportServiceType = 3
)

// String returns "RC", "UC", "RD" or "extended".
func (t TransportServiceType) String() string {
	switch t {
	case TransportRC:
		return "RC"
	case TransportUC:
		return "UC"
	case TransportRD:
		return "RD"
	case TransportExtended:
		return "extended"
	}
	return "TransportServiceType(" + strconv.Itoa(int(t)) + ")"
}

// ExtendedTransportXRC is the ExtendedTransportType of an XRC REQ (whose
// TransportServiceType is TransportExtended).
const ExtendedTransportXRC = 1

// TimeoutDuration converts a 5-bit IBTA timeout exponent (the CM response
// timeouts, LocalACKTimeout, TargetACKDelay, ServiceTimeout) into time:
// 4.096 µs × 2^code.
func TimeoutDuration(code uint8) time.Duration {
	return time.Duration(4096<<(code&0x1F)) * time.Nanosecond
}
