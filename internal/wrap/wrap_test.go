package wrap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    Chain
		wantErr bool
	}{
		{"", nil, false},
		{"  ", nil, false},
		{"erspan2", Chain{ERSPAN2}, false},
		{"erspan2,vxlan", Chain{ERSPAN2, VXLAN}, false},
		{" ERSPAN3-Platform , geneve,nvgre ", Chain{ERSPAN3Platform, Geneve, NVGRE}, false},
		{"qinq,mpls,erspan1,erspan3", Chain{QinQ, MPLS, ERSPAN1, ERSPAN3}, false},
		{"vxlan,,geneve", nil, true},
		{"gre", nil, true},
		{"vxlan,", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := Parse(tc.in)
			if tc.wantErr {
				require.Error(t, err)
				for _, n := range Names() {
					assert.Contains(t, err.Error(), n)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			if len(got) > 1 { // "erspan2/vxlan" names a chain, Parse reads a list
				_, err := Parse(got.String())
				require.Error(t, err)
			}
		})
	}
}

func TestKinds(t *testing.T) {
	want := map[Kind]int{ERSPAN1: 38, ERSPAN2: 50, ERSPAN3: 54, ERSPAN3Platform: 62, VXLAN: 50, Geneve: 58, NVGRE: 42, QinQ: 4, MPLS: 8}
	require.Len(t, Kinds(), len(want))
	for _, k := range Kinds() {
		assert.Equal(t, want[k], k.Overhead(), "%s", k)
		got, err := ParseKind(k.String())
		require.NoError(t, err)
		assert.Equal(t, k, got)
	}
	assert.False(t, Kind(0).Valid())
	assert.Equal(t, 0, Kind(200).Overhead())
	assert.Equal(t, "Kind(200)", Kind(200).String())
	assert.Equal(t, "erspan2/vxlan", Chain{ERSPAN2, VXLAN}.String())
	assert.Equal(t, 100, Chain{ERSPAN2, VXLAN}.Overhead())
}

func TestConfigErrors(t *testing.T) {
	v6 := netip.MustParseAddr("2001:db8::1")
	tests := []struct {
		name string
		w    Wrapper
	}{
		{"empty chain", Wrapper{}},
		{"invalid kind", Wrapper{Chain: Chain{VXLAN, Kind(99)}}},
		{"session ID", Wrapper{Chain: Chain{ERSPAN2}, SessionID: 1024}},
		{"VNI", Wrapper{Chain: Chain{VXLAN}, VNI: 1 << 24}},
		{"S-VLAN", Wrapper{Chain: Chain{QinQ}, SVID: 4095}},
		{"reserved label", Wrapper{Chain: Chain{MPLS}, Labels: [2]uint32{3, 100}}},
		{"label over 20 bits", Wrapper{Chain: Chain{MPLS}, Labels: [2]uint32{100, 1 << 20}}},
		{"IPv6 mirror", Wrapper{Chain: Chain{ERSPAN1}, MirrorDst: v6}},
		{"IPv6 underlay", Wrapper{Chain: Chain{VXLAN}, Underlay: netip.PrefixFrom(v6, 64)}},
		{"underlay too narrow", Wrapper{Chain: Chain{VXLAN}, Underlay: netip.MustParsePrefix("10.9.9.9/31")}},
	}
	frame := make([]byte, 60)
	binary.BigEndian.PutUint16(frame[12:], 0x0800)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, tc.w.Check(), ErrConfig)
			out, n, err := tc.w.Wrap([]byte{1}, frame, 60, time.Time{})
			require.ErrorIs(t, err, ErrConfig)
			assert.Equal(t, []byte{1}, out)
			assert.Zero(t, n)
		})
	}
	require.NoError(t, (&Wrapper{Chain: Chain{VXLAN}}).Check())
}

