package conn

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// firstFloodSorted is FirstFlood as it was first written, over one
// sorted list of every part's CM messages, with the rule spelled out
// (100 messages a connection and 1,024 besides): the oracle of
// TestFirstFlood.
func firstFloodSorted(parts [][]Event, from Counts) (uint64, time.Time) {
	var evs []Event
	for _, p := range parts {
		evs = append(evs, p...)
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].Frame < evs[j].Frame })
	messages, conns := from.Msgs, from.Grew
	for _, e := range evs {
		messages++
		if messages > 100*conns+1024 {
			return e.Frame, e.Time
		}
		if e.Grew {
			conns++
		}
	}
	return 0, time.Time{}
}

// TestFirstFlood checks the heap merge of the parts' CM messages, each
// part's kept in its compact Log, against one sorted list of them all
// kept as they came: 1 to 64 parts, the capture's CM messages dealt to
// them at random (each part's in frame order), from captures whose REQs
// explain every message to floods of REPs, some messages without a time
// or with one not in UTC (the log keeps those aside).
func TestFirstFlood(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	floods := 0
	for _, shards := range []int{1, 2, 3, 4, 8, 64} {
		for _, grewOneIn := range []int{1, 3, 5, 40, 1 << 30} {
			for round := range 20 {
				logs := make([]*Log, shards)
				kept := make([][]Event, shards)
				for s := range logs {
					logs[s] = &Log{}
				}
				frame := uint64(0)
				for range rng.IntN(3000) { // past FloodSlack: some flood
					frame += 1 + uint64(rng.IntN(3))
					s := rng.IntN(shards)
					e := Event{Frame: frame, Time: t0.Add(time.Duration(frame) * time.Microsecond), Grew: rng.IntN(grewOneIn) == 0}
					switch rng.IntN(50) {
					case 0:
						e.Time = time.Time{} // a pcapng simple packet block
					case 1:
						e.Time = e.Time.In(time.FixedZone("X", 3600))
					}
					kept[s] = append(kept[s], e)
					logs[s].Add(e.Frame, e.Time)
					if e.Grew {
						logs[s].MarkGrew()
					}
				}
				wantF, wantT := firstFloodSorted(kept, Counts{})
				got, ok := FirstFlood(Counts{}, logs)
				require.Equal(t, wantF, got.Frame, "%d shards, round %d", shards, round)
				require.Equal(t, wantF != 0, ok, "%d shards, round %d", shards, round)
				require.True(t, wantT == got.Time, "%d shards, round %d: %v against %v", shards, round, got.Time, wantT)
				if wantF != 0 {
					floods++
				}
			}
		}
	}
	require.Positive(t, floods, "some captures flood")
}

// TestLogRoundTrip: a part's compact log of CM messages gives back
// every message as it was added (frame, time to the nanosecond and its
// location, grew), the newest whole too, in a few bytes each.
func TestLogRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var l Log
	var want []Event
	frame := uint64(0)
	for range 10000 {
		frame += 1 + uint64(rng.IntN(1000))
		e := Event{Frame: frame, Time: t0.Add(time.Duration(rng.Int64N(1 << 40))), Grew: rng.IntN(3) == 0}
		switch rng.IntN(100) {
		case 0:
			e.Time = time.Time{}
		case 1:
			e.Time = e.Time.In(time.FixedZone("X", -7200))
		case 2:
			e.Time = time.Date(2600, 1, 1, 0, 0, 0, 1, time.UTC) // past UnixNano
		case 3:
			e.Time = time.Date(1600, 1, 1, 0, 0, 0, 1, time.UTC) // before it
		}
		l.Add(e.Frame, e.Time)
		if e.Grew {
			l.MarkGrew()
		}
		want = append(want, e)
	}
	require.Equal(t, len(want), l.Len())
	it := l.Iter()
	for i, w := range want {
		got, ok := it.Next()
		require.True(t, ok, "message %d", i)
		require.Equal(t, w.Frame, got.Frame, "message %d", i)
		require.Equal(t, w.Grew, got.Grew, "message %d", i)
		require.True(t, w.Time == got.Time, "message %d: %v against %v", i, got.Time, w.Time)
	}
	_, ok := it.Next()
	require.False(t, ok)
	require.Less(t, len(l.buf), 10*len(want), "bytes a message")
}
