package analyze

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/cm"
)

// TestShardedFloodLog: a Sharded's shards log their CM messages for the
// flood replay only from the first frame another shard than the first
// one gets (shardShared.logFrom); before it one shard had every frame,
// and its counts (and its flood) are the capture's. Each capture's
// report is one Analyzer's byte for byte, its flood findings are the
// truth's (the rule computed over the whole capture: 100 messages a
// connection and 1,024 besides), and a flood in one host pair is logged
// in no byte.
func TestShardedFloodLog(t *testing.T) {
	reqA := madFrame(t, hostA, hostB, &cm.ConnectRequest{LocalCommID: 1, LocalQPN: 0x100, TransportServiceType: cm.TransportRC})
	reqC := madFrame(t, hostC, hostD, &cm.ConnectRequest{LocalCommID: 2, LocalQPN: 0x200, TransportServiceType: cm.TransportRC})
	repeat := func(f []byte, n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = f
		}
		return out
	}
	// A frame of no host pair (key 0: ARP) goes to shard 0, the reader's,
	// and carries no CM state: it does not start the log.
	arp := make([]byte, 14+28)
	arp[12], arp[13] = 0x08, 0x06
	alternate := func(n int) [][]byte {
		var out [][]byte
		for range n {
			out = append(out, reqA, reqC)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		frames [][]byte
		flood  uint64 // its frame (0: none)
		logged bool   // some shard logged CM messages
	}{
		{"one host pair", repeat(reqA, 3000), 1125, false},
		{"one host pair and frames of none, first", append([][]byte{arp}, repeat(reqA, 3000)...), 1126, false},
		{"one host pair and frames of none among", slices.Concat([][]byte{reqA, arp}, repeat(reqA, 2000), [][]byte{arp}, repeat(reqA, 999)), 1126, false},
		{"a second host pair after the flood", append(repeat(reqA, 2000), repeat(reqC, 10)...), 1125, true},
		{"a second host pair first", append([][]byte{reqC}, repeat(reqA, 2000)...), 1225, true},
		{"a flood only the two show", append(repeat(reqA, 700), repeat(reqC, 700)...), 1225, true},
		{"a flood only the two show, interleaved", alternate(700), 1225, true},
		{"no flood", append(repeat(reqA, 600), repeat(reqC, 600)...), 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got, s := feedOneAndSharded(t, tc.frames, Options{}, 4)
			logged := 0
			for _, a := range s.a { // the shards are done
				logged += a.shard.cm.Len()
			}
			var flood uint64
			for _, fd := range want.Findings {
				if fd.Kind == KindCMFlood {
					flood = fd.Frame
				}
			}
			assert.Equal(t, tc.flood, flood, "the flood's frame")
			assert.Equal(t, tc.logged, logged > 0, "%d CM messages logged", logged)
			wj, err := json.Marshal(want)
			require.NoError(t, err)
			gj, err := json.Marshal(got)
			require.NoError(t, err)
			require.True(t, string(wj) == string(gj), "4 shards give one Analyzer's report")
		})
	}
}

// TestShardedFarFromCap: caps below the frames the shards may hold in
// flight but never reached (40 host pairs, --max-flows 2000 on 4
// shards: 13,000 frames may be in flight) keep the shards running: the
// feeder lets them run dry when the frames in flight would outnumber the
// flows left, and analyzes none of their frames itself (found by review:
// the first lockstep ran every frame on the feeder once a budget had
// fewer flows left than could be in flight, to the end of the capture).
// With few flows left (--max-flows 300 or 41 of 40 flows: no more than
// lockstepBelow) the feeder analyzes every frame in order; a budget
// spent (40, 20) only refuses, and the shards run again. The report is
// one Analyzer's.
func TestShardedFarFromCap(t *testing.T) {
	hosts := hostPairREQs(t, 40)
	frames := make([][]byte, 20_000)
	for i := range frames {
		frames[i] = hosts[i%len(hosts)]
	}
	for _, tc := range []struct {
		maxFlows               int
		minStepped, maxStepped uint64 // frames of shards 1… the feeder analyzed
	}{
		{2000, 0, 0},
		{300, 10_000, 20_000}, // 3 shards of 4 have most of the 20,000
		{41, 10_000, 20_000},
		{40, 1, 40}, // until the budget is spent: the frames that made the flows
		{20, 1, 20},
	} {
		want, got, s := feedOneAndSharded(t, frames, Options{MaxFlows: tc.maxFlows}, 4)
		assert.True(t, s.stepped >= tc.minStepped && s.stepped <= tc.maxStepped, "--max-flows %d: %d frames of other shards analyzed by the feeder", tc.maxFlows, s.stepped)
		wj, err := json.Marshal(want)
		require.NoError(t, err)
		gj, err := json.Marshal(got)
		require.NoError(t, err)
		require.True(t, string(wj) == string(gj), "--max-flows %d: one Analyzer's report", tc.maxFlows)
	}
}
