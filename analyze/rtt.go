package analyze

import (
	"math/bits"
	"slices"
)

// rttHist is a log-linear histogram of RTT samples in nanoseconds: 16
// sub-buckets per power of two, so the median is known within 1/16 (6 %)
// while memory stays bounded and histograms of several files add up
// exactly. It grows with the buckets its samples use: the first rttFew
// samples keep only their bucket numbers (few); then each used bucket is
// one (bucket, count) pair, kept sorted (sparse), up to rttSparseMax
// pairs; only then are the counts allocated (counts), for the octaves
// (powers of two) from the lowest sample's to the highest's. An
// octave's 16 counts are 64 bytes, one cache line: a flow's RTTs spread
// over a few octaves, so its counts take a few lines, not the 4 KiB of
// all 64.
type rttHist struct {
	n        uint64
	min, max int64
	few      [rttFew]uint16
	lo       uint16 // the bucket of counts[0], the first of an octave
	sparse   []rttCount
	counts   []uint32 // buckets lo … lo+len(counts)-1, whole octaves
}

// rttCount is one used bucket of a sparse histogram.
type rttCount struct {
	b uint16
	c uint32
}

// rttBuckets is the number of buckets, rttOctave the buckets of a power
// of two; rttFew how many samples a histogram keeps as bucket numbers
// before it counts per bucket; rttSparseMax how many buckets it counts in
// pairs (8 bytes each) before it allocates its counts, and rttDenseAt how
// many samples: past it the counts (at most 4 KiB) are little beside the
// flow's traffic (16 bytes a sample), and a sample costs an index, not a
// search of the pairs: a flow whose RTTs spread over many buckets would
// otherwise search them at every sample.
const (
	rttOctave    = 16
	rttBuckets   = 64 * rttOctave
	rttFew       = 8
	rttSparseMax = 128
	rttDenseAt   = 256
)

// isFew says the histogram still holds its samples as bucket numbers.
func (h *rttHist) isFew() bool { return h.counts == nil && h.sparse == nil }

// bucket adds one sample to bucket b (h.n not yet counting it).
func (h *rttHist) bucket(b int) {
	if h.isFew() && h.n < rttFew {
		h.few[h.n] = uint16(b)
		return
	}
	h.addCount(b, 1)
}

// addCount adds c samples to bucket b, leaving the few bucket numbers
// first.
func (h *rttHist) addCount(b int, c uint32) {
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
		h.sparse = make([]rttCount, 0, 2*rttFew)
		for _, x := range h.few[:min(h.n, rttFew)] {
			h.sparseAdd(int(x), 1)
		}
	}
	if h.n >= rttDenseAt {
		h.toCounts()
		h.addCount(b, c)
		return
	}
	h.sparseAdd(b, c)
}

// sparseAdd adds c samples to bucket b of the sparse pairs, or moves them
// to counts when one more pair would pass rttSparseMax.
func (h *rttHist) sparseAdd(b int, c uint32) {
	i, found := slices.BinarySearchFunc(h.sparse, uint16(b), func(x rttCount, b uint16) int { return int(x.b) - int(b) })
	if found {
		h.sparse[i].c += c
		return
	}
	if len(h.sparse) < rttSparseMax {
		h.sparse = slices.Insert(h.sparse, i, rttCount{b: uint16(b), c: c})
		return
	}
	h.toCounts()
	h.addCount(b, c)
}

// toCounts moves the few bucket numbers or the sparse pairs into counts
// (allocated), which then cover the buckets they used.
func (h *rttHist) toCounts() {
	old := *h // the few or the sparse form, which each reads
	lo, hi := rttBuckets, -1
	old.each(func(b int, _ uint32) { lo, hi = min(lo, b), max(hi, b) })
	if hi >= 0 { // else no sample yet: cover allocates them for the first
		h.cover(lo, hi)
		old.each(func(b int, c uint32) { h.counts[b-int(h.lo)] += c })
	}
	h.sparse = nil
}

// each gives the counts of the used buckets, whichever form holds them:
// the few bucket numbers a sample each, the sparse pairs, or the counts.
func (h *rttHist) each(yield func(b int, c uint32)) {
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
		for _, x := range h.few[:min(h.n, rttFew)] {
			yield(int(x), 1)
		}
	}
}

// cover widens counts to the octaves of buckets lo to hi, keeping what
// they count.
func (h *rttHist) cover(lo, hi int) {
	if h.counts != nil {
		lo, hi = min(lo, int(h.lo)), max(hi, int(h.lo)+len(h.counts)-1)
	}
	lo &^= rttOctave - 1
	hi |= rttOctave - 1
	c := make([]uint32, hi-lo+1)
	if h.counts != nil {
		copy(c[int(h.lo)-lo:], h.counts)
	}
	h.counts, h.lo = c, uint16(lo)
}

// dense returns the counts of every bucket, in a new array.
func (h *rttHist) dense() *[rttBuckets]uint32 {
	c := new([rttBuckets]uint32)
	h.each(func(b int, n uint32) { c[b] += n })
	return c
}

// clone returns a copy that shares no memory with h.
func (h *rttHist) clone() rttHist {
	c := *h
	c.counts = slices.Clone(h.counts)
	c.sparse = slices.Clone(h.sparse)
	return c
}

func bucketOf(v int64) int {
	if v < 16 {
		return int(v)
	}
	e := bits.Len64(uint64(v)) - 1 // v in [2^e, 2^(e+1))
	sub := int(uint64(v)>>(e-4)) & 15
	return (e-3)*16 + sub
}

// bucketMid returns the middle of a bucket.
func bucketMid(b int) int64 {
	if b < 16 {
		return int64(b)
	}
	e := b/16 + 3
	sub := b % 16
	lo := int64(16+sub) << (e - 4)
	return lo + int64(1)<<(e-4)/2
}

func (h *rttHist) add(v int64) {
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
	if b >= rttBuckets {
		b = rttBuckets - 1
	}
	h.bucket(b)
	h.n++
}

func (h *rttHist) merge(o *rttHist) {
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

// median returns the middle sample's bucket, clamped to [min, max].
func (h *rttHist) median() int64 {
	target := (h.n + 1) / 2
	clamp := func(b int) int64 { return min(max(bucketMid(b), h.min), h.max) }
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

func (h *rttHist) summary() *RTT {
	if h == nil || h.n == 0 {
		return nil
	}
	return &RTT{Samples: h.n, MinNs: h.min, MedianNs: h.median(), MaxNs: h.max}
}
