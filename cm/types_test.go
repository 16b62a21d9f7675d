package cm

import (
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestGID(t *testing.T) {
	cases := []struct {
		name   string
		g      GID
		str    string
		mapped bool
		zero   bool
	}{
		{"IPv4-mapped", GID{10: 0xff, 11: 0xff, 12: 10, 13: 1, 14: 16, 15: 62}, "10.1.16.62", true, false},
		{"link-local", GID{0: 0xfe, 1: 0x80, 9: 0x02, 10: 0xc9, 11: 0x02, 12: 0x00, 13: 0x24, 14: 0xf6, 15: 0x36}, "fe80::2:c902:24:f636", false, false},
		{"zero", GID{}, "::", false, true},
		{"IPv4-compatible is not mapped", GID{12: 10, 15: 1}, "::a00:1", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.str, c.g.String())
			assert.Equal(t, c.mapped, c.g.IsIPv4Mapped())
			assert.Equal(t, c.zero, c.g.IsZero())

			ip := c.g.IP()
			require.Len(t, ip, net.IPv6len)
			assert.Equal(t, c.g[:], []byte(ip))
			assert.Equal(t, c.str, ip.String(), "net.IP prints the same")
			assert.Equal(t, c.mapped, ip.To4() != nil && !c.zero)

			back, ok := GIDFromIP(ip)
			require.True(t, ok)
			assert.Equal(t, c.g, back)
			assert.Equal(t, c.g, GIDFromAddr(c.g.Addr()))
		})
	}
	g, ok := GIDFromIP(net.IPv4(192, 168, 0, 1).To4())
	require.True(t, ok)
	assert.Equal(t, "192.168.0.1", g.String())
	assert.True(t, g.IsIPv4Mapped())
	assert.Equal(t, netip.MustParseAddr("192.168.0.1"), g.Addr())
	_, ok = GIDFromIP(net.IP{1, 2, 3})
	assert.False(t, ok)
	assert.Equal(t, g, GIDFromAddr(netip.MustParseAddr("192.168.0.1")))
}

func TestLID(t *testing.T) {
	assert.True(t, LID(0).IsPlaceholder())
	assert.True(t, LID(0xFFFF).IsPlaceholder())
	assert.False(t, LID(1).IsPlaceholder())
	assert.False(t, LID(0xC000).IsPlaceholder())
	assert.Equal(t, "65535", LID(0xFFFF).String())
	assert.Equal(t, "4", LID(4).String())
}

func TestPathMTU(t *testing.T) {
	for m, want := range map[PathMTU]int{1: 256, 2: 512, 3: 1024, 4: 2048, 5: 4096, 0: 0, 6: 0, 15: 0} {
		assert.Equal(t, want, m.Bytes(), "MTU %d", m)
		got, ok := PathMTUFromBytes(want)
		if want == 0 {
			assert.False(t, ok)
			assert.Equal(t, "invalid("+strconv.Itoa(int(m))+")", m.String())
			continue
		}
		assert.True(t, ok)
		assert.Equal(t, m, got)
		assert.Equal(t, strconv.Itoa(want), m.String())
	}
	assert.Equal(t, "1024", MTU1024.String())
	_, ok := PathMTUFromBytes(1500)
	assert.False(t, ok)
}

func TestGUIDAndServiceID(t *testing.T) {
	assert.Equal(t, "0x025056fffea77d03", GUID(0x025056fffea77d03).String())
	assert.Equal(t, "0x0000000001064853", ServiceID(0x0000000001064853).String())

	cases := []struct {
		sid   ServiceID
		rdma  bool
		ps    PortSpace
		port  uint16
		psStr string
	}{
		{0x0000000001064853, true, PortSpaceTCP, 18515, "TCP"},
		{0x0000000001061c06, true, PortSpaceTCP, 7174, "TCP"},
		{0x0000000001111234, true, PortSpaceUDP, 0x1234, "UDP"},
		{0x00000000013f0001, true, PortSpaceIB, 1, "IB"},
		{0x1000000000000404, false, 0, 0x0404, "PortSpace(0x00)"},
		{0x0000000002064853, false, PortSpaceTCP, 18515, "TCP"},
	}
	for _, c := range cases {
		assert.Equal(t, c.rdma, c.sid.IsRDMACM(), "%s", c.sid)
		assert.Equal(t, c.ps, c.sid.PortSpace(), "%s", c.sid)
		assert.Equal(t, c.port, c.sid.Port(), "%s", c.sid)
		assert.Equal(t, c.psStr, c.sid.PortSpace().String())
		if c.rdma {
			assert.Equal(t, c.sid, RDMACMServiceID(c.ps, c.port))
		}
	}
}

