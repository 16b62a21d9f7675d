package analyze

import (
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// replayFloodSorted is replayFlood as it was first written, over one
// sorted list of every shard's CM messages: the oracle of
// TestReplayFlood.
func replayFloodSorted(shards [][]cmEvent) (uint64, time.Time) {
	var evs []cmEvent
	for _, p := range shards {
		evs = append(evs, p...)
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].frame < evs[j].frame })
	var messages, conns uint64
	for _, e := range evs {
		messages++
		if messages > cmMessagesPerConnection*conns+cmFloodSlack {
			return e.frame, e.t
		}
		if e.grew {
			conns++
		}
	}
	return 0, time.Time{}
}

// TestReplayFlood checks the heap merge of the shards' CM messages,
// each shard's kept in its compact log (cmLog), against one sorted list of
// them all kept as they came: 1 to 64 shards, the capture's CM messages
// dealt to them at random (each shard's in frame order), from captures
// whose REQs explain every message to floods of REPs, some messages
// without a time or with one not in UTC (the log keeps those aside).
func TestReplayFlood(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	floods := 0
	for _, shards := range []int{1, 2, 3, 4, 8, 64} {
		for _, grewOneIn := range []int{1, 3, 5, 40, 1 << 30} {
			for round := range 20 {
				parts := make([]*Report, shards)
				kept := make([][]cmEvent, shards)
				for s := range parts {
					parts[s] = &Report{shard: &shardInfo{feed: &shardFeed{}}}
				}
				frame := uint64(0)
				for range rng.IntN(3000) { // past cmFloodSlack: some flood
					frame += 1 + uint64(rng.IntN(3))
					s := rng.IntN(shards)
					e := cmEvent{frame: frame, t: t0.Add(time.Duration(frame) * time.Microsecond), grew: rng.IntN(grewOneIn) == 0}
					switch rng.IntN(50) {
					case 0:
						e.t = time.Time{} // a pcapng simple packet block
					case 1:
						e.t = e.t.In(time.FixedZone("X", 3600))
					}
					kept[s] = append(kept[s], e)
					parts[s].shard.feed.cm.add(e.frame, e.t)
					if e.grew {
						parts[s].shard.feed.cm.markGrew()
					}
				}
				wantF, wantT := replayFloodSorted(kept)
				gotF, gotT := replayFlood(parts)
				require.Equal(t, wantF, gotF, "%d shards, round %d", shards, round)
				require.True(t, wantT == gotT, "%d shards, round %d: %v against %v", shards, round, gotT, wantT)
				if wantF != 0 {
					floods++
				}
			}
		}
	}
	require.Positive(t, floods, "some captures flood")
}

// TestCMLogRoundTrip: a shard's compact log of CM messages gives back
// every message as it was added (frame, time to the nanosecond and its
// location, grew), the newest whole too, in a few bytes each.
func TestCMLogRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var l cmLog
	var want []cmEvent
	frame := uint64(0)
	for range 10000 {
		frame += 1 + uint64(rng.IntN(1000))
		e := cmEvent{frame: frame, t: t0.Add(time.Duration(rng.Int64N(1 << 40))), grew: rng.IntN(3) == 0}
		switch rng.IntN(100) {
		case 0:
			e.t = time.Time{}
		case 1:
			e.t = e.t.In(time.FixedZone("X", -7200))
		case 2:
			e.t = time.Date(2600, 1, 1, 0, 0, 0, 1, time.UTC) // past UnixNano
		}
		l.add(e.frame, e.t)
		if e.grew {
			l.markGrew()
		}
		want = append(want, e)
	}
	it := l.iter()
	for i, w := range want {
		got, ok := it.next()
		require.True(t, ok, "message %d", i)
		require.Equal(t, w.frame, got.frame, "message %d", i)
		require.Equal(t, w.grew, got.grew, "message %d", i)
		require.True(t, w.t == got.t, "message %d: %v against %v", i, got.t, w.t)
	}
	_, ok := it.next()
	require.False(t, ok)
	require.Less(t, len(l.buf), 10*len(want), "bytes a message")
}
