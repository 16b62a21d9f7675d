package htmlreport

import (
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// tputData is a flow's throughput as steps: each value holds from its
// time to the next one.
type tputData struct {
	TNs        []int64   `json:"t_ns"`
	PayloadBps []float64 `json:"payload_bps"`
	WireBps    []float64 `json:"wire_bps"`
	IntervalNs int64     `json:"interval_ns"`
}

// buildTput returns a flow's throughput over time: from the Collector's
// buckets, merged to about shownBuckets intervals over the flow, or, for
// a flow without them, from the report's series.
func buildTput(f *analyze.Flow, m *merged, t0 int64) tputData {
	d := tputData{TNs: []int64{}, PayloadBps: []float64{}, WireBps: []float64{}}
	add := func(t int64, p, w float64) {
		d.TNs = append(d.TNs, t-t0)
		d.PayloadBps = append(d.PayloadBps, p)
		d.WireBps = append(d.WireBps, w)
	}
	if m != nil && len(m.tput) > 0 {
		t0 += m.offset // the buckets are on their file's clock
		b := mergeBuckets(m.tput)
		if len(b.list) == 0 {
			return d
		}
		// Merge intervals until the flow spans at most shownBuckets of
		// them, and until at least half are non-empty while it spans more
		// than minShownBuckets: captures with microsecond timestamps
		// would otherwise show every packet as a spike.
		for {
			n := (b.list[len(b.list)-1].start + b.iv - b.list[0].start) / b.iv
			if n <= shownBuckets && (n <= minShownBuckets || 2*int64(len(b.list)) >= n) {
				break
			}
			b.coarsen(b.iv * 2)
		}
		d.IntervalNs = b.iv
		secs := float64(b.iv) / 1e9
		for j, x := range b.list {
			if j > 0 && x.start > b.list[j-1].start+b.iv {
				add(b.list[j-1].start+b.iv, 0, 0)
			}
			add(x.start, float64(x.payload)*8/secs, float64(x.wire)*8/secs)
		}
		add(b.list[len(b.list)-1].start+b.iv, 0, 0)
		return d
	}
	step := int64(f.IntervalSeconds * float64(time.Second))
	d.IntervalNs = step
	if step <= 0 {
		return d
	}
	var prev int64
	for j, s := range f.Series {
		start := s.Start.UnixNano()
		if j > 0 && start-prev > step {
			add(prev+step, 0, 0)
		}
		add(start, float64(s.PayloadBytes)*8/f.IntervalSeconds, float64(s.WireBytes)*8/f.IntervalSeconds)
		prev = start
	}
	if len(f.Series) > 0 {
		add(prev+step, 0, 0)
	}
	return d
}