func TestFrameErrors(t *testing.T) {
	ip := make([]byte, 100)
	binary.BigEndian.PutUint16(ip[12:], 0x0800)
	v1 := slices.Clone(ip)
	binary.BigEndian.PutUint16(v1[12:], 0x8915)
	cutTag := slices.Clone(ip[:16])
	binary.BigEndian.PutUint16(cutTag[12:], 0x8100)
	tests := []struct {
		name  string
		chain Chain
		frame []byte
		orig  int
	}{
		{"no Ethernet header", Chain{ERSPAN2}, ip[:13], 13},
		{"original length below the captured", Chain{VXLAN}, ip, 99},
		{"outer IPv4 over 65535", Chain{VXLAN}, ip, 65535 - 35},
		{"nested outer IPv4 over 65535", Chain{ERSPAN1, QinQ}, ip, 65535 - 27},
		{"mpls of RoCE v1", Chain{MPLS}, v1, 100},
		{"mpls of RoCE v1 inside VXLAN", Chain{VXLAN, MPLS}, v1, 100},
		{"mpls of a frame cut in its tag", Chain{MPLS}, cutTag, 100},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := &Wrapper{Chain: tc.chain}
			out, n, err := w.Wrap(nil, tc.frame, tc.orig, time.Time{})
			require.ErrorIs(t, err, ErrFrame)
			assert.Nil(t, out)
			assert.Zero(t, n)
			assert.Empty(t, w.Truth().Chains, "an error counts nothing")
			assert.Empty(t, w.Truth().Tunnels)
		})
	}
	// The largest frame that fits.
	_, n, err := (&Wrapper{Chain: Chain{VXLAN}}).Wrap(nil, ip, 65535-36, time.Time{})
	require.NoError(t, err)
	assert.Equal(t, 65535+14, n)
}

// testChains are the chains every capture is wrapped in: each kind, and
// nestings.
func testChains() []Chain {
	var out []Chain
	for _, k := range Kinds() {
		out = append(out, Chain{k})
	}
	return append(out,
		Chain{ERSPAN2, VXLAN},
		Chain{ERSPAN3, Geneve},
		Chain{ERSPAN3Platform, NVGRE},
		Chain{ERSPAN1, QinQ},
		Chain{VXLAN, MPLS},
		Chain{QinQ, MPLS},
		Chain{MPLS, MPLS},
		Chain{Geneve, ERSPAN2},
		Chain{ERSPAN2, ERSPAN3, QinQ},
	)
}

// level is what a test knows of one encapsulation while taking a wrapped
// frame apart.
type level struct {
	kind  Kind
	wire  int // wire length of the frame at this level
	seq   uint32
	ts    time.Time
	w     *Wrapper
	vteps map[string]netip.Addr // inner host → VTEP, over the capture
	ports map[string]uint16     // inner flow → UDP source port
}

func mac(a netip.Addr) net.HardwareAddr {
	v := a.As4()
	return net.HardwareAddr{0x02, 0x77, v[0], v[1], v[2], v[3]}
}

