package hist

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// figures is what a report gives of a histogram: samples, min, median,
// max.
func (h *Hist) figures() [4]int64 {
	return [4]int64{int64(h.n), h.min, h.Median(), h.max}
}

// TestRTTHistFew checks that a histogram holding its first samples as
// bucket numbers, then its used buckets as sparse pairs, gives the same
// figures and counts, merged or not, as one that counts every sample in
// its buckets from the first (the histogram as it was before it kept few
// samples): from one sample to thousands spread over more buckets than
// the sparse pairs hold.
func TestRTTHistFew(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 7, 8, 9, 15, 40, 129, 1000, 5000} {
		for _, m := range []int{0, 1, 5, 8, 30, 700} {
			xs, ys := make([]int64, n), make([]int64, m)
			for i := range xs {
				xs[i] = rng.Int64N(5_000_000) - 100
			}
			for i := range ys {
				ys[i] = rng.Int64N(80_000)
			}
			few, dense := &Hist{}, &Hist{counts: make([]uint32, Buckets)}
			fewY, denseY := &Hist{}, &Hist{counts: make([]uint32, Buckets)}
			for _, v := range xs {
				few.Add(v)
				dense.Add(v)
			}
			for _, v := range ys {
				fewY.Add(v)
				denseY.Add(v)
			}
			require.Equal(t, dense.figures(), few.figures(), "n=%d", n)
			assert.Equal(t, *dense.Dense(), *few.Dense(), "n=%d", n)
			before := *few.Dense()
			c := few.Clone()
			c.Merge(fewY)
			dense.Merge(denseY)
			assert.Equal(t, before, *few.Dense(), "the clone shares nothing with its source")
			require.Equal(t, dense.figures(), c.figures(), "n=%d m=%d", n, m)
			assert.Equal(t, *dense.Dense(), *c.Dense(), "n=%d m=%d", n, m)
			assert.Equal(t, uint64(n), few.n, "the clone shares nothing with its source")
		}
	}
}

// TestRTTHistOctaves checks the window of counts a histogram allocates:
// the whole octaves from its lowest used bucket to its highest, widened
// by a later sample or a merge outside it, counting what a histogram of
// every bucket counts.
func TestRTTHistOctaves(t *testing.T) {
	type part struct{ bucket, samples int }
	for _, tc := range []struct {
		name        string
		parts       []part // added to the histogram, in order
		merged      []part // a second histogram merged into it
		lo, octaves int
	}{
		{"one octave", []part{{160, denseAt + 1}, {175, 3}}, nil, 160, 1},
		{"widened down, then up", []part{{170, denseAt + 1}, {20, 1}, {900, 1}}, nil, 16, 56},
		{"the highest an int64 reaches", []part{{959, denseAt + 1}}, nil, 944, 1},
		{"the first bucket", []part{{0, denseAt + 1}, {15, 1}}, nil, 0, 1},
		{"past the sparse pairs, not the samples", []part{{16, 100}, {300, 1}}, nil, 0, 0},
		{"merged, apart", []part{{170, denseAt + 1}}, []part{{400, denseAt + 1}}, 160, 16},
		{"merged, inside", []part{{170, denseAt + 1}, {500, 1}}, []part{{300, denseAt + 1}}, 160, 22},
		{"merged into an empty one", nil, []part{{400, denseAt + 1}}, 400, 1},
		{"merged into a sparse one", []part{{30, 5}}, []part{{400, denseAt + 1}}, 16, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fill := func(h *Hist, parts []part) {
				for _, p := range parts {
					for range p.samples {
						h.Add(Mid(p.bucket))
					}
				}
			}
			var h, o Hist
			every := Hist{counts: make([]uint32, Buckets)} // all buckets from the start
			fill(&h, tc.parts)
			fill(&o, tc.merged)
			fill(&every, tc.parts)
			fill(&every, tc.merged)
			if tc.merged != nil {
				h.Merge(&o)
			}
			assert.Equal(t, tc.lo, int(h.lo))
			assert.Equal(t, tc.octaves*Octave, len(h.counts))
			assert.Equal(t, *every.Dense(), *h.Dense())
			assert.Equal(t, every.figures(), h.figures())
		})
	}
}

// TestRTTHistSparse checks which form a histogram takes: samples in few
// buckets stay sparse pairs up to denseAt samples; more used buckets
// than sparseMax, or more samples, allocate the counts.
func TestRTTHistSparse(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n, buckets int
		pairs      int
		counts     bool
	}{
		{"few samples", fewMax, 3, 0, false},
		{"samples up to denseAt, three buckets", denseAt, 3, 3, false},
		{"one sample more", denseAt + 1, 3, 0, true},
		{"many samples, three buckets", 100_000, 3, 0, true},
		{"as many buckets as pairs", denseAt, sparseMax, sparseMax, false},
		{"one bucket more", sparseMax + 1, sparseMax + 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Hist
			want := new([Buckets]uint32)
			for i := range tc.n {
				b := 16 + i%tc.buckets // buckets 16, 17, …: one value each
				h.Add(Mid(b))
				want[b]++
			}
			assert.Len(t, h.sparse, tc.pairs)
			assert.Equal(t, tc.counts, h.counts != nil)
			assert.Equal(t, *want, *h.Dense())
		})
	}
}
