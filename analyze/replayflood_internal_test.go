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
func replayFloodSorted(parts []*Report) (uint64, time.Time) {
	var evs []cmEvent
	for _, p := range parts {
		evs = append(evs, p.shard.feed.cm...)
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

// TestReplayFlood checks the heap merge of the shards' CM messages
// against one sorted list of them all: 1 to 64 shards, the capture's CM
// messages dealt to them at random (each shard's in frame order), from
// captures whose REQs explain every message to floods of REPs.
func TestReplayFlood(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	floods := 0
	for _, shards := range []int{1, 2, 3, 4, 8, 64} {
		for _, grewOneIn := range []int{1, 3, 5, 40, 1 << 30} {
			for round := range 20 {
				parts := make([]*Report, shards)
				for s := range parts {
					parts[s] = &Report{shard: &shardInfo{feed: &shardFeed{}}}
				}
				frame := uint64(0)
				for range rng.IntN(3000) { // past cmFloodSlack: some flood
					frame += 1 + uint64(rng.IntN(3))
					s := rng.IntN(shards)
					e := cmEvent{frame: frame, t: t0.Add(time.Duration(frame) * time.Microsecond), grew: rng.IntN(grewOneIn) == 0}
					parts[s].shard.feed.cm = append(parts[s].shard.feed.cm, e)
				}
				wantF, wantT := replayFloodSorted(parts)
				gotF, gotT := replayFlood(parts)
				require.Equal(t, wantF, gotF, "%d shards, round %d", shards, round)
				require.True(t, wantT.Equal(gotT), "%d shards, round %d", shards, round)
				if wantF != 0 {
					floods++
				}
			}
		}
	}
	require.Positive(t, floods, "some captures flood")
}