// checkLevel decodes b (the frame at this level) with gopacket, checks
// the fields of the outermost encapsulation and returns the frame inside.
func checkLevel(t *testing.T, lv *level, b []byte) []byte {
	t.Helper()
	k := lv.kind
	pkt := gopacket.NewPacket(b, gplayers.LayerTypeEthernet, gopacket.Default)
	eth, ok := pkt.Layer(gplayers.LayerTypeEthernet).(*gplayers.Ethernet)
	require.True(t, ok)
	inner := unwrapOne(t, k, b)
	switch k {
	case QinQ:
		assert.Equal(t, gplayers.EthernetTypeQinQ, eth.EthernetType)
		tag, ok := pkt.Layer(gplayers.LayerTypeDot1Q).(*gplayers.Dot1Q)
		require.True(t, ok)
		assert.Equal(t, uint16(defaultSVID), tag.VLANIdentifier)
		return inner
	case MPLS:
		var labels []*gplayers.MPLS
		for _, l := range pkt.Layers() {
			if m, ok := l.(*gplayers.MPLS); ok {
				labels = append(labels, m)
			}
		}
		require.GreaterOrEqual(t, len(labels), 2)
		assert.Equal(t, defaultLabels[0], labels[0].Label)
		assert.Equal(t, defaultLabels[1], labels[1].Label)
		assert.False(t, labels[0].StackBottom)
		assert.Equal(t, len(labels) == 2, labels[1].StackBottom)
		assert.Equal(t, uint8(64), labels[0].TTL)
		return inner
	}
	// An outer IPv4 header: addresses, lengths of the wire, checksum.
	require.Equal(t, gplayers.EthernetTypeIPv4, eth.EthernetType)
	ip, ok := pkt.Layer(gplayers.LayerTypeIPv4).(*gplayers.IPv4)
	require.True(t, ok)
	assert.Equal(t, uint16(lv.wire-14), ip.Length, "outer IPv4 length: the wire's")
	assert.Zero(t, ipv4Checksum(b[14:34]), "outer IPv4 checksum")
	assert.Equal(t, uint8(64), ip.TTL)
	assert.Equal(t, gplayers.IPv4DontFragment, ip.Flags)
	src, _ := netip.AddrFromSlice(ip.SrcIP.To4())
	dst, _ := netip.AddrFromSlice(ip.DstIP.To4())
	assert.Equal(t, mac(src), eth.SrcMAC)
	assert.Equal(t, mac(dst), eth.DstMAC)
	fi := readFrame(inner)
	switch k {
	case ERSPAN1, ERSPAN2, ERSPAN3, ERSPAN3Platform:
		assert.Equal(t, defaultMirrorSrc, src)
		assert.Equal(t, defaultMirrorDst, dst)
		assert.Equal(t, gplayers.IPProtocolGRE, ip.Protocol)
		gre, ok := pkt.Layer(gplayers.LayerTypeGRE).(*gplayers.GRE)
		require.True(t, ok)
		assert.False(t, gre.KeyPresent)
		if k == ERSPAN1 {
			assert.Equal(t, gplayers.EthernetTypeERSPAN, gre.Protocol)
			assert.False(t, gre.SeqPresent)
			break
		}
		assert.True(t, gre.SeqPresent)
		assert.Equal(t, lv.seq, gre.Seq)
		if k == ERSPAN2 {
			assert.Equal(t, gplayers.EthernetTypeERSPAN, gre.Protocol)
			e, ok := pkt.Layer(gplayers.LayerTypeERSPANII).(*gplayers.ERSPANII)
			require.True(t, ok)
			assert.Equal(t, uint8(1), e.Version)
			assert.Equal(t, uint16(defaultSessionID), e.SessionID)
			assert.Equal(t, uint32(1), e.Index)
			assert.Equal(t, fi.vlan(), e.VLANIdentifier)
			assert.Equal(t, fi.cos(), e.CoS)
			assert.False(t, e.IsTruncated)
			break
		}
		assert.Equal(t, gplayers.EthernetType(0x22EB), gre.Protocol)
		checkERSPAN3(t, lv, gre.Payload, &fi)
	default:
		if fi.ip {
			assert.Equal(t, fi.tos, ip.TOS, "DSCP and ECN copied")
		}
		assert.True(t, defaultUnderlay.Contains(src) && defaultUnderlay.Contains(dst), "%s → %s", src, dst)
		// One VTEP per inner host, the same for every frame.
		for _, h := range []struct {
			host string
			vtep netip.Addr
		}{{fmt.Sprint(fi.src), src}, {fmt.Sprint(fi.dst), dst}} {
			if prev, ok := lv.vteps[h.host]; ok {
				assert.Equal(t, prev, h.vtep, "VTEP of %s", h.host)
			}
			lv.vteps[h.host] = h.vtep
		}
		if k == NVGRE {
			gre, ok := pkt.Layer(gplayers.LayerTypeGRE).(*gplayers.GRE)
			require.True(t, ok)
			assert.True(t, gre.KeyPresent)
			assert.False(t, gre.SeqPresent)
			assert.Equal(t, gplayers.EthernetTypeTransparentEthernetBridging, gre.Protocol)
			assert.Equal(t, uint32(defaultVNI), gre.Key>>8, "VSID")
			break
		}
		udp, ok := pkt.Layer(gplayers.LayerTypeUDP).(*gplayers.UDP)
		require.True(t, ok)
		assert.Equal(t, uint16(lv.wire-34), udp.Length, "outer UDP length: the wire's")
		assert.Zero(t, udp.Checksum)
		assert.GreaterOrEqual(t, uint16(udp.SrcPort), uint16(49152))
		flow := fmt.Sprint(fi.src, fi.dst, inner[min(len(inner), 14):min(len(inner), 60)])
		if prev, ok := lv.ports[flow]; ok {
			assert.Equal(t, prev, uint16(udp.SrcPort), "one source port per inner flow")
		}
		lv.ports[flow] = uint16(udp.SrcPort)
		if k == VXLAN {
			assert.Equal(t, gplayers.UDPPort(4789), udp.DstPort)
			vx, ok := pkt.Layer(gplayers.LayerTypeVXLAN).(*gplayers.VXLAN)
			require.True(t, ok)
			assert.True(t, vx.ValidIDFlag)
			assert.Equal(t, uint32(defaultVNI), vx.VNI)
			break
		}
		assert.Equal(t, gplayers.UDPPort(6081), udp.DstPort)
		g, ok := pkt.Layer(gplayers.LayerTypeGeneve).(*gplayers.Geneve)
		require.True(t, ok)
		assert.Equal(t, uint32(defaultVNI), g.VNI)
		assert.Equal(t, gplayers.EthernetTypeTransparentEthernetBridging, g.Protocol)
		require.Len(t, g.Options, 1)
		assert.Equal(t, uint16(0xFFF0), g.Options[0].Class)
		assert.Equal(t, uint8(8), g.Options[0].Length)
		assert.Len(t, g.Contents, 16)
	}
	return inner
}

