package analyze_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/analyzetest"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

// sharded analyzes frames on n shards by HostPairKey, as the command
// does, fed in frame order from one goroutine and sharing the caps'
// budgets, and combines them.
func sharded(t *testing.T, frames [][]byte, cis []gopacket.CaptureInfo, lt gplayers.LinkType, opts analyze.Options, n int) (*analyze.Report, error) {
	t.Helper()
	opts = analyze.AsShard(opts)
	budget := analyze.NewBudget(opts.MaxFlows, opts.MaxConnections)
	shards := make([]*analyze.Analyzer, n)
	for i := range shards {
		shards[i] = budget.New(opts)
	}
	for i, fr := range frames {
		key := analyze.HostPairKey(lt, fr)
		shards[key%uint64(n)].FeedShard(uint64(i+1), key, cis[i], lt, fr)
	}
	parts := make([]*analyze.Report, n)
	for i, a := range shards {
		parts[i] = a.Finish()
	}
	return analyze.CombineShards(parts, opts)
}

func sequential(frames [][]byte, cis []gopacket.CaptureInfo, lt gplayers.LinkType, opts analyze.Options) *analyze.Report {
	a := analyze.New(opts)
	for i, fr := range frames {
		a.Feed(cis[i], lt, fr)
	}
	return a.Finish()
}

// mixFrames generates a roce-synth capture and returns its frames.
func mixFrames(t *testing.T, cfg synth.Config) ([][]byte, []gopacket.CaptureInfo, gplayers.LinkType) {
	t.Helper()
	var buf bytes.Buffer
	_, err := synth.Generate(cfg, &buf, nil)
	require.NoError(t, err)
	r, err := pcapgo.NewReader(&buf)
	require.NoError(t, err)
	var frames [][]byte
	var cis []gopacket.CaptureInfo
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		frames, cis = append(frames, data), append(cis, ci)
	}
	return frames, cis, r.LinkType()
}

// TestCombineShardsCaps: the library's caps (MaxFindings, which the
// command has no flag for, and MaxFlows) give the sequential report's
// findings, malformed frames and flows when the shards are combined: the
// sequential Analyzer is the oracle, compared as JSON.
func TestCombineShardsCaps(t *testing.T) {
	frames, cis, lt := mixFrames(t, synth.Config{Scenario: synth.ScenarioMix, Packets: 6000, QPs: 64, Seed: 5})
	// Findings of many host pairs: a bad ICRC every 50 frames, a frame
	// dropped every 70 (PSN gaps, missing requests).
	for i := 0; i < len(frames); i += 50 {
		frames[i][len(frames[i])-1] ^= 0x5A
	}
	for i := len(frames) - 1; i > 0; i -= 70 {
		frames, cis = append(frames[:i], frames[i+1:]...), append(cis[:i], cis[i+1:]...)
	}
	// Malformed frames of several host pairs: an IPv4 RoCE v2 frame cut
	// inside its BTH, renamed.
	for i := range 40 {
		fr := append([]byte(nil), frames[len(frames)/2+i]...)
		if len(fr) < 14+20+8+4 || binary.BigEndian.Uint16(fr[12:14]) != uint16(gplayers.EthernetTypeIPv4) {
			continue
		}
		fr = fr[:14+20+8+4]
		pos := 100 * (i + 1)
		ci := cis[pos]
		ci.CaptureLength = len(fr)
		frames = append(frames[:pos], append([][]byte{fr}, frames[pos:]...)...)
		cis = append(cis[:pos], append([]gopacket.CaptureInfo{ci}, cis[pos:]...)...)
	}
	for _, o := range []analyze.Options{
		{},
		{MaxFindings: 1},
		{MaxFindings: 7},
		{MaxFindings: 60},
		{MaxFlows: 1},
		{MaxFlows: 9, MaxFindings: 13},
		{MaxFlows: 100},
		{File: "x.pcap", Interval: time.Microsecond},
	} {
		t.Run(fmt.Sprintf("flows%d_findings%d", o.MaxFlows, o.MaxFindings), func(t *testing.T) {
			want, err := json.Marshal(sequential(frames, cis, lt, o))
			require.NoError(t, err)
			for _, n := range []int{2, 3, 5} {
				rep, err := sharded(t, frames, cis, lt, o, n)
				require.NoError(t, err)
				got, err := json.Marshal(rep)
				require.NoError(t, err)
				require.JSONEq(t, string(want), string(got), "%d shards", n)
				require.Equal(t, string(want), string(got), "%d shards", n)
			}
		})
	}
}

