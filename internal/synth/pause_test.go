package synth

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// tpf is a pause frame of a hand-computed case: offset ns from
// StartTime, sender MAC 02:00:00:00:00:mac, what it carries.
type tpf struct {
	t    int64
	mac  byte
	info PauseInfo
}

// pfcFrame pauses the priorities of q (priority → quanta, 0 = XON) with
// their class-enable bits set.
func pfcFrame(t int64, mac byte, q map[int]uint16) tpf {
	f := tpf{t: t, mac: mac, info: PauseInfo{Kind: PausePFC, Opcode: uint16(layers.MACControlOpcodePFC)}}
	for p, v := range q {
		f.info.ClassEnable |= 1 << p
		f.info.Quanta[p] = v
	}
	return f
}

func pause3x(t int64, mac byte, q uint16) tpf {
	return tpf{t: t, mac: mac, info: PauseInfo{Kind: Pause8023x, Opcode: uint16(layers.MACControlOpcodePause), Quanta: [8]uint16{q}}}
}

func tmac(b byte) string { return net.HardwareAddr{2, 0, 0, 0, 0, b}.String() }

func stat(mac byte, kind string, prio int, frames, xoff, xon int, quanta, paused, longest int64) PauseStats {
	s := PauseStats{SrcMAC: tmac(mac), Kind: kind, Frames: frames, XOFFFrames: xoff, XONFrames: xon, Quanta: quanta, PausedNs: paused, LongestPauseNs: longest}
	if prio >= 0 {
		s.Priority = &prio
	}
	return s
}

var t0 = StartTime.UnixNano()