// checkERSPAN3 reads an ERSPAN III header as draft-foschiano-erspan-03
// lays it out.
func checkERSPAN3(t *testing.T, lv *level, h []byte, fi *frameInfo) {
	t.Helper()
	require.GreaterOrEqual(t, len(h), 12)
	w0 := binary.BigEndian.Uint16(h[0:])
	w1 := binary.BigEndian.Uint16(h[2:])
	w5 := binary.BigEndian.Uint16(h[10:])
	assert.Equal(t, uint16(2), w0>>12, "Ver")
	assert.Equal(t, fi.vlan(), w0&0x0FFF, "VLAN")
	assert.Equal(t, uint16(fi.cos()), w1>>13, "COS")
	bso := uint16(0)
	if lv.wire-lv.kind.Overhead() > 1514 {
		bso = 2
	}
	assert.Equal(t, bso, w1>>11&3, "BSO")
	assert.Zero(t, w1>>10&1, "T")
	assert.Equal(t, uint16(defaultSessionID), w1&0x3FF, "session ID")
	assert.Zero(t, binary.BigEndian.Uint16(h[8:]), "SGT")
	assert.Equal(t, uint16(1), w5>>15, "P")
	assert.Zero(t, w5>>10&0x1F, "FT")
	assert.Equal(t, uint16(1), w5>>4&0x3F, "HwID")
	assert.Zero(t, w5>>3&1, "D")
	stamp := binary.BigEndian.Uint32(h[4:])
	if lv.kind == ERSPAN3 {
		assert.Zero(t, w5>>1&3, "Gra: 100 µs")
		assert.Zero(t, w5&1, "O")
		assert.Equal(t, uint32(lv.ts.UnixNano()/100000), stamp)
		return
	}
	assert.Equal(t, uint16(2), w5>>1&3, "Gra: IEEE 1588")
	assert.Equal(t, uint16(1), w5&1, "O")
	require.GreaterOrEqual(t, len(h), 20)
	sub := binary.BigEndian.Uint32(h[12:])
	assert.Equal(t, uint32(3), sub>>26, "platform ID")
	assert.Equal(t, uint32(1), sub&0x3FFF, "port index")
	sec := binary.BigEndian.Uint32(h[16:])
	assert.Equal(t, lv.ts.UnixNano(), time.Unix(int64(sec), int64(stamp)).UnixNano(), "1588 timestamp")
}