// ipv4Frame is an Ethernet/IPv4/UDP 4791 frame with a BTH (zeros).
func ipv4Frame(src, dst net.IP) []byte {
	eth := &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: src, DstIP: dst}
	udp := &gplayers.UDP{SrcPort: 1234, DstPort: 4791}
	_ = udp.SetNetworkLayerForChecksum(ip)
	buf := gopacket.NewSerializeBuffer()
	_ = gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, eth, ip, udp, gopacket.Payload(make([]byte, 16)))
	return buf.Bytes()
}

// grhBytes is a 40-byte GRH (or IPv6 header) between two GIDs.
func grhBytes(sgid, dgid net.IP) []byte {
	g := make([]byte, 40)
	g[0] = 0x60
	g[6] = 0x1B // next header: BTH
	copy(g[8:24], sgid.To16())
	copy(g[24:40], dgid.To16())
	return g
}

// TestHostPairKey checks the keys against hand-built frames: a pair is
// unordered, an IPv4-mapped GID is its IPv4 address, native IB is keyed
// by its LIDs unless a GRH follows the LRH, and a frame without
// addresses has key 0.
func TestHostPairKey(t *testing.T) {
	a, b, c := net.IPv4(10, 0, 0, 1), net.IPv4(10, 0, 0, 2), net.IPv4(10, 0, 0, 3)
	ab := analyze.HostPairKey(gplayers.LinkTypeEthernet, ipv4Frame(a, b))
	require.NotZero(t, ab)
	lrh := func(slid, dlid uint16, lnh byte) []byte {
		return []byte{0x00, lnh, byte(dlid >> 8), byte(dlid), 0x00, 0x20, byte(slid >> 8), byte(slid)}
	}
	roce1 := func(s, d net.IP) []byte {
		return append([]byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x89, 0x15}, grhBytes(s, d)...)
	}
	erfEth := func(frame []byte) []byte {
		h := make([]byte, 16)
		h[8] = layers.ERFTypeEthernet
		binary.BigEndian.PutUint16(h[14:16], uint16(len(frame)))
		return append(append(h, 0, 0), frame...)
	}
	gidA, gidB := net.ParseIP("fe80::2:c903:0:1"), net.ParseIP("fe80::2:c903:0:2")
	for _, tc := range []struct {
		name string
		lt   gplayers.LinkType
		data []byte
		same bool // key equal to ab
	}{
		{"reverse direction", gplayers.LinkTypeEthernet, ipv4Frame(b, a), true},
		{"RoCE v1, IPv4-mapped GIDs", gplayers.LinkTypeEthernet, roce1(a.To16(), b.To16()), true},
		{"raw IPv4", gplayers.LinkTypeRaw, ipv4Frame(b, a)[14:], true},
		{"ERF Ethernet record", layers.LinkTypeERF, erfEth(ipv4Frame(a, b)), true},
		{"VLAN", gplayers.LinkTypeEthernet, append(append(append([]byte{}, ipv4Frame(a, b)[:12]...), 0x81, 0x00, 0x00, 0x05), ipv4Frame(a, b)[12:]...), true},
		{"another pair", gplayers.LinkTypeEthernet, ipv4Frame(a, c), false},
		{"IPv6 GIDs", gplayers.LinkTypeEthernet, roce1(gidA, gidB), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := analyze.HostPairKey(tc.lt, tc.data)
			require.NotZero(t, k)
			assert.Equal(t, tc.same, k == ab)
		})
	}
	// Native IB: LIDs, either order; a GRH after the LRH names the hosts
	// by GID, as RoCE v1 does.
	l12 := analyze.HostPairKey(layers.LinkTypeInfiniBand, lrh(1, 2, 2))
	assert.Equal(t, l12, analyze.HostPairKey(layers.LinkTypeInfiniBand, lrh(2, 1, 2)))
	assert.NotEqual(t, l12, analyze.HostPairKey(layers.LinkTypeInfiniBand, lrh(1, 3, 2)))
	withGRH := append(lrh(1, 2, 3), grhBytes(gidA, gidB)...)
	assert.Equal(t, analyze.HostPairKey(gplayers.LinkTypeEthernet, roce1(gidB, gidA)), analyze.HostPairKey(layers.LinkTypeInfiniBand, withGRH))
	// No addresses.
	arp := append(ipv4Frame(a, b)[:12:12], 0x08, 0x06, 0, 1)
	assert.Zero(t, analyze.HostPairKey(gplayers.LinkTypeEthernet, arp))
	assert.Zero(t, analyze.HostPairKey(gplayers.LinkTypeEthernet, []byte{1, 2, 3}))
	assert.Zero(t, analyze.HostPairKey(gplayers.LinkTypeIEEE802_11, ipv4Frame(a, b)))
}

