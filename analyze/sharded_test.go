package analyze_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestShardedMisuse: a Sharded finished twice says so (ErrFinished)
// instead of crashing its process from a goroutine, Feed after Finish
// panics with a message, and Close ends the shards' goroutines of a
// Sharded abandoned (found by review: 10 abandoned at n=4 left 30
// goroutines).
func TestShardedMisuse(t *testing.T) {
	frames, cis, lt, err := loadFrames("../testdata/mix_small.pcap")
	require.NoError(t, err)
	feed := func(s *analyze.Sharded) {
		for i, f := range frames {
			s.Feed(cis[i], lt, f)
		}
	}
	s := analyze.NewSharded(analyze.Options{}, 4)
	feed(s)
	rep, err := s.Finish()
	require.NoError(t, err)
	require.Equal(t, uint64(len(frames)), rep.Capture.Frames)
	_, err = s.Finish()
	assert.ErrorIs(t, err, analyze.ErrFinished)
	_, err = s.FinishStream()
	assert.ErrorIs(t, err, analyze.ErrFinished)
	assert.PanicsWithValue(t, "analyze: Sharded.Feed after Finish or Close", func() { s.Feed(cis[0], lt, frames[0]) })
	s.Close() // after Finish: nothing

	before := runtime.NumGoroutine()
	for range 10 {
		s := analyze.NewSharded(analyze.Options{}, 4)
		feed(s)
		s.Close()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "abandoned shards' goroutines end")
}

// TestShardedCapsOnePass: with the flow cap hit by flows spread over
// every shard, a Sharded tracks the flows one Analyzer tracks in one
// pass (no FlowCapError to run again for), and its report is one
// Analyzer's byte for byte: the shards race for the budget until it is
// within the frames in flight, then the feeder analyzes every frame in
// capture order until it is spent. Caps below and above that window,
// on 2 to 4 shards.
func TestShardedCapsOnePass(t *testing.T) {
	const pairs = 30_000
	template := roceFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: 17})
	frames := make([][]byte, pairs)
	cis := make([]gopacket.CaptureInfo, pairs)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range frames {
		f := append([]byte(nil), template...)
		f[ipSrcOffset+1], f[ipSrcOffset+2], f[ipSrcOffset+3] = byte(i>>16), byte(i>>8), byte(i) // 10.a.b.c → 10.0.0.2: a host pair each
		frames[i] = f
		cis[i] = gopacket.CaptureInfo{Timestamp: start.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(f), Length: len(f)}
	}
	for _, maxFlows := range []int{500, 20_000} {
		opts := analyze.Options{NoICRC: true, MaxFlows: maxFlows, MaxFindings: 100}
		a := analyze.New(opts)
		for i, f := range frames {
			a.Feed(cis[i], gplayers.LinkTypeEthernet, f)
		}
		want, err := json.Marshal(a.Finish())
		require.NoError(t, err)
		require.Contains(t, string(want), fmt.Sprintf(`"packets_of_dropped_flows":%d`, pairs-maxFlows))
		for _, n := range []int{2, 3, 4} {
			s := analyze.NewSharded(opts, n)
			for i, f := range frames {
				s.Feed(cis[i], gplayers.LinkTypeEthernet, f)
			}
			rep, err := s.Finish()
			require.NoError(t, err, "--max-flows %d, %d shards: one pass", maxFlows, n)
			got, err := json.Marshal(rep)
			require.NoError(t, err)
			require.True(t, string(want) == string(got), "--max-flows %d, %d shards: the report of one Analyzer", maxFlows, n)
		}
	}
}

// ipSrcOffset is where the IPv4 source address starts in roceFrame's
// frames: Ethernet 14 + 12 bytes into the IPv4 header.
const ipSrcOffset = 14 + 12

// TestShardedReread: shards that cannot be combined exactly (at a
// connection cap of 10 the CM messages refused outnumber the orphans kept
// to check their CommIDs across shards) give ErrNotDisjoint and the
// shards' best; with Reread, Finish and FinishStream read the capture
// again and give one Analyzer's report, JSON byte for byte, or the error
// that stopped the second reading.
func TestShardedReread(t *testing.T) {
	frames, cis, lt := mixFrames(t, synth.Config{Scenario: synth.ScenarioMix, Packets: 8000, QPs: 64})
	opts := analyze.Options{MaxConnections: 10}
	want, err := json.Marshal(sequential(frames, cis, lt, opts))
	require.NoError(t, err)
	readAll := func(feed func(gopacket.CaptureInfo, gplayers.LinkType, []byte)) error {
		for i, f := range frames {
			feed(cis[i], lt, f)
		}
		return nil
	}
	errGone := errors.New("the file is gone")
	readHalf := func(feed func(gopacket.CaptureInfo, gplayers.LinkType, []byte)) error {
		for i, f := range frames[:len(frames)/2] {
			feed(cis[i], lt, f)
		}
		return errGone
	}
	for _, tc := range []struct {
		name    string
		reread  func(func(gopacket.CaptureInfo, gplayers.LinkType, []byte)) error
		stream  bool
		wantErr error
	}{
		{"Finish without Reread", nil, false, analyze.ErrNotDisjoint},
		{"FinishStream without Reread", nil, true, analyze.ErrNotDisjoint},
		{"Finish", readAll, false, nil},
		{"FinishStream", readAll, true, nil},
		{"Finish, second reading cut short", readHalf, false, errGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := analyze.NewSharded(opts, 3)
			require.NoError(t, readAll(s.Feed))
			if tc.reread != nil {
				s.Reread(tc.reread)
			}
			var rep *analyze.Report
			if tc.stream {
				st, err := s.FinishStream()
				require.ErrorIs(t, err, tc.wantErr)
				if st == nil {
					require.Error(t, err, "no stream without an error")
					return
				}
				rep = streamed(st)
			} else {
				rep, err = s.Finish()
				require.ErrorIs(t, err, tc.wantErr)
			}
			require.NotNil(t, rep)
			if tc.wantErr != nil {
				return
			}
			got, err := json.Marshal(rep)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		})
	}
}
