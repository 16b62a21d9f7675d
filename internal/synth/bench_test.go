package synth

import (
	"io"
	"testing"
)

type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) { w.n += int64(len(p)); return len(p), nil }

// BenchmarkMix measures the mix scenario: 100,000 frames of 16 QPs per
// iteration, written to a discarding writer.
func BenchmarkMix(b *testing.B) {
	const packets = 100_000
	cfg := Config{Scenario: ScenarioMix, Packets: packets, QPs: 16}
	var w countWriter
	if _, err := Generate(cfg, &w, nil); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(w.n)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Generate(cfg, io.Discard, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*packets), "ns/frame")
}
