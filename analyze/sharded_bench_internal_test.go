package analyze

import (
	"fmt"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// BenchmarkShardedNearCap: 200,000 CM frames of 40 host pairs (40 flows)
// on 2 shards, with --max-flows far from them (1000), a few flows above
// them (300, 43: the frames in flight bounded by the flows left), one
// above (41: the feeder analyzes every frame), and one Analyzer
// (found by the second review: near the cap a drain every few frames
// made 2 shards 2.7× as slow as one Analyzer).
func BenchmarkShardedNearCap(b *testing.B) {
	hosts := hostPairREQs(b, 40)
	const frames = 200_000
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	feed := func(f func(gopacket.CaptureInfo, []byte)) {
		for i := range frames {
			d := hosts[i%len(hosts)]
			f(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(d), Length: len(d)}, d)
		}
	}
	for _, maxFlows := range []int{1000, 300, 43, 41, 0} {
		name := fmt.Sprintf("max-flows-%d", maxFlows)
		if maxFlows == 0 {
			name = "one-analyzer"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if maxFlows == 0 {
					a := New(Options{})
					feed(func(ci gopacket.CaptureInfo, d []byte) { a.Feed(ci, gplayers.LinkTypeEthernet, d) })
					a.Finish()
					continue
				}
				s := NewSharded(Options{MaxFlows: maxFlows}, 2)
				feed(func(ci gopacket.CaptureInfo, d []byte) { s.Feed(ci, gplayers.LinkTypeEthernet, d) })
				if _, err := s.Finish(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*frames), "ns/frame")
		})
	}
}