// TestHostPairKeyAgrees: on every frame of the testdata and shared
// captures, the key HostPairKey reads is the one of the hosts the
// Analyzer itself decodes (a single shard would otherwise count the frame
// as misplaced and CombineShards say so).
func TestHostPairKeyAgrees(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*.pcap")
	shared, _ := filepath.Glob("../../shared/captures/*/*.pcap")
	checked := 0
	for _, file := range append(files, shared...) {
		frames, cis, lt, err := loadFrames(file)
		if err != nil {
			continue // pcapng: read by the command's tests
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			a := analyze.New(analyze.AsShard(analyze.Options{}))
			for i, fr := range frames {
				p := a.FeedShard(uint64(i+1), analyze.HostPairKey(lt, fr), cis[i], lt, fr)
				if p.BTH != nil && p.Err == nil {
					checked++
				}
			}
			_, err := analyze.CombineShards([]*analyze.Report{a.Finish()}, analyze.Options{})
			require.NoError(t, err)
		})
	}
	// testdata alone has 932 such packets; ../shared adds more where present.
	require.Greater(t, checked, 900)
}

// FuzzHostPairKey: HostPairKey never panics, and every frame the
// Analyzer puts in a flow has the key of the hosts it decoded.
func FuzzHostPairKey(f *testing.F) {
	f.Add(uint8(0), ipv4Frame(net.IPv4(10, 0, 0, 1), net.IPv4(10, 0, 0, 2)))
	f.Add(uint8(1), []byte{0xF0, 0x03, 0x00, 0x02, 0x00, 0x20, 0x00, 0x01})
	f.Add(uint8(2), []byte{0, 0, 0, 0, 0, 0, 0, 0, 0x95, 0, 0, 40, 0, 0, 0, 24, 1, 2, 3, 4, 5, 6, 7, 8})
	files, _ := filepath.Glob("../testdata/*.pcap")
	for _, file := range files {
		frames, _, lt, err := loadFrames(file)
		if err != nil || len(frames) == 0 {
			continue
		}
		for i, l := range []gplayers.LinkType{gplayers.LinkTypeEthernet, layers.LinkTypeInfiniBand, layers.LinkTypeERF, gplayers.LinkTypeRaw, gplayers.LinkTypeLinuxSLL, gplayers.LinkTypeLinuxSLL2} {
			if l == lt {
				f.Add(uint8(i), frames[len(frames)/2])
			}
		}
	}
	linkTypes := []gplayers.LinkType{gplayers.LinkTypeEthernet, layers.LinkTypeInfiniBand, layers.LinkTypeERF, gplayers.LinkTypeRaw, gplayers.LinkTypeLinuxSLL, gplayers.LinkTypeLinuxSLL2, gplayers.LinkTypeIPv4, gplayers.LinkTypeIPv6}
	f.Fuzz(func(t *testing.T, lt uint8, data []byte) {
		linkType := linkTypes[int(lt)%len(linkTypes)]
		a := analyze.New(analyze.AsShard(analyze.Options{}))
		ci := gopacket.CaptureInfo{Timestamp: time.Unix(1, 0), CaptureLength: len(data), Length: len(data)}
		a.FeedShard(1, analyze.HostPairKey(linkType, data), ci, linkType, data)
		_, err := analyze.CombineShards([]*analyze.Report{a.Finish()}, analyze.Options{})
		if err != nil && strings.Contains(err.Error(), "another host pair") {
			t.Fatalf("%v: link type %v, frame %x", err, linkType, data)
		}
	})
}