// TestPauseTruth feeds written pause frames to the pause truth and
// compares with hand-computed statistics. At 100 Gbit/s a quantum is
// 5.12 ns: 1000 quanta 5120 ns, 100 quanta 512 ns, 2000 quanta 10240 ns.
func TestPauseTruth(t *testing.T) {
	type storm struct {
		mac          byte
		kind         string
		prio         int
		frame        int
		start, durNs int64
	}
	for _, tc := range []struct {
		name      string
		gbps      float64
		threshold int64
		frames    []tpf
		want      []PauseStats
		storms    []storm
	}{
		{name: "xoff then xon", frames: []tpf{pfcFrame(0, 1, map[int]uint16{3: 1000}), pfcFrame(2000, 1, map[int]uint16{3: 0})},
			want: []PauseStats{stat(1, "pfc", 3, 2, 1, 1, 1000, 2000, 2000)}},
		{name: "refreshes extend", frames: []tpf{pfcFrame(0, 1, map[int]uint16{3: 1000}), pfcFrame(4000, 1, map[int]uint16{3: 1000}), pfcFrame(8000, 1, map[int]uint16{3: 1000})},
			want: []PauseStats{stat(1, "pfc", 3, 3, 3, 0, 3000, 13120, 13120)}}, // 8000 + 5120
		{name: "a refresh at the deadline continues", frames: []tpf{pfcFrame(0, 1, map[int]uint16{3: 1000}), pfcFrame(5120, 1, map[int]uint16{3: 1000})},
			want: []PauseStats{stat(1, "pfc", 3, 2, 2, 0, 2000, 10240, 10240)}},
		{name: "shortening refresh", frames: []tpf{
			pfcFrame(0, 1, map[int]uint16{3: 1000}),   // until 5120
			pfcFrame(1000, 1, map[int]uint16{3: 100}), // until 1512 instead
			pfcFrame(3000, 1, map[int]uint16{3: 100}), // a new stretch [3000, 3512)
		}, want: []PauseStats{stat(1, "pfc", 3, 3, 3, 0, 1200, 1512+512, 1512)}},
		{name: "802.3x", frames: []tpf{pause3x(0, 1, 2000), pause3x(20000, 1, 2000), pause3x(25000, 1, 0)},
			want: []PauseStats{stat(1, "802.3x", -1, 3, 2, 1, 4000, 10240+5000, 10240)}},
		{name: "xon alone", frames: []tpf{pfcFrame(0, 1, map[int]uint16{3: 0})},
			want: []PauseStats{stat(1, "pfc", 3, 1, 0, 1, 0, 0, 0)}},
		{name: "class-enable bits", frames: func() []tpf {
			f := pfcFrame(0, 2, map[int]uint16{0: 1000, 3: 2000})
			f.info.Quanta[4] = 500 // bit 4 clear: no pause of priority 4
			return []tpf{f, pfcFrame(100, 1, map[int]uint16{7: 1})}
		}(), want: []PauseStats{
			stat(1, "pfc", 7, 1, 1, 0, 1, 5, 5), // 5.12 ns
			stat(2, "pfc", 0, 1, 1, 0, 1000, 5120, 5120),
			stat(2, "pfc", 3, 1, 1, 0, 2000, 10240, 10240),
		}},
		{name: "25G quanta", gbps: 25, frames: []tpf{pfcFrame(0, 1, map[int]uint16{3: 3}), pause3x(0, 1, 1)},
			want: []PauseStats{stat(1, "802.3x", -1, 1, 1, 0, 1, 20, 20), stat(1, "pfc", 3, 1, 1, 0, 3, 61, 61)}}, // 20.48, 61.44
		{name: "storms", threshold: 10000, frames: func() []tpf {
			var f []tpf
			for x := int64(0); x <= 40000; x += 4000 { // 11 refreshes
				f = append(f, pfcFrame(x, 1, map[int]uint16{3: 1000}))
			}
			f = append(f, pfcFrame(42000, 1, map[int]uint16{3: 0}),
				pfcFrame(50000, 1, map[int]uint16{3: 1000}), // 5120 ns: no storm
				pfcFrame(1000, 2, map[int]uint16{3: 1000}),  // no storm
				pause3x(2000, 2, 65535))                     // 335539 ns: a storm
			return f
		}(), want: []PauseStats{
			stat(1, "pfc", 3, 13, 12, 1, 12000, 42000+5120, 42000),
			stat(2, "802.3x", -1, 1, 1, 0, 65535, 335539, 335539),
			stat(2, "pfc", 3, 1, 1, 0, 1000, 5120, 5120),
		}, storms: []storm{{1, "pfc", 3, 1, 0, 42000}, {2, "802.3x", -1, 3, 2000, 335539}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pc := PauseConfig{LinkSpeedGbps: tc.gbps, StormThresholdNs: tc.threshold, Streams: []PauseStream{{}}}
			require.NoError(t, pc.normalize(&Config{}))
			// Frames in time order, numbered from 1.
			frames := tc.frames
			for i := 1; i < len(frames); i++ {
				for j := i; j > 0 && frames[j].t < frames[j-1].t; j-- {
					frames[j], frames[j-1] = frames[j-1], frames[j]
				}
			}
			pt, tr := newPauseTruth(&pc), newTracker()
			pg := &pauseGen{buf: gopacket.NewSerializeBuffer()}
			for i, f := range frames {
				tr.truth.Frames++
				data, err := pg.serialize(net.HardwareAddr{2, 0, 0, 0, 0, f.mac}, &f.info)
				require.NoError(t, err)
				pt.add(i+1, t0+f.t, data)
			}
			pt.finish(tr)
			got := tr.finish()
			assert.Equal(t, tc.want, got.Pause)
			var storms []PauseStorm
			var findings []Finding
			for _, s := range tc.storms {
				ps := PauseStorm{SrcMAC: tmac(s.mac), Kind: s.kind, StartFrame: s.frame, StartTimeNs: t0 + s.start, DurationNs: s.durNs}
				if s.prio >= 0 {
					ps.Priority = &s.prio
				}
				storms = append(storms, ps)
				findings = append(findings, Finding{Kind: "pause_storm", Severity: "warning", Frame: s.frame})
			}
			assert.Equal(t, storms, got.PauseStorms)
			if findings == nil {
				findings = []Finding{}
			}
			assert.Equal(t, findings, got.Findings)
			assert.Equal(t, pc.linkBps(), got.LinkSpeedBps)
		})
	}
}

// pauseArgs generates a roce-synth command line.
func pauseArgs(t *testing.T, args ...string) ([]byte, *Truth, []FrameInfo) {
	t.Helper()
	cfg, _, _, err := ParseArgs(args)
	require.NoError(t, err)
	return generate(t, cfg)
}

