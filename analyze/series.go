package analyze

import (
	"sort"
	"time"
)

// maxSeries bounds the throughput series of a flow: past it, the flow's
// interval doubles and its samples are merged in pairs, so that memory
// stays bounded however long (or however crafted) the capture is.
const maxSeries = 512

// addSample adds a packet to the flow's throughput series.
func (a *Analyzer) addSample(f *flowState, t time.Time, payload, wire int) {
	if a.opts.NoSeries {
		return
	}
	if f.series == nil {
		f.series = new(flowSeries)
		f.series.interval = int64(a.opts.Interval)
	}
	fs := f.series
	b := bucketStart(t.UnixNano(), fs.interval)
	n := len(fs.samples)
	var i int
	switch {
	case n > 0 && fs.samples[n-1].Start.UnixNano() == b:
		i = n - 1
	case n == 0 || fs.samples[n-1].Start.UnixNano() < b:
		fs.samples = growSeries(fs.samples)
		fs.samples[n] = Sample{Start: time.Unix(0, b).UTC()}
		i = n
	default: // the clock went back: find or insert its bucket
		i = sort.Search(n, func(k int) bool { return fs.samples[k].Start.UnixNano() >= b })
		if fs.samples[i].Start.UnixNano() != b {
			fs.samples = growSeries(fs.samples)
			copy(fs.samples[i+1:], fs.samples[i:])
			fs.samples[i] = Sample{Start: time.Unix(0, b).UTC()}
		}
	}
	s := &fs.samples[i]
	s.Packets++
	if payload > 0 {
		s.PayloadBytes += uint64(payload)
	}
	s.WireBytes += uint64(wire)
	for len(fs.samples) > maxSeries {
		fs.interval *= 2
		fs.samples = coarsen(fs.samples[:0], fs.samples, fs.interval)
	}
}

// bucketStart returns the start of the interval holding t (nanoseconds).
func bucketStart(t, iv int64) int64 {
	b := t / iv * iv
	if b > t { // negative times round down too
		b -= iv
	}
	return b
}

// coarsen appends to dst the samples of src regrouped into intervals of
// iv nanoseconds; dst may be src[:0].
func coarsen(dst, src []Sample, iv int64) []Sample {
	for _, s := range src {
		b := bucketStart(s.Start.UnixNano(), iv)
		if n := len(dst); n > 0 && dst[n-1].Start.UnixNano() == b {
			d := &dst[n-1]
			d.Packets += s.Packets
			d.PayloadBytes += s.PayloadBytes
			d.WireBytes += s.WireBytes
			continue
		}
		s.Start = time.Unix(0, b).UTC()
		dst = append(dst, s)
	}
	return dst
}

// mergeSeries adds two series ordered by start time.
func mergeSeries(a, b []Sample) []Sample {
	out := make([]Sample, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i].Start.Before(b[j].Start)):
			out = append(out, a[i])
			i++
		case i >= len(a) || b[j].Start.Before(a[i].Start):
			out = append(out, b[j])
			j++
		default:
			s := a[i]
			s.Packets += b[j].Packets
			s.PayloadBytes += b[j].PayloadBytes
			s.WireBytes += b[j].WireBytes
			out = append(out, s)
			i++
			j++
		}
	}
	return out
}
