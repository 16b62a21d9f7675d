package analyze_test

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// BenchmarkAnalyzeManyFlows feeds the same 500,000-packet roce-synth mix
// over 16 and over 65,536 QPs (about 135,000 flows) and builds its report
// (Analyzer.Finish), to compare the cost per packet of many flows with
// few (docs/robustness.md, "Scale"). ns/pkt covers the packets and the
// report; state-B/flow is the heap the analyzer holds per flow after the
// last packet (without the series, as for the text report).
func BenchmarkAnalyzeManyFlows(b *testing.B) {
	for _, qps := range []int{16, 65536} {
		b.Run(fmt.Sprintf("qps%d", qps), func(b *testing.B) {
			fs := generate(b, synth.Config{Scenario: synth.ScenarioMix, Packets: 500_000, QPs: qps})
			b.SetBytes(fs.bytes)
			b.ReportAllocs()
			n := len(fs.ends)
			var elapsed time.Duration
			flows := 0
			for b.Loop() {
				start := time.Now()
				a := analyze.New(analyze.Options{})
				prev := 0
				for i, end := range fs.ends {
					a.Feed(fs.cis[i], fs.lt, fs.buf[prev:end])
					prev = end
				}
				r := a.Finish()
				elapsed += time.Since(start)
				flows = len(r.Flows)
			}
			b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n*b.N), "ns/pkt")
			b.ReportMetric(float64(flows), "flows")
			if qps < 1024 {
				return // too few flows to measure their heap
			}
			// The heap the analyzer holds after the last packet, per flow
			// (outside the timing).
			b.StopTimer()
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			a := analyze.New(analyze.Options{NoSeries: true})
			prev := 0
			for i, end := range fs.ends {
				a.Feed(fs.cis[i], fs.lt, fs.buf[prev:end])
				prev = end
			}
			runtime.GC()
			runtime.ReadMemStats(&m1)
			b.ReportMetric(float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc))/float64(flows), "state-B/flow")
			runtime.KeepAlive(a)
		})
	}
}

// BenchmarkAnalyzeFlowLocality feeds the 65,536-QP mix of
// BenchmarkAnalyzeManyFlows twice: in capture order, where the packets of
// about 135,000 flows interleave at random, and with each flow's packets
// together (in the order of the flows' first packets). The packets and
// flows are the same; the difference is what the interleaving costs in
// cache misses (the flows' state is far larger than the caches), the
// rest of the cost over few flows is the flows' creation and reports
// (docs/robustness.md, "Scale"); capture-order-prefetch feeds in capture
// order with Analyzer.Prefetch of every 16 frames ahead, as the command
// does. feed-ns/pkt and finish-ns/pkt split the time between the packets
// and Analyzer.Finish; feed-cpu-ns/pkt is the process's CPU time while
// the packets are fed, which other work on a shared machine's cores
// disturbs less than the wall time.
func BenchmarkAnalyzeFlowLocality(b *testing.B) {
	fs := generate(b, synth.Config{Scenario: synth.ScenarioMix, Packets: 500_000, QPs: 65536})
	n := len(fs.ends)
	starts := make([]int, n)
	for i := 1; i < n; i++ {
		starts[i] = fs.ends[i-1]
	}
	// The flow of each frame: the index of the flow's first frame.
	type flowOf struct {
		src, dst analyze.Addr
		qp       uint32
	}
	firstOf := map[flowOf]int{}
	group := make([]int, n)
	a := analyze.New(analyze.Options{NoICRC: true})
	for i := range n {
		p := a.Feed(fs.cis[i], fs.lt, fs.buf[starts[i]:fs.ends[i]])
		k := flowOf{qp: 1 << 31} // frames outside any flow: one group
		if p.BTH != nil {
			k = flowOf{p.Src, p.Dst, p.BTH.DestQP}
		}
		if _, ok := firstOf[k]; !ok {
			firstOf[k] = i
		}
		group[i] = firstOf[k]
	}
	captured := make([]int, n)
	for i := range captured {
		captured[i] = i
	}
	byFlow := slices.Clone(captured)
	slices.SortStableFunc(byFlow, func(x, y int) int { return cmp.Compare(group[x], group[y]) })
	for _, tc := range []struct {
		name     string
		order    []int
		prefetch bool
	}{{"capture-order", captured, false}, {"capture-order-prefetch", captured, true}, {"flow-by-flow", byFlow, false}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var feed, finish time.Duration
			var feedCPU int64
			ahead := make([][]byte, 0, 16)
			for b.Loop() {
				t0, c0 := time.Now(), testenv.CPUTime()
				a := analyze.New(analyze.Options{})
				for j, i := range tc.order {
					if tc.prefetch && j%16 == 0 { // as the command reads ahead (internal/cli: prefetcher)
						ahead = ahead[:0]
						for _, k := range tc.order[j:min(j+16, n)] {
							ahead = append(ahead, fs.buf[starts[k]:fs.ends[k]])
						}
						a.Prefetch(fs.lt, ahead)
					}
					a.Feed(fs.cis[i], fs.lt, fs.buf[starts[i]:fs.ends[i]])
				}
				t1 := time.Now()
				feedCPU += testenv.CPUTime() - c0
				a.Finish()
				feed += t1.Sub(t0)
				finish += time.Since(t1)
			}
			b.ReportMetric(float64(feed.Nanoseconds())/float64(n*b.N), "feed-ns/pkt")
			b.ReportMetric(float64(finish.Nanoseconds())/float64(n*b.N), "finish-ns/pkt")
			b.ReportMetric(float64(feedCPU)/float64(n*b.N), "feed-cpu-ns/pkt")
			b.ReportMetric(float64(len(firstOf)), "flows")
		})
	}
}
