package analyze_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestPauseIsTruth: the pause figures of PFC and 802.3x PAUSE captures
// (per sender and priority: frames, XOFF, XON, quanta, paused and longest
// time), their pause_storm findings and the flows' paused time equal the
// generator's truth, sequentially and in shards.
func TestPauseIsTruth(t *testing.T) {
	type stream struct {
		kind  synth.PauseKind
		storm bool
		spec  string
	}
	for _, tc := range []struct {
		name    string
		encap   synth.Encap
		gbps    float64
		streams []stream
		storms  int // pause_storm findings
	}{
		{"pfc defaults", synth.EncapIPv4, 0, []stream{{synth.PausePFC, false, "3"}}, 0},
		{"pfc two senders, two priorities, no XON", synth.EncapIPv4, 0, []stream{{synth.PausePFC, false, "3+4,senders=2,pause=5us-50us,xon=no"}}, 0},
		{"pfc short refresh on VLAN", synth.EncapVLAN, 25, []stream{{synth.PausePFC, false, "3,quanta=200,refresh=1us,pause=20us,episodes=4"}}, 0},
		{"802.3x", synth.EncapIPv6, 0, []stream{{synth.Pause8023x, false, "on"}}, 0},
		{"pfc and 802.3x", synth.EncapIPv4, 40, []stream{{synth.PausePFC, false, "2+3,episodes=5"}, {synth.Pause8023x, false, "quanta=1000,start=30us"}}, 0},
		{"storm", synth.EncapIPv4, 10, []stream{{synth.PausePFC, true, "3,refresh=2ms"}}, 1},
		{"two storms of one sender", synth.EncapIPv4, 10, []stream{{synth.PausePFC, true, "3,refresh=2ms,episodes=2,gap=1ms"}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Encap: tc.encap, Messages: 20, MsgSize: 4096, MTU: 1024}
			cfg.Pause.LinkSpeedGbps = tc.gbps
			for _, s := range tc.streams {
				ps, err := synth.ParsePauseSpec(s.kind, s.storm, s.spec)
				require.NoError(t, err)
				cfg.Pause.Streams = append(cfg.Pause.Streams, ps)
			}
			var buf bytes.Buffer
			truth, err := synth.Generate(cfg, &buf, nil)
			require.NoError(t, err)
			require.NotEmpty(t, truth.Pause)
			opts := analyze.Options{LinkSpeed: float64(truth.LinkSpeedBps)}
			r, err := pcapgo.NewReader(bytes.NewReader(buf.Bytes()))
			require.NoError(t, err)
			a := analyze.New(opts)
			s := analyze.NewSharded(opts, 3)
			for {
				data, ci, err := r.ReadPacketData()
				if err != nil {
					break
				}
				a.Feed(ci, r.LinkType(), data)
				s.Feed(ci, r.LinkType(), data)
			}
			rep := a.Finish()
			checkPauseTruth(t, truth, rep)
			storms, paused := 0, false
			for _, f := range rep.Findings {
				if f.Kind == analyze.KindPauseStorm {
					storms++
				}
			}
			for _, f := range rep.Flows {
				paused = paused || f.PausedNs != nil
			}
			assert.Equal(t, tc.storms, storms)
			assert.True(t, paused, "no flow was paused: the case tests nothing of the flows")
			sharded, err := s.Finish()
			require.NoError(t, err)
			checkPauseTruth(t, truth, sharded)
			assert.Equal(t, rep.Pause, sharded.Pause)
			assert.Equal(t, rep.Findings, sharded.Findings)
		})
	}
}

// checkPauseTruth compares a report's pause figures with the truth's:
// counts exactly, times within 1 %.
func checkPauseTruth(t *testing.T, truth *synth.Truth, rep *analyze.Report) {
	t.Helper()
	within := func(want, got int64, what string) {
		t.Helper()
		assert.LessOrEqual(t, math.Abs(float64(got-want)), 0.01*float64(want)+1, "%s: want %d, got %d", what, want, got)
	}
	require.Len(t, rep.Pause, len(truth.Pause))
	assert.Equal(t, float64(truth.LinkSpeedBps), rep.Capture.LinkSpeedBps)
	for i, w := range truth.Pause {
		g := rep.Pause[i]
		name := fmt.Sprintf("%s %s %v", w.SrcMAC, w.Kind, w.Priority)
		assert.Equal(t, w.SrcMAC, g.SrcMAC, name)
		assert.Equal(t, w.Kind, g.Kind, name)
		assert.Equal(t, w.Priority, g.Priority, name)
		assert.Equal(t, uint64(w.Frames), g.Frames, name)
		assert.Equal(t, uint64(w.XOFFFrames), g.XOFFFrames, name)
		assert.Equal(t, uint64(w.XONFrames), g.XONFrames, name)
		assert.Equal(t, uint64(w.Quanta), g.Quanta, name)
		within(w.PausedNs, g.PausedNs, name+" paused_ns")
		within(w.LongestPauseNs, g.LongestPauseNs, name+" longest_pause_ns")
	}
	var want, got []int
	for _, f := range truth.Findings {
		if f.Kind == string(analyze.KindPauseStorm) {
			want = append(want, f.Frame)
		}
	}
	for _, f := range rep.Findings {
		if f.Kind == analyze.KindPauseStorm {
			got = append(got, int(f.Frame))
			assert.Equal(t, analyze.SeverityWarning, f.Severity)
		}
	}
	assert.Equal(t, want, got, "pause_storm findings")
	type fk struct {
		src, dst string
		qp       uint32
	}
	flows := map[fk]*analyze.Flow{}
	for i := range rep.Flows {
		f := &rep.Flows[i]
		flows[fk{f.Src, f.Dst, f.DestQP}] = f
	}
	for _, w := range truth.Flows {
		g := flows[fk{w.Src, w.Dst, w.DestQP}]
		require.NotNil(t, g, "flow %s → %s QP %d", w.Src, w.Dst, w.DestQP)
		require.NotNil(t, g.Priority)
		var paused int64
		if g.PausedNs != nil {
			paused = *g.PausedNs
		}
		within(w.PausedNs, paused, fmt.Sprintf("flow %s → %s QP %d paused_ns", w.Src, w.Dst, w.DestQP))
	}
}

