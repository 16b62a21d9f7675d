package htmlreport

import "sort"

// Throughput buckets: a flow's bytes per interval, the interval starting
// at baseIntervalNs and doubling whenever more than maxBuckets non-empty
// buckets would be kept, so that any flow is resolved into at most
// maxBuckets intervals whatever its length. Bucket starts are multiples
// of the interval since the Unix epoch, so that the buckets of several
// files merge.
const (
	baseIntervalNs = 128
	maxBuckets     = 512
	// shownBuckets is about how many intervals the page's throughput
	// chart spans: finer buckets are merged for display.
	shownBuckets    = 250
	minShownBuckets = 24
)

type bucket struct {
	start         int64
	payload, wire uint64
}

// buckets is a sorted, sparse list of non-empty intervals.
type buckets struct {
	iv   int64
	list []bucket
}

func (b *buckets) add(t int64, payload, wire int) {
	if b.iv == 0 {
		b.iv = baseIntervalNs
	}
	s := floorTo(t, b.iv)
	n := len(b.list)
	var i int
	switch {
	case n > 0 && b.list[n-1].start == s:
		i = n - 1
	case n == 0 || b.list[n-1].start < s:
		b.list = append(b.list, bucket{start: s})
		i = n
	default: // the clock went back
		i = sort.Search(n, func(k int) bool { return b.list[k].start >= s })
		if b.list[i].start != s {
			b.list = append(b.list, bucket{})
			copy(b.list[i+1:], b.list[i:])
			b.list[i] = bucket{start: s}
		}
	}
	if payload > 0 {
		b.list[i].payload += uint64(payload)
	}
	if wire > 0 {
		b.list[i].wire += uint64(wire)
	}
	for len(b.list) > maxBuckets {
		b.coarsen(b.iv * 2)
	}
}

// coarsen merges the buckets into intervals of iv (a multiple of b.iv).
func (b *buckets) coarsen(iv int64) {
	if iv <= b.iv {
		return
	}
	b.iv = iv
	out := b.list[:0]
	for _, x := range b.list {
		x.start = floorTo(x.start, iv)
		if k := len(out); k > 0 && out[k-1].start == x.start {
			out[k-1].payload += x.payload
			out[k-1].wire += x.wire
			continue
		}
		out = append(out, x)
	}
	b.list = out
}

// floorTo returns the multiple of iv at or below t.
func floorTo(t, iv int64) int64 {
	s := t / iv * iv
	if s > t {
		s -= iv
	}
	return s
}

// mergeBuckets sums several lists into one at the coarsest interval.
func mergeBuckets(parts []*buckets) buckets {
	var iv int64
	for _, p := range parts {
		iv = max(iv, p.iv)
	}
	sum := map[int64]*bucket{}
	for _, p := range parts {
		c := buckets{iv: p.iv, list: append([]bucket(nil), p.list...)}
		c.coarsen(iv)
		for _, x := range c.list {
			if s := sum[x.start]; s != nil {
				s.payload += x.payload
				s.wire += x.wire
			} else {
				y := x
				sum[x.start] = &y
			}
		}
	}
	out := buckets{iv: iv}
	for _, x := range sum {
		out.list = append(out.list, *x)
	}
	sort.Slice(out.list, func(i, j int) bool { return out.list[i].start < out.list[j].start })
	return out
}
