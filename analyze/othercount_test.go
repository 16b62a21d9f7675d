package analyze_test

import (
	"cmp"
	"encoding/binary"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// otherFramesCapture writes a capture of frames that are not RDMA, of
// distinct counts per protocol: 1 ARP, 5 TCP to port 5201 (one of them
// back from it), 3 UDP to port 53, 2 LLDP, 6 of the unknown EtherType
// 0x88b5, 7 ICMPv6 and 4 ICMP echoes, and 2 MLD reports (ICMPv6 behind
// an IPv6 hop-by-hop options header).
func otherFramesCapture(t *testing.T) string {
	t.Helper()
	mac1, mac2 := net.HardwareAddr{2, 0, 0, 0, 0, 1}, net.HardwareAddr{2, 0, 0, 0, 0, 2}
	ip1, ip2 := net.IP{192, 168, 0, 1}, net.IP{192, 168, 0, 2}
	ip61, ip62 := net.ParseIP("fd00::1"), net.ParseIP("fd00::2")
	eth := func(typ gplayers.EthernetType) *gplayers.Ethernet {
		return &gplayers.Ethernet{SrcMAC: mac1, DstMAC: mac2, EthernetType: typ}
	}
	ip4 := func(proto gplayers.IPProtocol) *gplayers.IPv4 {
		return &gplayers.IPv4{Version: 4, TTL: 64, Protocol: proto, SrcIP: ip1, DstIP: ip2}
	}
	ser := func(ls ...gopacket.SerializableLayer) []byte {
		buf := gopacket.NewSerializeBuffer()
		require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...))
		return slices.Clone(buf.Bytes())
	}
	tcp := func(src, dst gplayers.TCPPort) []byte {
		ip := ip4(gplayers.IPProtocolTCP)
		l := &gplayers.TCP{SrcPort: src, DstPort: dst, Seq: 1, ACK: true, Window: 100}
		require.NoError(t, l.SetNetworkLayerForChecksum(ip))
		return ser(eth(gplayers.EthernetTypeIPv4), ip, l, gopacket.Payload("hello"))
	}
	udp := func(src, dst gplayers.UDPPort) []byte {
		ip := ip4(gplayers.IPProtocolUDP)
		l := &gplayers.UDP{SrcPort: src, DstPort: dst}
		require.NoError(t, l.SetNetworkLayerForChecksum(ip))
		return ser(eth(gplayers.EthernetTypeIPv4), ip, l, gopacket.Payload("query"))
	}
	arp := ser(eth(gplayers.EthernetTypeARP), &gplayers.ARP{AddrType: gplayers.LinkTypeEthernet, Protocol: gplayers.EthernetTypeIPv4,
		HwAddressSize: 6, ProtAddressSize: 4, Operation: 1, SourceHwAddress: mac1, SourceProtAddress: ip1, DstHwAddress: make([]byte, 6), DstProtAddress: ip2})
	// LLDP: chassis ID, port ID, TTL, end.
	lldp := ser(eth(gplayers.EthernetTypeLinkLayerDiscovery), gopacket.Payload{
		0x02, 0x07, 0x04, 2, 0, 0, 0, 0, 1, 0x04, 0x02, 0x07, '1', 0x06, 0x02, 0, 120, 0, 0})
	unknown := ser(eth(0x88b5), gopacket.Payload("local experimental ethertype"))
	icmp6 := func() []byte {
		ip := &gplayers.IPv6{Version: 6, NextHeader: gplayers.IPProtocolICMPv6, HopLimit: 64, SrcIP: ip61, DstIP: ip62}
		l := &gplayers.ICMPv6{TypeCode: gplayers.CreateICMPv6TypeCode(gplayers.ICMPv6TypeEchoRequest, 0)}
		require.NoError(t, l.SetNetworkLayerForChecksum(ip))
		return ser(eth(gplayers.EthernetTypeIPv6), ip, l, gopacket.Payload{0, 1, 0, 1})
	}()
	// An MLD report: ICMPv6 behind a hop-by-hop options header (router alert).
	mld := func() []byte {
		ip := &gplayers.IPv6{Version: 6, NextHeader: gplayers.IPProtocolIPv6HopByHop, HopLimit: 1, SrcIP: ip61, DstIP: net.ParseIP("ff02::16")}
		ip.HopByHop = &gplayers.IPv6HopByHop{}
		ip.HopByHop.NextHeader = gplayers.IPProtocolICMPv6
		ip.HopByHop.Options = []*gplayers.IPv6HopByHopOption{{OptionType: 5, OptionLength: 2, OptionData: []byte{0, 0}}, {OptionType: 1, OptionData: []byte{}}} // router alert, PadN
		l := &gplayers.ICMPv6{TypeCode: gplayers.CreateICMPv6TypeCode(143, 0)}
		require.NoError(t, l.SetNetworkLayerForChecksum(ip))
		return ser(eth(gplayers.EthernetTypeIPv6), ip, l, gopacket.Payload{0, 0, 0, 0})
	}()
	icmp := ser(eth(gplayers.EthernetTypeIPv4), ip4(gplayers.IPProtocolICMPv4),
		&gplayers.ICMPv4{TypeCode: gplayers.CreateICMPv4TypeCode(gplayers.ICMPv4TypeEchoRequest, 0), Id: 1, Seq: 1})
	var frames [][]byte
	add := func(f []byte, n int) {
		for range n {
			frames = append(frames, f)
		}
	}
	add(arp, 1)
	add(tcp(43021, 5201), 4)
	add(tcp(5201, 43021), 1)
	add(udp(40000, 53), 3)
	add(lldp, 2)
	add(unknown, 6)
	add(icmp6, 7)
	add(icmp, 4)
	add(mld, 2)
	path := filepath.Join(t.TempDir(), "others.pcap")
	fh, err := os.Create(path)
	require.NoError(t, err)
	w := pcapgo.NewWriter(fh)
	require.NoError(t, w.WriteFileHeader(65535, gplayers.LinkTypeEthernet))
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, f := range frames {
		require.NoError(t, w.WritePacket(gopacket.CaptureInfo{Timestamp: at.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(f), Length: len(f)}, f))
	}
	require.NoError(t, fh.Close())
	return path
}