// TestFeedShardNoAllocs: a shard's Analyzer, like Feed, allocates nothing
// per packet of an existing flow (HostPairKey and the placement check
// included).
func TestFeedShardNoAllocs(t *testing.T) {
	frames, cis, lt := mixFrames(t, synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 400})
	a := analyze.New(analyze.AsShard(analyze.Options{}))
	warm := 200
	for i, fr := range frames[:warm] {
		a.FeedShard(uint64(i+1), analyze.HostPairKey(lt, fr), cis[i], lt, fr)
	}
	i := warm
	allocs := testing.AllocsPerRun(len(frames)-warm-10, func() {
		a.FeedShard(uint64(i+1), analyze.HostPairKey(lt, frames[i]), cis[i], lt, frames[i])
		i++
	})
	assert.Zero(t, allocs)
}

// TestCombineShardsMisplaced: a frame fed to a shard under another host
// pair's key makes the shards not disjoint (the other shard here is fed
// nothing); the only shard of a capture has no other to be disjoint from.
func TestCombineShardsMisplaced(t *testing.T) {
	frames, cis, lt := mixFrames(t, synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 8})
	a, other := analyze.New(analyze.AsShard(analyze.Options{})), analyze.New(analyze.AsShard(analyze.Options{}))
	for i, fr := range frames {
		key := analyze.HostPairKey(lt, fr)
		if i == 20 {
			key++
		}
		a.FeedShard(uint64(i+1), key, cis[i], lt, fr)
	}
	part := a.Finish()
	_, err := analyze.CombineShards([]*analyze.Report{part}, analyze.Options{})
	require.NoError(t, err, "one shard")
	rep, err := analyze.CombineShards([]*analyze.Report{part, other.Finish()}, analyze.Options{})
	require.ErrorIs(t, err, analyze.ErrNotDisjoint)
	assert.Contains(t, err.Error(), "1 frames decode to another host pair than they were sharded by (the first: frame 21)")
	require.NotNil(t, rep)
}

// TestCombineShardsSeverityCap: the findings cap is severity-aware —
// when it is full, an error takes the place of the latest info finding —
// and the shards' findings meet under it only in CombineShards. ECN CE
// marks (info) of every host pair fill the cap early in the capture, bad
// ICRCs (errors) and dropped frames (warnings) of every host pair come
// later: the sequential Analyzer keeps every error by evicting infos
// listed in other shards, and CombineShards must list the same findings.
func TestCombineShardsSeverityCap(t *testing.T) {
	frames, cis, lt := mixFrames(t, synth.Config{Scenario: synth.ScenarioMix, Packets: 6000, QPs: 64, Seed: 7})
	half := len(frames) / 2
	marked := 0
	for i := range half { // CE on every IPv4 RoCE v2 frame of the first half
		fr := frames[i]
		if len(fr) > 14+20+8 && binary.BigEndian.Uint16(fr[12:14]) == uint16(gplayers.EthernetTypeIPv4) && binary.BigEndian.Uint16(fr[14+20+2:]) == 4791 {
			fr[15] |= 3
			marked++
		}
	}
	require.Greater(t, marked, 500)
	corrupt := 0
	for i := half; i < len(frames); i += 37 { // bad ICRCs in the second half
		frames[i][len(frames[i])-1] ^= 0x5A
		corrupt++
	}
	for i := len(frames) - 1; i > half; i -= 53 { // lost frames: warnings, incomplete messages
		frames, cis = append(frames[:i], frames[i+1:]...), append(cis[:i], cis[i+1:]...)
	}
	for _, max := range []int{40, 150, 400} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			o := analyze.Options{MaxFindings: max}
			seq := sequential(frames, cis, lt, o)
			bySev := map[analyze.Severity]int{}
			hosts := map[string]bool{}
			for _, fd := range seq.Findings {
				bySev[fd.Severity]++
				if fd.Kind == analyze.KindBadICRC {
					hosts[fd.Flow.Src+fd.Flow.Dst] = true
				}
			}
			// The oracle shows the eviction: the cap is full, errors were
			// listed although infos filled it first, from many host pairs.
			all := sequential(frames, cis, lt, analyze.Options{MaxFindings: 1 << 20})
			allSev := map[analyze.Severity]int{}
			for _, fd := range all.Findings {
				allSev[fd.Severity]++
			}
			t.Logf("listed %v of %v", bySev, allSev)
			require.Len(t, seq.Findings, max)
			require.Greater(t, allSev[analyze.SeverityInfo], max, "infos alone fill the cap")
			require.Equal(t, min(allSev[analyze.SeverityError], max), bySev[analyze.SeverityError], "every error the cap holds is kept")
			require.Greater(t, len(hosts), 4, "errors of many host pairs")
			require.Equal(t, uint64(len(all.Findings)-max), seq.FindingsDropped)

			want, err := json.Marshal(seq)
			require.NoError(t, err)
			for _, n := range []int{2, 3, 5} {
				rep, err := sharded(t, frames, cis, lt, o, n)
				require.NoError(t, err)
				got, err := json.Marshal(rep)
				require.NoError(t, err)
				require.Equal(t, string(want), string(got), "%d shards", n)
			}
		})
	}
}

