package fuzz_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// FuzzShardSequence feeds the frames of a FuzzAnalyzerSequence input to
// one Analyzer and to an analyze.Sharded of 1 to 4 shards (as the
// command's -j does), which splits them by host pair. Sharded.Finish
// promises the report of the one Analyzer byte for byte unless it returns
// ErrNotDisjoint: the two must encode to the same JSON. The other targets merge halves with
// Report.Merge, which judges nothing again; this is the only target that
// checks the combiner's replay (flow order, caps, findings, the cut
// judgment) on hostile sequences.
func FuzzShardSequence(f *testing.F) {
	caps := seedCaptures(f)
	for _, name := range sortedKeys(caps) {
		frames := readFrames(f, name, caps[name])
		if len(frames) > 12 {
			frames = frames[:12] // small seeds: see FuzzCapture
		}
		f.Add(uint8(len(frames)), encodeSequence(frames))
	}
	_, lying := lyingPastListSeed()
	f.Add(uint8(1), lying)
	f.Fuzz(func(t *testing.T, nShards uint8, in []byte) {
		defer watchdog(in)()
		frames := cutSequence(in)
		n := int(nShards%4) + 1 // shards
		opts := analyze.Options{MaxFlows: 8, MaxFindings: 32, Interval: time.Microsecond}
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		cis := make([]gopacket.CaptureInfo, len(frames))
		for i, fr := range frames {
			if fr.back {
				ts = ts.Add(-time.Duration(len(fr.data)) * time.Microsecond)
			} else {
				ts = ts.Add(time.Duration(len(fr.data)) * time.Nanosecond)
			}
			cis[i] = gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(fr.data), Length: len(fr.data) + fr.extra}
		}
		whole := analyze.New(opts)
		for i, fr := range frames {
			whole.Feed(cis[i], linkTypes[int(fr.linkType)%len(linkTypes)], fr.data)
		}
		want, err := json.Marshal(whole.Finish())
		require.NoError(t, err)
		s := analyze.NewSharded(opts, n)
		for i, fr := range frames {
			s.Feed(cis[i], linkTypes[int(fr.linkType)%len(linkTypes)], fr.data)
		}
		rep, err := s.Finish()
		if errors.Is(err, analyze.ErrNotDisjoint) {
			return
		}
		require.NoError(t, err)
		got, err := json.Marshal(rep)
		require.NoError(t, err)
		require.JSONEq(t, string(want), string(got), "%d shards", n)
	})
}