func TestIPPrivateData(t *testing.T) {
	// The RDMA CM header of the first REQ of rdma_cm.pcap.
	v4 := make([]byte, ReqPrivateDataLen)
	copy(v4, []byte{0x00, 0x40, 0xcc, 0xf7})
	copy(v4[16:], []byte{10, 1, 16, 62})
	copy(v4[32:], []byte{10, 1, 16, 61})
	p, err := DecodeIPPrivateData(v4)
	require.NoError(t, err)
	assert.Equal(t, IPPrivateData{
		IPVersion: 4, SourcePort: 0xccf7,
		SourceIP:      netip.MustParseAddr("10.1.16.62"),
		DestinationIP: netip.MustParseAddr("10.1.16.61"),
		ConsumerData:  v4[IPPrivateDataLen:],
	}, p)
	assert.Equal(t, "RDMA-CM v0.0 10.1.16.62:52471 -> 10.1.16.61", p.String())
	enc, err := p.AppendBinary(nil)
	require.NoError(t, err)
	assert.Equal(t, v4, enc, "round trip")

	// IPv6, with versions and consumer data.
	v6 := IPPrivateData{
		MajorVersion: 1, MinorVersion: 2, IPVersion: 6, SourcePort: 4791,
		SourceIP:      netip.MustParseAddr("fe80::1"),
		DestinationIP: netip.MustParseAddr("2001:db8::2"),
		ConsumerData:  []byte("consumer"),
	}
	enc, err = v6.AppendBinary([]byte{0xaa})
	require.NoError(t, err)
	require.Len(t, enc, 1+IPPrivateDataLen+8)
	assert.Equal(t, []byte{0xaa, 0x12, 0x60, 0x12, 0xb7}, enc[:5])
	back, err := DecodeIPPrivateData(enc[1:])
	require.NoError(t, err)
	assert.Equal(t, v6, back)

	// An IPv4-mapped address is written in the IPv4 form.
	mapped := IPPrivateData{IPVersion: 4, SourceIP: netip.MustParseAddr("::ffff:1.2.3.4"), DestinationIP: netip.MustParseAddr("5.6.7.8")}
	enc, err = mapped.AppendBinary(nil)
	require.NoError(t, err)
	assert.Equal(t, []byte{1, 2, 3, 4}, enc[16:20])
	assert.Equal(t, make([]byte, 12), enc[4:16])

	// Errors.
	_, err = DecodeIPPrivateData(v4[:35])
	require.ErrorIs(t, err, ErrTruncated)
	assert.Equal(t, "cm: truncated: RDMA CM private data: 35 bytes, need 36", err.Error())
	_, err = (&IPPrivateData{IPVersion: 4, SourceIP: netip.MustParseAddr("fe80::1"), DestinationIP: netip.MustParseAddr("1.2.3.4")}).AppendBinary(nil)
	require.ErrorIs(t, err, ErrFieldRange)
	_, err = (&IPPrivateData{MajorVersion: 16}).AppendBinary(nil)
	require.ErrorIs(t, err, ErrFieldRange)

	// ConnectRequest.IPPrivateData needs the RDMA CM service ID.
	req := &ConnectRequest{ServiceID: 0x1000000000000404, PrivateData: v4}
	_, ok := req.IPPrivateData()
	assert.False(t, ok)
	req.ServiceID = RDMACMServiceID(PortSpaceTCP, 18515)
	got, ok := req.IPPrivateData()
	require.True(t, ok)
	assert.Equal(t, p, got)
	req.PrivateData = v4[:10]
	_, ok = req.IPPrivateData()
	assert.False(t, ok)
}

func TestTimeoutDuration(t *testing.T) {
	assert.Equal(t, 4096*time.Nanosecond, TimeoutDuration(0))
	assert.Equal(t, 4096*time.Nanosecond<<0x14, TimeoutDuration(0x14)) // 4.29 s, the RDMA CM default
	assert.Equal(t, time.Duration(4096)<<31, TimeoutDuration(31))
	assert.Equal(t, TimeoutDuration(1), TimeoutDuration(33), "only 5 bits count")
}