// TestCombineShardsSeverityCapTestdata: the testdata captures of loss,
// congestion and corruption one after another (each shifted after the
// one before), under small findings caps: errors of the later files evict
// the infos of the earlier ones, and incomplete messages the capture only
// missed become info at the end (then evictable) — CombineShards lists
// what the sequential Analyzer lists.
func TestCombineShardsSeverityCapTestdata(t *testing.T) {
	frames, cis := analyzetest.Concat(t, filepath.Join("..", "testdata"), "ecn_cnp.pcap", "loss_behind_tap.pcap", "loss_nak_gobackn.pcap", "rnr_corrupt_icrc.pcap", "dup_reorder.pcap", "tap_drop.pcap")
	all := sequential(frames, cis, gplayers.LinkTypeEthernet, analyze.Options{})
	require.Contains(t, fmt.Sprint(all.Findings), "only PSNs the capture missed", "an incomplete message made info at the end")
	for max := 1; max <= len(all.Findings)+1; max += 3 {
		o := analyze.Options{MaxFindings: max}
		want, err := json.Marshal(sequential(frames, cis, gplayers.LinkTypeEthernet, o))
		require.NoError(t, err)
		for _, n := range []int{2, 3} {
			rep, err := sharded(t, frames, cis, gplayers.LinkTypeEthernet, o, n)
			require.NoError(t, err)
			got, err := json.Marshal(rep)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got), "MaxFindings %d, %d shards", max, n)
		}
	}
}

// TestCombineShardsMisuse: no part, or a report that is not a shard's
// part (a whole Analyzer's: combined already, or two
// such), is an error, not a panic.
func TestCombineShardsMisuse(t *testing.T) {
	frames, cis, lt := mixFrames(t, synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 4})
	whole := sequential(frames, cis, lt, analyze.Options{})
	for _, tc := range []struct {
		name  string
		parts []*analyze.Report
		err   string
	}{
		{"no part", nil, "analyze: no shard's report to combine"},
		{"a combined report", []*analyze.Report{whole}, "analyze: part 0 is not a shard's report"},
		{"two combined reports", []*analyze.Report{whole, whole}, "analyze: part 0 is not a shard's report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := analyze.CombineShards(tc.parts, analyze.Options{})
			require.EqualError(t, err, tc.err)
			assert.Nil(t, rep)
		})
	}
	s, err := analyze.CombineShardStreams(nil, analyze.Options{})
	require.EqualError(t, err, "analyze: no shard's report to combine")
	assert.Nil(t, s)
}
