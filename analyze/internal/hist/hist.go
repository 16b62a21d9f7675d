package hist

import (
	"math/bits"
	"slices"
)

// Hist is a log-linear histogram of samples in nanoseconds (RTTs, NIC
// times): 16 sub-buckets per power of two, so the median is known within 1/16 (6 %)
// while memory stays bounded and histograms of several files add up
// exactly. It grows with the buckets its samples use: the first fewMax
// samples keep only their bucket numbers (few); then each used bucket is
// one (bucket, count) pair, kept sorted (sparse), up to sparseMax
// pairs; only then are the counts allocated (counts), for the octaves
// (powers of two) from the lowest sample's to the highest's. An
// octave's 16 counts are 64 bytes, one cache line: a flow's RTTs spread
// over a few octaves, so its counts take a few lines, not the 4 KiB of
// all 64.
type Hist struct {
	n        uint64
	min, max int64
	few      [fewMax]uint16
	lo       uint16 // the bucket of counts[0], the first of an octave
	sparse   []count
	counts   []uint32 // buckets lo … lo+len(counts)-1, whole octaves
}

// count is one used bucket of a sparse histogram.
type count struct {
	b uint16
	c uint32
}

// Buckets is the number of buckets, Octave the buckets of a power
// of two; fewMax how many samples a histogram keeps as bucket numbers
// before it counts per bucket; sparseMax how many buckets it counts in
// pairs (8 bytes each) before it allocates its counts, and denseAt how
// many samples: past it the counts (at most 4 KiB) are little beside the
// flow's traffic (16 bytes a sample), and a sample costs an index, not a
// search of the pairs: a flow whose RTTs spread over many buckets would
// otherwise search them at every sample.
const (
	Octave    = 16
	Buckets   = 64 * Octave
	fewMax    = 8
	sparseMax = 128
	denseAt   = 256
)

// isFew says the histogram still holds its samples as bucket numbers.
func (h *Hist) isFew() bool { return h.counts == nil && h.sparse == nil }

// bucket adds one sample to bucket b (h.n not yet counting it).
func (h *Hist) bucket(b int) {
	if h.isFew() && h.n < fewMax {
		h.few[h.n] = uint16(b)
		return
	}
	h.addCount(b, 1)
}

// addCount adds c samples to bucket b, leaving the few bucket numbers
// first.
func (h *Hist) addCount(b int, c uint32) {
	if h.counts != nil {
		if i := b - int(h.lo); uint(i) < uint(len(h.counts)) {
			h.counts[i] += c
			return
		}
		h.cover(b, b)
		h.counts[b-int(h.lo)] += c
		return
	}
	if h.sparse == nil {
		h.sparse = make([]count, 0, 2*fewMax)
		for _, x := range h.few[:min(h.n, fewMax)] {
			h.sparseAdd(int(x), 1)
		}
	}
	if h.n >= denseAt {
		h.toCounts()
		h.addCount(b, c)
		return
	}
	h.sparseAdd(b, c)
}

// sparseAdd adds c samples to bucket b of the sparse pairs, or moves them
// to counts when one more pair would pass sparseMax.
func (h *Hist) sparseAdd(b int, c uint32) {
	i, found := slices.BinarySearchFunc(h.sparse, uint16(b), func(x count, b uint16) int { return int(x.b) - int(b) })
	if found {
		h.sparse[i].c += c
		return
	}
	if len(h.sparse) < sparseMax {
		h.sparse = slices.Insert(h.sparse, i, count{b: uint16(b), c: c})
		return
	}
	h.toCounts()
	h.addCount(b, c)
}

// toCounts moves the few bucket numbers or the sparse pairs into counts
// (allocated), which then cover the buckets they used.
func (h *Hist) toCounts() {
	old := *h // the few or the sparse form, which each reads
	lo, hi := Buckets, -1
	old.each(func(b int, _ uint32) { lo, hi = min(lo, b), max(hi, b) })
	if hi >= 0 { // else no sample yet: cover allocates them for the first
		h.cover(lo, hi)
		old.each(func(b int, c uint32) { h.counts[b-int(h.lo)] += c })
	}
	h.sparse = nil
}