// TestPauseFlowsPaused: a flow's paused_ns is its span's overlap with the
// paused intervals of its priority, here one interval [2 µs, 7 µs) (an
// XOFF of 65535 quanta, 335 µs, ended by an XON 5 µs later).
func TestPauseFlowsPaused(t *testing.T) {
	const on = "start=2us,pause=5us,episodes=1"
	for _, tc := range []struct {
		name   string
		args   []string
		paused bool // the RoCE flows are on a paused priority
	}{
		{"pfc 3", []string{"--pfc", "3," + on}, true},
		{"pfc 3 vlan", []string{"--pfc", "3," + on, "--encap", "vlan"}, true},
		{"pfc 3 ipv6", []string{"--pfc", "3," + on, "--encap", "ipv6"}, true},
		{"pfc 3 rocev1", []string{"--pfc", "3," + on, "--encap", "rocev1"}, true},
		{"pfc 3+6", []string{"--pfc", "3+6," + on}, true},
		// CNPs are priority 6 but their flow's ACKs are 3: not paused.
		{"pfc 6", []string{"--pfc", "6," + on, "--ecn", "+0,+1"}, false},
		{"802.3x", []string{"--pause", on}, true},
		{"pfc 4 and 802.3x", []string{"--pfc", "4,start=0,pause=4us,episodes=1", "--pause", on}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"write-bw", "--nanos", "--messages", "8"}, tc.args...)
			_, tr, infos := pauseArgs(t, args...)
			type span struct{ first, last int64 }
			spans := map[[2]string]*span{}
			for _, fi := range infos {
				if fi.Pause != nil {
					continue
				}
				k := [2]string{fi.Src + ">" + fi.Dst, strconv.Itoa(int(fi.DestQP))}
				ts := fi.Timestamp.UnixNano()
				if s := spans[k]; s == nil {
					spans[k] = &span{ts, ts}
				} else {
					s.last = ts
				}
			}
			require.Len(t, tr.Flows, len(spans))
			anyPaused := false
			for _, f := range tr.Flows {
				s := spans[[2]string{f.Src + ">" + f.Dst, strconv.Itoa(int(f.DestQP))}]
				require.NotNil(t, s)
				want := int64(0)
				if tc.paused {
					want = max(0, min(s.last, t0+7000)-max(s.first, t0+2000))
				}
				assert.Equal(t, want, f.PausedNs, "%s > %s QP %d", f.Src, f.Dst, f.DestQP)
				anyPaused = anyPaused || f.PausedNs > 0
			}
			assert.Equal(t, tc.paused, anyPaused)
		})
	}
}

