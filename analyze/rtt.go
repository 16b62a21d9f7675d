package analyze

import (
	"math/bits"
	"slices"
)

// rttHist is a log-linear histogram of RTT samples in nanoseconds: 16
// sub-buckets per power of two, so the median is known within 1/16 (6 %)
// while memory stays fixed and histograms of several files add up exactly.
// The first rttFew samples keep only their bucket numbers (few); the
// 4 KiB of counts are allocated by the sample after them, so that a flow
// with a few RTT samples costs tens of bytes, not kilobytes.
type rttHist struct {
	n        uint64
	min, max int64
	few      [rttFew]uint16
	counts   *[rttBuckets]uint32
}

// rttBuckets is the number of buckets; rttFew how many samples a
// histogram keeps as bucket numbers before it allocates its counts.
const (
	rttBuckets = 64 * 16
	rttFew     = 8
)

// bucket adds one sample to bucket b.
func (h *rttHist) bucket(b int) {
	if h.counts == nil && h.n < rttFew {
		h.few[h.n] = uint16(b)
		return
	}
	if h.counts == nil {
		h.counts = new([rttBuckets]uint32)
		for _, x := range h.few {
			h.counts[x]++
		}
	}
	h.counts[b]++
}

// dense returns the counts of every bucket (a new array while the
// histogram holds few samples).
func (h *rttHist) dense() *[rttBuckets]uint32 {
	if h.counts != nil {
		return h.counts
	}
	c := new([rttBuckets]uint32)
	for _, x := range h.few[:h.n] {
		c[x]++
	}
	return c
}

// clone returns a copy that shares no memory with h.
func (h *rttHist) clone() rttHist {
	c := *h
	if h.counts != nil {
		counts := *h.counts
		c.counts = &counts
	}
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
	if o.counts == nil {
		for _, b := range o.few[:o.n] {
			h.bucket(int(b))
			h.n++
		}
		return
	}
	if h.counts == nil {
		h.counts = h.dense()
	}
	h.n += o.n
	for i, c := range o.counts {
		h.counts[i] += c
	}
}

// median returns the middle sample's bucket, clamped to [min, max].
func (h *rttHist) median() int64 {
	target := (h.n + 1) / 2
	if h.counts == nil { // the target-th smallest sample's bucket: buckets grow with the value
		few := h.few
		slices.Sort(few[:h.n])
		return min(max(bucketMid(int(few[target-1])), h.min), h.max)
	}
	var seen uint64
	for b, c := range h.counts {
		seen += uint64(c)
		if seen >= target {
			m := bucketMid(b)
			if m < h.min {
				m = h.min
			}
			if m > h.max {
				m = h.max
			}
			return m
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