// TestWrapCaptures wraps the frames of real captures in every test chain
// and takes each wrapped frame apart level by level with gopacket: the
// outer fields are right and the frame inside is the original, byte for
// byte, cut where it was.
func TestWrapCaptures(t *testing.T) {
	for _, path := range ethernetCaptures(t) {
		frames := readCapture(t, path)
		if len(frames) > 200 {
			frames = frames[:200]
		}
		for _, chain := range testChains() {
			t.Run(filepath.Base(path)+"/"+chain.String(), func(t *testing.T) {
				w := &Wrapper{Chain: chain}
				levels := make([]*level, len(chain))
				for i, k := range chain {
					levels[i] = &level{kind: k, w: w, vteps: map[string]netip.Addr{}, ports: map[string]uint16{}}
				}
				var out []byte
				wrapped := 0
				for n, f := range frames {
					var orig int
					var err error
					out, orig, err = w.Wrap(out[:0], f.data, f.ci.Length, f.ci.Timestamp)
					if chain.Contains(MPLS) && readFrame(f.data).etherType == 0x8915 {
						require.ErrorIs(t, err, ErrFrame, "frame %d", n+1)
						continue
					}
					require.NoError(t, err, "frame %d", n+1)
					wrapped++
					require.Equal(t, f.ci.Length+chain.Overhead(), orig)
					require.Len(t, out, len(f.data)+chain.Overhead())
					cur, wire := out, orig
					for _, lv := range levels {
						lv.wire, lv.seq, lv.ts = wire, uint32(wrapped-1), f.ci.Timestamp
						cur = checkLevel(t, lv, cur)
						wire -= lv.kind.Overhead()
					}
					require.Equal(t, f.data, cur, "frame %d: the inner frame is the original", n+1)
					checkInnerLayers(t, f.data, out)
				}
				tr := w.Truth()
				if wrapped == 0 {
					assert.Empty(t, tr.Chains)
					return
				}
				assert.Equal(t, map[string]int{chain.String(): wrapped}, tr.Chains)
				perKind := map[string]int{}
				for _, tu := range tr.Tunnels {
					perKind[tu.Kind] += tu.Frames
				}
				for _, k := range chain {
					assert.Equal(t, wrapped*countOf(chain, k), perKind[k.String()], "frames through %s tunnels", k)
				}
			})
		}
	}
}

// Contains is for the tests: whether c uses k.
func (c Chain) Contains(k Kind) bool { return slices.Contains(c, k) }

func countOf(c Chain, k Kind) int {
	n := 0
	for _, x := range c {
		if x == k {
			n++
		}
	}
	return n
}