// TestPauseInterleaved: with pause frames the RoCE frames are the same
// bytes at the same times, the truth the same but for the frame numbers of
// its findings (renumbered around the pause frames) and the pause truth.
func TestPauseInterleaved(t *testing.T) {
	base := []string{"write-bw", "--nanos", "--messages", "10", "--msg-size", "3000", "--start-psn", "100",
		"--nak", "103", "--ecn", "105", "--dup", "107", "--corrupt-icrc", "109"}
	for _, extra := range [][]string{
		{"--pfc", "3+4,senders=3,pause=1us-9us,gap=0-3us,start=0-2us,episodes=4,refresh=700ns,quanta=300"},
		{"--pfc", "3,xon=no,quanta=500,refresh=1us", "--pause", "on"},
		{"--pfc-storm", "3", "--link-speed", "25"},
	} {
		t.Run(strings.Join(extra, " "), func(t *testing.T) {
			capA, trA, _ := pauseArgs(t, base...)
			capB, trB, infosB := pauseArgs(t, append(base, extra...)...)
			_, recA := readCapture(t, capA)
			_, recB := readCapture(t, capB)
			require.Len(t, infosB, len(recB))
			var roce []record
			renumber := map[int]int{} // frame number without pause frames → with
			pauses := 0
			for i, r := range recB {
				if i > 0 {
					require.False(t, r.ci.Timestamp.Before(recB[i-1].ci.Timestamp), "frame %d goes back in time", i+1)
				}
				isPause := binary.BigEndian.Uint16(r.data[12:]) == uint16(layers.EthernetTypeMACControl)
				require.Equal(t, isPause, infosB[i].Pause != nil)
				assert.Equal(t, i+1, infosB[i].Index)
				if isPause {
					pauses++
					assert.Len(t, r.data, pauseFrameLen)
					continue
				}
				roce = append(roce, r)
				renumber[len(roce)] = i + 1
			}
			require.Positive(t, pauses)
			assert.Equal(t, recA, roce)
			assert.Equal(t, trA.Frames+pauses, trB.Frames)
			assert.Equal(t, trA.RoCEPackets, trB.RoCEPackets)
			assert.Equal(t, trA.Connections, trB.Connections)
			var findings []Finding
			for _, f := range trB.Findings {
				if f.Kind != "pause_storm" {
					findings = append(findings, f)
				}
			}
			wantFindings := make([]Finding, len(trA.Findings))
			for i, f := range trA.Findings {
				f.Frame = renumber[f.Frame]
				wantFindings[i] = f
			}
			assert.Equal(t, wantFindings, findings)
			require.Len(t, trB.Flows, len(trA.Flows))
			for i, f := range trB.Flows {
				c := *f
				c.PausedNs = 0
				assert.Equal(t, *trA.Flows[i], c)
			}
			var frames int
			for _, s := range trB.Pause {
				if s.Kind == "802.3x" || *s.Priority == 3 {
					frames += s.Frames
				}
			}
			assert.Equal(t, pauses, frames, "each pause frame counts once for priority 3 or 802.3x")
			if extra[0] == "--pfc-storm" {
				require.Len(t, trB.PauseStorms, 1)
				s := trB.PauseStorms[0]
				assert.Equal(t, int64(250*time.Millisecond), s.DurationNs)
				assert.Equal(t, 1, s.StartFrame)
				assert.Equal(t, int64(25e9), trB.LinkSpeedBps)
				assert.Contains(t, trB.Findings, Finding{Kind: "pause_storm", Severity: "warning", Frame: 1})
				assert.Greater(t, recB[len(recB)-1].ci.Timestamp.Sub(StartTime), 200*time.Millisecond)
			} else {
				assert.Empty(t, trB.PauseStorms)
			}
		})
	}
}

// TestPauseOffUnchanged: a pause configuration without streams writes
// the same capture and truth as none (the golden files check the rest).
func TestPauseOffUnchanged(t *testing.T) {
	cfg := Config{Messages: 4, StartPSN: psnp(9)}
	var c1, t1, c2, t2 bytes.Buffer
	_, err := Generate(cfg, &c1, &t1)
	require.NoError(t, err)
	cfg.Pause = PauseConfig{LinkSpeedGbps: 25, StormThresholdNs: 1}
	_, err = Generate(cfg, &c2, &t2)
	require.NoError(t, err)
	assert.Equal(t, c1.Bytes(), c2.Bytes())
	assert.Equal(t, t1.String(), t2.String())
	assert.NotContains(t, t1.String(), "pause")
	assert.NotContains(t, t1.String(), "link_speed")
}

func TestPauseDeterministic(t *testing.T) {
	args := []string{"send-bw", "--pfc", "2+3,senders=2,pause=1us-20us,gap=0-5us,episodes=5", "--pause", "senders=2,start=0-30us"}
	a, _, _ := pauseArgs(t, args...)
	b, _, _ := pauseArgs(t, args...)
	c, _, _ := pauseArgs(t, append(args, "--seed", "2")...)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
}

