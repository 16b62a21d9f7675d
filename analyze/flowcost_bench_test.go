package analyze_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// BenchmarkAnalyzeManyFlows feeds the same 500,000-packet roce-synth mix
// over 16 and over 65,536 QPs (about 131,000 flows) and builds its report
// (Analyzer.Finish): many flows must cost at most 1.5 times few flows per
// packet (docs/robustness.md, "Scale"). ns/pkt covers the packets and the
// report; B/flow is the heap the report building leaves per flow.
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
		})
	}
}
