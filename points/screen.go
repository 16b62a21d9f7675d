package points

import (
	"slices"
	"sync"
	"time"
)

// Screen finds, among many files, those that may be capture points of
// one traffic or share transmissions, from the hashes of their samples
// alone (8 bytes a sampled transmission, not a Sampler's map): a caller
// that cannot hold a Sampler of every file at once adds each file's
// Sampler as it is filled and drops it, then samples again only the
// files Candidates returns and estimates their clocks (Estimate), which
// finds what EstimateClocks of every file's Sampler would. Add is safe
// for concurrent use.
type Screen struct {
	mu     sync.Mutex
	level  uint
	hashes [][]uint64 // by file: the sampled data transmissions' hashes
}

// NewScreen returns the Screen of n files.
func NewScreen(n int) *Screen { return &Screen{hashes: make([][]uint64, n)} }

// Add takes file i's Sampler.
func (sc *Screen) Add(i int, s *Sampler) {
	var hs []uint64
	for k, v := range s.keys {
		if !k.flow.management() {
			hs = append(hs, v.hash)
		}
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.level = max(sc.level, s.level)
	sc.hashes[i] = hs
}

// Candidates returns the files (in order) that may share MinShared
// sampled transmissions with another (candidatePairs).
func (sc *Screen) Candidates() []int {
	mask := uint64(1)<<sc.level - 1
	hashes := func(yield func(int, uint64) bool) {
		for f, hs := range sc.hashes {
			for _, h := range hs {
				if h&mask == 0 && !yield(f, h) {
					return
				}
			}
		}
	}
	var files []int
	for _, p := range candidatePairs(len(sc.hashes), hashes) {
		files = append(files, p[0], p[1])
	}
	slices.Sort(files)
	return slices.Compact(files)
}

// Estimate is EstimateClocks of the files given to Add, from samplers
// of the candidates (by file; nil for the others, which share too few
// transmissions with any file to matter).
func (sc *Screen) Estimate(samplers []*Sampler, overrides []*time.Duration) Estimate {
	return estimateClocks(samplers, overrides, sc.level)
}
