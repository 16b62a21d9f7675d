package analyze

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapDecision races shards for a shared budget as the CLI's shards
// do (each shard creates its flows in frame order, the shards taking
// turns at random) and checks capDecision against the sequential rule
// computed directly: the first limit flows by creation frame are
// tracked. It must say exact only when the shards tracked those, and
// otherwise give the frame of the limit-th flow, or say it cannot tell
// when a shard's records overflowed before it.
func TestCapDecision(t *testing.T) {
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 7))
		shards := 1 + rng.IntN(4)
		flows := 1 + rng.IntN(60)
		limit := 1 + rng.IntN(flows+10)
		maxRec := 1 + rng.IntN(8) // small, so that records overflow
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			tracked, refused := raceForBudget(rng, shards, flows, limit, maxRec)
			slices.Sort(tracked)
			// The sequential rule.
			want := make([]uint64, 0, flows)
			for i := range min(limit, flows) {
				want = append(want, uint64(i+1))
			}
			exact, frame, err := capDecision(tracked, refused, limit)
			if slices.Equal(tracked, want) {
				require.NoError(t, err)
				assert.True(t, exact, "tracked %v is the sequential %v", tracked, want)
				return
			}
			assert.False(t, exact, "tracked %v, sequential %v", tracked, want)
			if err != nil {
				require.ErrorIs(t, err, errCapUndecided)
				overflowed := false
				for _, r := range refused {
					overflowed = overflowed || r.full
				}
				assert.True(t, overflowed, "undecided only when records overflowed")
				return
			}
			wantFrame := uint64(0)
			if flows > limit {
				wantFrame = uint64(limit)
			}
			assert.Equal(t, wantFrame, frame)
		})
	}
}

// raceForBudget creates flows 1…flows (flow i at frame i) in shards
// chosen at random, each shard creating its flows in frame order, the
// shards taking turns at random while a budget of limit lasts; each shard
// records up to maxRec refusals. It returns the creation frames of the
// flows tracked and each shard's refusals.
func raceForBudget(rng *rand.Rand, shards, flows, limit, maxRec int) ([]uint64, []*capRefusals) {
	of := make([][]uint64, shards)
	for i := range flows {
		s := rng.IntN(shards)
		of[s] = append(of[s], uint64(i+1))
	}
	budget := limit
	next := make([]int, shards)
	var tracked []uint64
	refused := make([]*capRefusals, shards)
	for s := range refused {
		refused[s] = &capRefusals{}
	}
	for left := flows; left > 0; left-- {
		s := rng.IntN(shards)
		for next[s] == len(of[s]) {
			s = (s + 1) % shards
		}
		f := of[s][next[s]]
		next[s]++
		if budget > 0 {
			budget--
			tracked = append(tracked, f)
			continue
		}
		r := refused[s]
		if len(r.frames) == maxRec {
			r.full = true
		}
		if !r.full {
			r.frames = append(r.frames, f)
		}
	}
	return tracked, refused
}

// TestCapDecisionSecondPass: in a second pass (a frame limit set by the
// caller), the shards tracking the cap's worth is exact; tracking fewer
// while the limit refused flows says the limit was not the cap's frame,
// and only the sequential analysis can tell.
func TestCapDecisionSecondPass(t *testing.T) {
	beyond := func() *capRefusals { r := &capRefusals{}; r.note(7, 9, true); return r }
	for _, tc := range []struct {
		name    string
		tracked []uint64
		exact   bool
		err     error
	}{
		{"the cap's worth", []uint64{1, 2, 4}, true, nil},
		{"fewer than the cap", []uint64{1, 2}, false, errCapUndecided},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exact, _, err := capDecision(tc.tracked, []*capRefusals{beyond(), {}}, 3)
			assert.Equal(t, tc.exact, exact)
			assert.ErrorIs(t, err, tc.err)
		})
	}
}
