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
// Both are fed in each iteration, 512 frames at a time, in turns, so
// that the load of a shared machine weighs on both alike; the rewritten capture may cost at most
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
			for b.Loop() {
				pa, ra := analyze.New(analyze.Options{}), analyze.New(analyze.Options{})
				for from := 0; from < len(plain.ends); from += benchChunk {
					to := min(from+benchChunk, len(plain.ends))
					if from/benchChunk%2 == 0 {
						tPlain += plain.feedChunk(pa, from, to)
						tRewritten += rewritten.feedChunk(ra, from, to)
					} else {
						tRewritten += rewritten.feedChunk(ra, from, to)
						tPlain += plain.feedChunk(pa, from, to)
					}
				}
			}
			n := float64(len(plain.ends) * b.N)
			b.ReportMetric(float64(tPlain.Nanoseconds())/n, "plain-ns/pkt")
			b.ReportMetric(float64(tRewritten.Nanoseconds())/n, "rewritten-ns/pkt")
			b.ReportMetric(100*(tRewritten.Seconds()/tPlain.Seconds()-1), "overhead-%")
		})
	}
}

// benchChunk is the number of frames fed to one analyzer before the
// other takes its turn.
const benchChunk = 512

// feedChunk feeds frames [from, to) to a and returns the time it took.
func (fs *frameSet) feedChunk(a *analyze.Analyzer, from, to int) time.Duration {
	prev := 0
	if from > 0 {
		prev = fs.ends[from-1]
	}
	start := time.Now()
	for i := from; i < to; i++ {
		a.Feed(fs.cis[i], fs.lt, fs.buf[prev:fs.ends[i]])
		prev = fs.ends[i]
	}
	return time.Since(start)
}