// checkInnerLayers decodes the whole wrapped frame with gopacket: the
// innermost IP, UDP and IB transport headers are the original ones.
func checkInnerLayers(t *testing.T, orig, wrapped []byte) {
	t.Helper()
	want := lastLayers(gopacket.NewPacket(orig, gplayers.LayerTypeEthernet, gopacket.Default))
	got := lastLayers(gopacket.NewPacket(wrapped, gplayers.LayerTypeEthernet, gopacket.Default))
	for _, lt := range []gopacket.LayerType{gplayers.LayerTypeIPv4, gplayers.LayerTypeIPv6, gplayers.LayerTypeUDP, layers.LayerTypeGRH, layers.LayerTypeBTH} {
		if w, ok := want[lt]; ok {
			require.Contains(t, got, lt)
			assert.Equal(t, w.LayerContents(), got[lt].LayerContents(), "%s", lt)
		}
	}
	if w, ok := want[layers.LayerTypeBTH].(*layers.BTH); ok {
		g := got[layers.LayerTypeBTH].(*layers.BTH)
		assert.Equal(t, w.DestQP, g.DestQP)
		assert.Equal(t, w.PSN, g.PSN)
	}
}

// lastLayers maps each layer type to its last (innermost) layer.
func lastLayers(p gopacket.Packet) map[gopacket.LayerType]gopacket.Layer {
	m := map[gopacket.LayerType]gopacket.Layer{}
	for _, l := range p.Layers() {
		m[l.LayerType()] = l
	}
	return m
}

// TestTruth checks the tunnels of a two-host capture: one ERSPAN session,
// one VXLAN tunnel each way between the hosts' VTEPs.
func TestTruth(t *testing.T) {
	frames := readCapture(t, filepath.Join("..", "..", "testdata", "write_bw_ipv4.pcap"))
	w := &Wrapper{Chain: Chain{ERSPAN2, VXLAN}, SessionID: 9, VNI: 77}
	var out []byte
	for _, f := range frames {
		var err error
		out, _, err = w.Wrap(out[:0], f.data, f.ci.Length, f.ci.Timestamp)
		require.NoError(t, err)
	}
	tr := w.Truth()
	assert.Equal(t, map[string]int{"erspan2/vxlan": len(frames)}, tr.Chains)
	require.Len(t, tr.Tunnels, 3)
	there, session, back := tr.Tunnels[0], tr.Tunnels[1], tr.Tunnels[2]
	assert.Equal(t, Tunnel{Kind: "vxlan", Src: "172.16.0.1", Dst: "172.16.0.2", ID: 77, Frames: there.Frames}, there)
	assert.Equal(t, Tunnel{Kind: "vxlan", Src: "172.16.0.2", Dst: "172.16.0.1", ID: 77, Frames: back.Frames}, back)
	assert.Equal(t, Tunnel{Kind: "erspan2", Src: "192.0.2.1", Dst: "192.0.2.2", ID: 9, Frames: len(frames)}, session)
	assert.Equal(t, len(frames), there.Frames+back.Frames)
	assert.Positive(t, back.Frames)

	// Truth is a copy.
	tr.Tunnels[0].Frames = -1
	tr.Chains["x"] = 1
	assert.Equal(t, there, w.Truth().Tunnels[0])
	assert.NotContains(t, w.Truth().Chains, "x")
}

