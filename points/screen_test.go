package points

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestScreenEstimate: files screened by the hashes of their samples, of
// which only the candidates are given again, get the estimate of every
// file's Sampler (EstimateClocks, which compares every pair the screen
// lets through, and estimatePair, checked against a map oracle by
// TestEstimatePairMerge): the offsets, the groups and the pairs apart. The
// files are 20 runs of TestEstimatePairMerge's random files, one after
// another (points of one traffic within a run, unrelated across runs,
// some reaching a sampling level), with every run's files shuffled among
// the others; the screen drops files that share nothing.
func TestScreenEstimate(t *testing.T) {
	hosts := []analyze.Addr{hostA, hostB, {IP: netip.MustParseAddr("10.0.0.3")}, {LID: 7, IsLID: true}}
	rng := rand.New(rand.NewPCG(41, 4))
	for run := range 5 {
		var ss []*Sampler
		for range 20 {
			ss = append(ss, samplePairFiles(rng, hosts)...)
		}
		for range 10 { // files with nothing in common with any other
			s := NewSampler(0)
			sampleRandomFlow(rng, hosts, []*Sampler{s}, []time.Duration{0})
			ss = append(ss, s)
		}
		rng.Shuffle(len(ss), func(i, j int) { ss[i], ss[j] = ss[j], ss[i] })
		want := EstimateClocks(ss, nil)

		sc := NewScreen(len(ss))
		for i, s := range ss {
			sc.Add(i, s)
		}
		cands := sc.Candidates()
		again := make([]*Sampler, len(ss))
		for _, i := range cands {
			again[i] = ss[i]
		}
		got := sc.Estimate(again, nil)
		require.NotEmpty(t, want.Groups, "run %d", run)
		assert.Less(t, len(cands), len(ss), "run %d: the screen lets every file through", run)
		assert.Equal(t, want, got, "run %d", run)
	}
}
