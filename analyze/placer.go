package analyze

// placer assigns host pairs to shards: a host pair seen for the first
// time goes to the shard with the least work so far (the fewest host
// pairs on a tie), and stays there. A shard's work is its frames'
// analysis; shard 0, which the reader analyzes itself, has besides the
// reading of every frame of all shards (a quarter of a frame's analysis:
// analysisPerReading), so that it takes fewer host pairs. Any
// assignment of whole host pairs gives the same report; this one
// balances the shards better than a hash modulo N when there are few
// host pairs. It depends only on the frames.
type placer struct {
	of     map[uint64]int32
	cache  [256]placed
	frames []uint64
	pairs  []int
	total  uint64
}

// maxPlaced is how many host pairs the placer places by the shards' work
// and remembers; later ones go to the shard their key's hash says, which
// spreads a great number of host pairs evenly without a map entry each
// (a million one-frame host pairs would cost 40 MB).
const maxPlaced = 1 << 16

// analysisPerReading is what analyzing a frame costs in readings of a
// frame (reading and placing it): 4.
const analysisPerReading = 4

type placed struct {
	key   uint64
	shard int32
}

// newPlacer returns a placer for n shards. Frames of no host pair (key
// 0: no state of theirs links them to others) go to shard 0, which the
// zero cache entry already says.
func newPlacer(n int) *placer {
	return &placer{of: map[uint64]int32{0: 0}, frames: make([]uint64, n), pairs: make([]int, n)}
}

// shard returns the shard of a frame of host pair key.
func (p *placer) shard(key uint64) int {
	p.total++
	c := &p.cache[key%uint64(len(p.cache))]
	if c.key != key {
		s, ok := p.of[key]
		switch {
		case ok:
		case len(p.of) > maxPlaced:
			s = int32(fmix64(key) % uint64(len(p.frames)))
		default:
			for i := range p.frames {
				if w, ws := p.work(i), p.work(int(s)); w < ws || w == ws && p.pairs[i] < p.pairs[s] {
					s = int32(i)
				}
			}
			p.of[key] = s
			p.pairs[s]++
		}
		*c = placed{key, s}
	}
	p.frames[c.shard]++
	return int(c.shard)
}

// work is shard i's work so far, in readings of a frame (a frame
// analyzed is analysisPerReading of them): whole units, so that the reading of
// the first frames is not rounded away and the capture's first host pair
// goes to another shard than the reader's (one host pair on shard 0 left
// the other cores idle).
func (p *placer) work(i int) uint64 {
	if i == 0 {
		return p.frames[0]*analysisPerReading + p.total
	}
	return p.frames[i] * analysisPerReading
}