func TestParsePauseSpec(t *testing.T) {
	for _, tc := range []struct {
		kind  PauseKind
		storm bool
		spec  string
		want  PauseStream
	}{
		{PausePFC, false, "on", PauseStream{}},
		{PausePFC, false, "3", PauseStream{Priorities: []int{3}}},
		{PausePFC, false, "3+4,senders=2,quanta=300,refresh=1us,pause=5us-50us,gap=0-1ms,episodes=7,start=3us,xon=no",
			PauseStream{Priorities: []int{3, 4}, Senders: 2, Quanta: 300, RefreshNs: 1000, PauseNs: [2]int64{5000, 50000},
				GapNs: [2]int64{0, 1e6}, Episodes: 7, StartNs: [2]int64{3000, 3000}, NoXON: true}},
		{PausePFC, false, "prio=0+7,xon=yes", PauseStream{Priorities: []int{0, 7}}},
		{Pause8023x, false, "quanta=1", PauseStream{Kind: Pause8023x, Quanta: 1}},
		{PausePFC, true, "5", PauseStream{Storm: true, Priorities: []int{5}}},
	} {
		got, err := ParsePauseSpec(tc.kind, tc.storm, tc.spec)
		require.NoError(t, err, tc.spec)
		tc.want.Kind, tc.want.Storm = tc.kind, tc.storm
		assert.Equal(t, tc.want, got, tc.spec)
	}
	for _, bad := range []struct {
		kind PauseKind
		spec string
	}{
		{PausePFC, "8"}, {PausePFC, "x"}, {PausePFC, "3,4"}, {PausePFC, "senders=0"}, {PausePFC, "quanta=0"},
		{PausePFC, "quanta=65536"}, {PausePFC, "pause=0"}, {PausePFC, "pause=5us-1us"}, {PausePFC, "refresh=0s"},
		{PausePFC, "xon=maybe"}, {PausePFC, "color=red"}, {PausePFC, "3,senders=1,senders=2"}, {PausePFC, ""},
		{Pause8023x, "3"}, {Pause8023x, "prio=3"}, {PausePFC, "gap=-1us"},
	} {
		_, err := ParsePauseSpec(bad.kind, false, bad.spec)
		assert.Error(t, err, "%q", bad.spec)
	}
}

func TestPauseArgs(t *testing.T) {
	cfg, _, _, err := ParseArgs([]string{"write-bw", "--pfc", "3", "--pause", "on", "--pfc-storm", "2", "--link-speed", "400", "--storm-threshold", "100ms"})
	require.NoError(t, err)
	pc := cfg.Pause
	require.Len(t, pc.Streams, 3)
	assert.Equal(t, []PauseKind{PausePFC, Pause8023x, PausePFC}, []PauseKind{pc.Streams[0].Kind, pc.Streams[1].Kind, pc.Streams[2].Kind})
	assert.True(t, pc.Streams[2].Storm)
	assert.Equal(t, 400.0, pc.LinkSpeedGbps)
	assert.Equal(t, int64(100*time.Millisecond), pc.StormThresholdNs)
	// Defaults, filled in on a copy: the caller's streams stay as given.
	require.NoError(t, cfg.normalize())
	s := cfg.Pause.Streams
	assert.Equal(t, PauseStream{Kind: PausePFC, Priorities: []int{3}, Senders: 1, Quanta: 65535, RefreshNs: 41942, // 65535 × 1.28 ns / 2
		PauseNs: [2]int64{10000, 10000}, GapNs: [2]int64{10000, 10000}, Episodes: 3}, s[0])
	assert.Equal(t, [2]int64{125e6, 125e6}, s[2].PauseNs)
	assert.Equal(t, 1, s[2].Episodes)
	assert.Zero(t, pc.Streams[0].RefreshNs, "normalize changed the caller's stream")
	for _, bad := range [][]string{
		{"write-bw", "--pfc", "3", "--encap", "ib"},
		{"write-bw", "--pause", "on", "--encap", "erf"},
		{"write-bw", "--pfc", "3", "--snaplen", "59"},
		{"write-bw", "--pfc-storm", "3,pause=200ms"},
		{"write-bw", "--pfc-storm", "3,refresh=400us"}, // longer than 65535 quanta at 100G
		{"write-bw", "--link-speed", "0.0000001", "--pfc", "3"},
		{"write-bw", "--storm-threshold", "0s"},
		{"write-bw", "--pfc", "3,pause=1s,refresh=1ns"}, // too many frames: found when generating
	} {
		cfg, _, _, err := ParseArgs(bad)
		if err == nil {
			_, err = Generate(cfg, io.Discard, nil)
		}
		assert.Error(t, err, "%q", bad)
	}
	_, err = WritePoints(PointsConfig{Base: Config{Pause: PauseConfig{Streams: []PauseStream{{}}}}, Points: []Point{{Name: "a"}, {Name: "b"}}},
		[]io.Writer{io.Discard, io.Discard})
	assert.ErrorIs(t, err, ErrConfig)
}