// tsharkOthers counts the frames of a capture that tshark does not
// dissect as InfiniBand by protocol as OtherProtocol names it: TCP and
// UDP by the lower port, else the protocol tshark names after the IP
// header or the EtherType ("data": the EtherType's number).
func tsharkOthers(t *testing.T, path string) (list []analyze.OtherProtocol, total uint64) {
	t.Helper()
	tshark := testenv.Tshark(t)
	lines, stderr, err := testenv.TsharkFields(tshark, path, "a", "frame.protocols", "frame.len", "eth.type", "tcp.port", "udp.port")
	require.NoError(t, err, stderr)
	type key struct {
		proto string
		port  int
	}
	counts := map[key]*analyze.OtherProtocol{}
	for _, line := range lines {
		f := strings.Split(line, "|")
		require.Len(t, f, 5, line)
		protos := strings.Split(f[0], ":")
		if slices.Contains(protos, "infiniband") {
			continue
		}
		size, err := strconv.ParseUint(f[1], 10, 64)
		require.NoError(t, err)
		k := key{port: -1}
		lowest := func(ports string) int {
			var ps []int
			for _, s := range strings.Split(ports, ";")[:2] {
				p, err := strconv.Atoi(s)
				require.NoError(t, err, line)
				ps = append(ps, p)
			}
			return slices.Min(ps)
		}
		// The innermost IP header, else the EtherType; IPv6 extension
		// headers (ipv6.hopopts) are the IP header's.
		protos = slices.DeleteFunc(protos, func(p string) bool { return strings.HasPrefix(p, "ipv6.") })
		i := -1
		for j, p := range protos {
			if p == "ip" || p == "ipv6" || p == "ethertype" {
				i = j
			}
		}
		switch {
		case f[3] != "":
			k = key{"tcp", lowest(f[3])}
		case f[4] != "":
			k = key{"udp", lowest(f[4])}
		case i < 0 || i+1 >= len(protos):
			t.Fatalf("no protocol after the link header: %s", line)
		case protos[i+1] == "data":
			typ, err := strconv.ParseUint(strings.TrimPrefix(f[2], "0x"), 16, 16)
			require.NoError(t, err, line)
			k.proto = "ethertype 0x" + strconv.FormatUint(typ|0x10000, 16)[1:]
		default:
			k.proto = protos[i+1]
		}
		c := counts[k]
		if c == nil {
			c = &analyze.OtherProtocol{Protocol: k.proto}
			if k.port >= 0 {
				c.Port = &k.port
			}
			counts[k] = c
		}
		c.Frames++
		c.Bytes += size
		total++
	}
	for _, c := range counts {
		list = append(list, *c)
	}
	port := func(o analyze.OtherProtocol) int {
		if o.Port == nil {
			return -1
		}
		return *o.Port
	}
	// Most frames first; the captures compared tie only among TCP ports.
	slices.SortFunc(list, func(a, b analyze.OtherProtocol) int {
		return cmp.Or(cmp.Compare(b.Frames, a.Frames), cmp.Compare(port(a), port(b)), strings.Compare(a.Protocol, b.Protocol))
	})
	return list, total
}