// each gives the counts of the used buckets, whichever form holds them:
// the few bucket numbers a sample each, the sparse pairs, or the counts.
func (h *Hist) each(yield func(b int, c uint32)) {
	switch {
	case h.counts != nil:
		for i, c := range h.counts {
			yield(int(h.lo)+i, c)
		}
	case h.sparse != nil:
		for _, x := range h.sparse {
			yield(int(x.b), x.c)
		}
	default:
		for _, x := range h.few[:min(h.n, fewMax)] {
			yield(int(x), 1)
		}
	}
}

// cover widens counts to the octaves of buckets lo to hi, keeping what
// they count.
func (h *Hist) cover(lo, hi int) {
	if h.counts != nil {
		lo, hi = min(lo, int(h.lo)), max(hi, int(h.lo)+len(h.counts)-1)
	}
	lo &^= Octave - 1
	hi |= Octave - 1
	c := make([]uint32, hi-lo+1)
	if h.counts != nil {
		copy(c[int(h.lo)-lo:], h.counts)
	}
	h.counts, h.lo = c, uint16(lo)
}

// Dense returns the counts of every bucket, in a new array.
func (h *Hist) Dense() *[Buckets]uint32 {
	c := new([Buckets]uint32)
	h.each(func(b int, n uint32) { c[b] += n })
	return c
}

// Clone returns a copy that shares no memory with h.
func (h *Hist) Clone() Hist {
	c := *h
	c.counts = slices.Clone(h.counts)
	c.sparse = slices.Clone(h.sparse)
	return c
}

// bucketOf returns the bucket of a sample v ≥ 0.
func bucketOf(v int64) int {
	if v < 16 {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 1 // v in [2^e, 2^(e+1))
	sub := int(uint64(v)>>(e-4)) & 15
	return (e-3)*16 + sub
}

// Mid returns the middle of bucket b.
func Mid(b int) int64 {
	if b < 16 {
		return int64(b)
	}
	return Low(b) + int64(1)<<(b/16-1)/2
}

// Add adds a sample; a negative one counts as 0.
func (h *Hist) Add(v int64) {
	if v < 0 {
		v = 0
	}
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	b := bucketOf(v)
	if b >= Buckets {
		b = Buckets - 1
	}
	h.bucket(b)
	h.n++
}

// Merge adds the samples of o (nil: none).
func (h *Hist) Merge(o *Hist) {
	if o == nil || o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	switch {
	case o.isFew():
		for _, b := range o.few[:o.n] {
			h.bucket(int(b))
			h.n++
		}
		return
	case o.sparse != nil:
		for _, x := range o.sparse {
			h.addCount(int(x.b), x.c)
		}
	default:
		if h.counts == nil {
			h.toCounts()
		}
		h.cover(int(o.lo), int(o.lo)+len(o.counts)-1)
		for i, c := range o.counts {
			h.counts[int(o.lo)-int(h.lo)+i] += c
		}
	}
	h.n += o.n
}

// Median returns the middle sample's bucket, clamped to [min, max].
func (h *Hist) Median() int64 {
	target := (h.n + 1) / 2
	clamp := func(b int) int64 { return min(max(Mid(b), h.min), h.max) }
	switch {
	case h.isFew(): // the target-th smallest sample's bucket: buckets grow with the value
		few := h.few
		slices.Sort(few[:h.n])
		return clamp(int(few[target-1]))
	case h.sparse != nil:
		var seen uint64
		for _, x := range h.sparse {
			seen += uint64(x.c)
			if seen >= target {
				return clamp(int(x.b))
			}
		}
		return h.max
	}
	var seen uint64
	for i, c := range h.counts {
		seen += uint64(c)
		if seen >= target {
			return clamp(int(h.lo) + i)
		}
	}
	return h.max
}

// Low returns the lowest value of bucket b.
func Low(b int) int64 {
	if b < 16 {
		return int64(b)
	}
	e := b/16 + 3
	return int64(16+b%16) << (e - 4)
}

// N returns the number of samples.
func (h *Hist) N() uint64 { return h.n }

// Min returns the smallest sample (0 without samples).
func (h *Hist) Min() int64 { return h.min }

// Max returns the largest sample (0 without samples).
func (h *Hist) Max() int64 { return h.max }
