package analyze

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCapsExact races shards for a shared budget (each shard creates its
// flows in frame order, the shards taking turns at random) and checks
// capsExact against the rule of one Analyzer computed directly: the
// first limit flows by creation frame are tracked. It must pass exactly
// when the shards tracked those, and say ErrNotDisjoint otherwise; a cap
// each (no shared budget) tracks more than the cap and must fail too.
func TestCapsExact(t *testing.T) {
	raced := 0
	for seed := range uint64(400) {
		rng := rand.New(rand.NewPCG(seed, 7))
		shards := 1 + rng.IntN(4)
		flows := 1 + rng.IntN(60)
		limit := 1 + rng.IntN(flows+10)
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			tracked, refused := raceForBudget(rng, shards, flows, limit)
			slices.Sort(tracked)
			want := make([]uint64, 0, flows)
			for i := range min(limit, flows) {
				want = append(want, uint64(i+1))
			}
			err := capsExact("flows", tracked, refused, limit)
			if slices.Equal(tracked, want) {
				require.NoError(t, err)
				return
			}
			raced++
			require.ErrorIs(t, err, ErrNotDisjoint, "tracked %v, one Analyzer %v", tracked, want)
			assert.Contains(t, err.Error(), "raced for the cap's last flows")
		})
	}
	require.Greater(t, raced, 50, "the shards race often enough to check the check")
	err := capsExact("flows", []uint64{1, 2, 3, 4}, []uint64{0, 0}, 3)
	require.ErrorIs(t, err, ErrNotDisjoint)
	assert.Contains(t, err.Error(), "the shards tracked 4 flows, more than the cap of 3: they did not share a budget")
}

// raceForBudget creates flows 1…flows (flow i at frame i) in shards
// chosen at random, each shard creating its flows in frame order, the
// shards taking turns at random while a budget of limit lasts. It
// returns the creation frames of the flows tracked and the frame of each
// shard's first refusal (0: none).
func raceForBudget(rng *rand.Rand, shards, flows, limit int) ([]uint64, []uint64) {
	of := make([][]uint64, shards)
	for i := range flows {
		s := rng.IntN(shards)
		of[s] = append(of[s], uint64(i+1))
	}
	budget := limit
	next := make([]int, shards)
	var tracked []uint64
	refused := make([]uint64, shards)
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
		if refused[s] == 0 {
			refused[s] = f
		}
	}
	return tracked, refused
}
