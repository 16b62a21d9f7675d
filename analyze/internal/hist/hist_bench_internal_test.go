package hist

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkHistMany adds samples round-robin to the dense histograms
// of 512 flows (256 QPs' RTTs and response latencies, as in a mix of 256
// QPs), each sample a log-uniform 2–200 µs: what an ACK costs the
// histograms once their counts no longer fit in a core's cache.
func BenchmarkHistMany(b *testing.B) {
	const hists = 512
	rng := rand.New(rand.NewPCG(1, 2))
	hs := make([]Hist, hists)
	vals := make([]int64, 1<<16)
	for i := range vals {
		vals[i] = int64(2000<<rng.IntN(7)) + rng.Int64N(2000<<rng.IntN(7))
	}
	for i := range hs {
		for j := range denseAt + 1 {
			hs[i].Add(vals[(i*7+j)&(len(vals)-1)])
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		hs[i%hists].Add(vals[i&(len(vals)-1)])
		i++
	}
}