// TestConfigured checks the configured IDs, labels and addresses.
func TestConfigured(t *testing.T) {
	frames := readCapture(t, filepath.Join("..", "..", "testdata", "atomic_vlan.pcap"))
	f := frames[len(frames)/2]
	w := &Wrapper{Chain: Chain{ERSPAN3, Geneve, NVGRE, QinQ, MPLS}, SessionID: 1023, VNI: 0xABCDEF, SVID: 4094,
		Labels:    [2]uint32{16, 0xFFFFF},
		MirrorSrc: netip.MustParseAddr("10.200.0.1"), MirrorDst: netip.MustParseAddr("10.200.0.9"),
		Underlay: netip.MustParsePrefix("100.64.7.0/24")}
	out, _, err := w.Wrap(nil, f.data, f.ci.Length, f.ci.Timestamp)
	require.NoError(t, err)
	tr := w.Truth()
	require.Len(t, tr.Tunnels, 5)
	byKind := map[string]Tunnel{}
	for _, tu := range tr.Tunnels {
		byKind[tu.Kind] = tu
	}
	assert.Equal(t, Tunnel{Kind: "mpls", ID: 16, Frames: 1}, byKind["mpls"])
	assert.Equal(t, Tunnel{Kind: "qinq", ID: 4094, Frames: 1}, byKind["qinq"])
	assert.Equal(t, Tunnel{Kind: "nvgre", Src: "100.64.7.1", Dst: "100.64.7.2", ID: 0xABCDEF, Frames: 1}, byKind["nvgre"])
	// Geneve's inner hosts are the NVGRE VTEPs: two VTEPs more.
	assert.Equal(t, Tunnel{Kind: "geneve", Src: "100.64.7.3", Dst: "100.64.7.4", ID: 0xABCDEF, Frames: 1}, byKind["geneve"])
	assert.Equal(t, Tunnel{Kind: "erspan3", Src: "10.200.0.1", Dst: "10.200.0.9", ID: 1023, Frames: 1}, byKind["erspan3"])
	// ERSPAN III: session 1023 in the low 10 bits.
	e := out[14+20+8:]
	assert.Equal(t, uint16(1023), binary.BigEndian.Uint16(e[2:])&0x3FF)
	// The label stack, top first, bottom of stack on the second.
	inner := out[len(out)-len(f.data)-8-4:]
	at := 12 + 4 + 4 // S-tag, C-tag
	assert.Equal(t, []byte{0x88, 0x47}, inner[at:at+2])
	top, bottom := binary.BigEndian.Uint32(inner[at+2:]), binary.BigEndian.Uint32(inner[at+6:])
	assert.Equal(t, uint32(16), top>>12)
	assert.Equal(t, uint32(0xFFFFF), bottom>>12)
	assert.Zero(t, top&0x100)
	assert.NotZero(t, bottom&0x100)
}

// TestSnapCut wraps a frame cut at several lengths: the outer lengths say
// the wire length, the captured bytes are kept.
func TestSnapCut(t *testing.T) {
	frames := readCapture(t, filepath.Join("..", "..", "testdata", "write_bw_ipv4.pcap"))
	var f capFrame
	for _, x := range frames {
		if len(x.data) > 1000 {
			f = x
			break
		}
	}
	require.NotNil(t, f.data)
	for _, snap := range []int{14, 34, 64, 128, len(f.data)} { // 14: the EtherType says IPv4, MPLS wraps it
		for _, chain := range testChains() {
			w := &Wrapper{Chain: chain}
			out, orig, err := w.Wrap(nil, f.data[:snap], f.ci.Length, f.ci.Timestamp)
			require.NoError(t, err, "%s snap %d", chain, snap)
			assert.Equal(t, f.ci.Length+chain.Overhead(), orig)
			assert.Len(t, out, snap+chain.Overhead())
			if chain[0].Overhead() > 8 { // an outer IPv4 header
				assert.Equal(t, uint16(orig-14), binary.BigEndian.Uint16(out[16:]), "%s snap %d", chain, snap)
			}
		}
	}
}

// TestSequence checks GRE sequence numbers increase per Wrapper and are
// not used by a failed Wrap.
func TestSequence(t *testing.T) {
	frame := make([]byte, 80)
	binary.BigEndian.PutUint16(frame[12:], 0x0800)
	frame[14] = 0x45
	w := &Wrapper{Chain: Chain{ERSPAN2, MPLS}}
	for i := range 5 {
		out, _, err := w.Wrap(nil, frame, 80, time.Time{})
		require.NoError(t, err)
		assert.Equal(t, uint32(i), binary.BigEndian.Uint32(out[14+20+4:]))
		binary.BigEndian.PutUint16(frame[12:], 0x8915)
		_, _, err = w.Wrap(nil, frame, 80, time.Time{})
		require.True(t, errors.Is(err, ErrFrame))
		binary.BigEndian.PutUint16(frame[12:], 0x0800)
	}
}
