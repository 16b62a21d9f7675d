package analyze

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAddrHash: the fast hash of an address is its host's hash, for IPv4,
// IPv4-mapped IPv6 (the IPv4 host), other IPv6/GIDs, LIDs and no address,
// and an IPv4 address and its mapped form hash alike.
func TestAddrHash(t *testing.T) {
	addrs := []Addr{
		{IP: netip.MustParseAddr("10.0.0.1")},
		{IP: netip.MustParseAddr("192.168.255.254")},
		{IP: netip.MustParseAddr("::ffff:10.0.0.1")},
		{IP: netip.MustParseAddr("fe80::1")},
		{IP: netip.MustParseAddr("fe80::a:b:c:d")},
		{IP: netip.MustParseAddr("::")},
		{IP: netip.MustParseAddr("0.0.0.0")},
		{IsLID: true, LID: 1},
		{IsLID: true, LID: 0xBFFF},
		{},
	}
	for _, a := range addrs {
		assert.Equal(t, hostOf(a).hash(), addrHash(a), "%v", a)
	}
	assert.Equal(t, addrHash(addrs[0]), addrHash(addrs[2]), "mapped")
	assert.NotEqual(t, addrHash(addrs[0]), addrHash(addrs[1]))
	assert.NotEqual(t, addrHash(addrs[0]), addrHash(addrs[7]), "a LID is not an IPv4 address")
}