// TestOtherProtocolsTshark checks the other frames' protocols against
// tshark's dissection of the same frames, the report whole and sharded.
func TestOtherProtocolsTshark(t *testing.T) {
	for _, tc := range []struct {
		name string
		path func(t *testing.T) string
	}{
		{"written", otherFramesCapture},
		{"nccl", func(*testing.T) string { return "../../shared/captures/nccl/node0.pcap" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.path(t)
			whole := analyzeFile(t, path, analyze.Options{}, 0, 0) // skips without the shared captures
			want, total := tsharkOthers(t, path)
			require.NotEmpty(t, want)
			var unlisted uint64
			if len(want) > 8 {
				for _, o := range want[8:] {
					unlisted += o.Frames
				}
				want = want[:8]
			}
			c := whole.Capture
			assert.Equal(t, total, c.OtherPackets)
			assert.Equal(t, want, c.OtherProtocols)
			assert.Equal(t, unlisted, c.OtherFramesUnlisted)

			frames, cis, lt := readFrames(t, path)
			s := analyze.NewSharded(analyze.Options{}, 3)
			var halves [2]*analyze.Analyzer
			for i := range halves {
				halves[i] = analyze.New(analyze.Options{})
			}
			for i, f := range frames {
				s.Feed(cis[i], lt, f)
				halves[i%2].Feed(cis[i], lt, f)
			}
			sharded, err := s.Finish()
			require.NoError(t, err)
			merged := halves[0].Finish()
			require.NoError(t, merged.Merge(halves[1].Finish()))
			for name, rep := range map[string]*analyze.Report{"sharded": sharded, "merged": merged} {
				assert.Equal(t, c.OtherProtocols, rep.Capture.OtherProtocols, name)
				assert.Equal(t, c.OtherFramesUnlisted, rep.Capture.OtherFramesUnlisted, name)
			}
		})
	}
}

// TestOtherProtocolsNoAlloc checks that counting a frame that is not
// RDMA allocates nothing once its protocol has been seen.
func TestOtherProtocolsNoAlloc(t *testing.T) {
	frames, cis, lt := readFrames(t, otherFramesCapture(t))
	// Without the MLD reports: gopacket's IPv6 decoding allocates the
	// hop-by-hop options (it did before frames were counted by protocol).
	for i := 0; i < len(frames); {
		if f := frames[i]; binary.BigEndian.Uint16(f[12:]) == uint16(gplayers.EthernetTypeIPv6) && f[20] == uint8(gplayers.IPProtocolIPv6HopByHop) {
			frames, cis = slices.Delete(frames, i, i+1), slices.Delete(cis, i, i+1)
			continue
		}
		i++
	}
	require.Len(t, frames, 28)
	a := analyze.New(analyze.Options{})
	feed := func() {
		for i, f := range frames {
			a.Feed(cis[i], lt, f)
		}
	}
	feed()
	assert.Zero(t, testing.AllocsPerRun(10, feed))
	rep := a.Finish()
	assert.Equal(t, uint64(len(frames))*12, rep.Capture.OtherPackets) // feed, AllocsPerRun's warm-up and its 10 runs
}

// TestOtherProtocolsWhereTheWalkStops: a Linux cooked capture's (SLL,
// tcpdump -i any) frame that is not IP is named by the protocol its SLL
// header gives, as tshark's sll:ethertype:arp, not by the link type; a
// tunnel's inner frame whose IPv4 header the snap length cut is named by
// its inner EtherType ("ipv4", as tshark's …:eth:ethertype:ip), not by the
// outer IP's protocol.
func TestOtherProtocolsWhereTheWalkStops(t *testing.T) {
	arp := append([]byte{0, 1, 8, 0, 6, 4, 0, 1}, make([]byte, 20)...)
	sll := append([]byte{0, 0, 0, 1, 0, 6, 2, 0, 0, 0, 0, 1, 0, 0, 0x08, 0x06}, arp...)

	frames, cis, lt, err := loadFrames("../testdata/erspan3_vxlan.pcap")
	require.NoError(t, err)
	// Cut the first data frame inside its inner IPv4 header: the outer
	// Ethernet, IPv4, GRE and ERSPAN III headers, the inner Ethernet,
	// IPv4 and UDP and VXLAN, then the innermost Ethernet and 10 bytes.
	inner := frames[len(frames)/2]
	cut := 14 + 20 + 4 + 12 + 14 + 20 + 8 + 8 + 14 + 10
	ci := cis[len(frames)/2]
	ci.CaptureLength = cut

	for _, tc := range []struct {
		name string
		lt   gplayers.LinkType
		data []byte
		ci   gopacket.CaptureInfo
		want string
	}{
		{"SLL ARP", gplayers.LinkTypeLinuxSLL, sll, gopacket.CaptureInfo{Timestamp: cis[0].Timestamp, CaptureLength: len(sll), Length: len(sll)}, "arp"},
		{"inner IPv4 cut", lt, inner[:cut], ci, "ipv4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := analyze.New(analyze.Options{})
			a.Feed(tc.ci, tc.lt, tc.data)
			c := a.Report().Capture
			require.Equal(t, uint64(1), c.OtherPackets)
			require.Len(t, c.OtherProtocols, 1)
			assert.Equal(t, tc.want, c.OtherProtocols[0].Protocol)
		})
	}
}
