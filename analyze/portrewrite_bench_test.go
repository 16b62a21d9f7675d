package analyze_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// BenchmarkAnalyzePortRewritten analyzes the same generated traffic (RoCE
// v2 RDMA WRITE over 16 QPs, every ICRC verified) as sent ("plain") and
// with every UDP source port overwritten with 4791 after the ICRC, as
// the NIC sniffer does ("rewritten": each port recovered from its ICRC).
// Both run in each iteration, in turns first, so that the load of a
// shared machine weighs on both alike; the rewritten capture may cost at most
// 20 % more (overhead-%).
func BenchmarkAnalyzePortRewritten(b *testing.B) {
	for _, tc := range []struct {
		mtu, packets int
	}{{4096, 50_000}, {1024, 100_000}} {
		b.Run(fmt.Sprintf("mtu%d", tc.mtu), func(b *testing.B) {
			cfg := synth.Config{Scenario: synth.ScenarioMix, Packets: tc.packets, QPs: 16, MTU: tc.mtu, MsgSize: 65536, MixOp: "write"}
			plain := generate(b, cfg)
			cfg.SnifferSrcPort = true
			rewritten := generate(b, cfg)
			b.SetBytes(plain.bytes + rewritten.bytes)
			b.ReportAllocs()
			var tPlain, tRewritten time.Duration
			odd := false
			for b.Loop() {
				if odd = !odd; odd {
					tPlain += plain.feedAll()
					tRewritten += rewritten.feedAll()
				} else {
					tRewritten += rewritten.feedAll()
					tPlain += plain.feedAll()
				}
			}
			n := float64(len(plain.ends) * b.N)
			b.ReportMetric(float64(tPlain.Nanoseconds())/n, "plain-ns/pkt")
			b.ReportMetric(float64(tRewritten.Nanoseconds())/n, "rewritten-ns/pkt")
			b.ReportMetric(100*(tRewritten.Seconds()/tPlain.Seconds()-1), "overhead-%")
		})
	}
}

// feedAll feeds the whole capture to a new analyzer and returns the time
// it took.
func (fs *frameSet) feedAll() time.Duration {
	start := time.Now()
	a := analyze.New(analyze.Options{})
	prev := 0
	for i, end := range fs.ends {
		a.Feed(fs.cis[i], fs.lt, fs.buf[prev:end])
		prev = end
	}
	return time.Since(start)
}
