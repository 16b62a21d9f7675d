package analyze_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
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