// TestPauseClockBack: a PFC XON timestamped before the XOFF that began
// its stretch (the capture's clock went back) ends a stretch that
// measures nothing, like a NIC time measured across the clock going
// back: no negative paused time (issue 41: paused_ns -300000000), the
// stretch adds nothing, the other stretches are the generator's truth;
// sequentially and in shards.
func TestPauseClockBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		kind synth.PauseKind
		spec string
	}{
		{"pfc", synth.PausePFC, "3,episodes=2"},
		{"802.3x", synth.Pause8023x, "quanta=1000,episodes=3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Encap: synth.EncapIPv4, Messages: 20, MsgSize: 4096, MTU: 1024}
			ps, err := synth.ParsePauseSpec(tc.kind, false, tc.spec)
			require.NoError(t, err)
			cfg.Pause.Streams = []synth.PauseStream{ps}
			frames, cis, lt, _ := genFrames(t, cfg)
			truth, err := synth.Generate(cfg, io.Discard, nil)
			require.NoError(t, err)
			require.Len(t, truth.Pause, 1)
			// The first stretch: from the first pause frame (its XOFF)
			// to the first XON (the generator refreshes the XOFF before
			// it expires).
			first, xon := -1, -1
			for i, f := range frames {
				if len(f) < 18 || binary.BigEndian.Uint16(f[12:]) != 0x8808 {
					continue
				}
				if first < 0 {
					first = i
				}
				if q := pauseQuanta(f); q == 0 {
					xon = i
					break
				}
			}
			require.True(t, first >= 0 && xon > first, "no XON after an XOFF")
			stretch := cis[xon].Timestamp.Sub(cis[first].Timestamp).Nanoseconds()
			require.Positive(t, stretch)
			back := slices.Clone(cis)
			back[xon].Timestamp = cis[first].Timestamp.Add(-300 * time.Millisecond)
			want := truth.Pause[0]
			want.PausedNs -= stretch
			opts := analyze.Options{LinkSpeed: float64(truth.LinkSpeedBps)}
			a, s := analyze.New(opts), analyze.NewSharded(opts, 3)
			for i, f := range frames {
				a.Feed(back[i], lt, f)
				s.Feed(back[i], lt, f)
			}
			sharded, err := s.Finish()
			require.NoError(t, err)
			for name, rep := range map[string]*analyze.Report{"sequential": a.Finish(), "sharded": sharded} {
				require.Len(t, rep.Pause, 1, name)
				g := rep.Pause[0]
				assert.Equal(t, uint64(want.Frames), g.Frames, name)
				assert.Equal(t, uint64(want.XONFrames), g.XONFrames, name)
				assert.InDelta(t, want.PausedNs, g.PausedNs, 0.01*float64(want.PausedNs)+1, name)
				assert.GreaterOrEqual(t, g.LongestPauseNs, int64(0), name)
				assert.LessOrEqual(t, g.LongestPauseNs, want.PausedNs, name)
				for _, f := range rep.Flows {
					if f.PausedNs != nil {
						assert.GreaterOrEqual(t, *f.PausedNs, int64(0), name)
					}
				}
			}
		})
	}
}

// pauseQuanta is the time a generated pause frame asks for: an 802.3x
// PAUSE's pause_time, a PFC frame's time of its first enabled priority.
func pauseQuanta(f []byte) uint16 {
	if binary.BigEndian.Uint16(f[14:]) == 0x0001 {
		return binary.BigEndian.Uint16(f[16:])
	}
	vec := binary.BigEndian.Uint16(f[16:])
	for i := range 8 {
		if vec&(1<<i) != 0 {
			return binary.BigEndian.Uint16(f[18+2*i:])
		}
	}
	return 0
}
