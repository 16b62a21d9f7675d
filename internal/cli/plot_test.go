package cli

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"gonum.org/v1/plot/plotter"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestSeriesPointsPause: the report lists non-empty intervals only; the
// plot must show the empty ones between them as zero throughput, not join
// the two sides of a pause with a line.
func TestSeriesPointsPause(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	f := &analyze.Flow{IntervalSeconds: 0.001, Series: []analyze.Sample{
		{Start: ms(0), PayloadBytes: 125_000},  // 1 Gb/s
		{Start: ms(1), PayloadBytes: 250_000},  // 2 Gb/s, next interval: no gap
		{Start: ms(3), PayloadBytes: 125_000},  // one empty interval (2 ms)
		{Start: ms(10), PayloadBytes: 125_000}, // six empty intervals (4–9 ms)
	}}
	assert.InDeltaSlice(t, []float64{0, 0.001, 0.002, 0.003, 0.004, 0.009, 0.010}, xs(seriesPoints(f, t0)), 1e-12)
	assert.InDeltaSlice(t, []float64{1, 2, 0, 1, 0, 0, 1}, ys(seriesPoints(f, t0)), 1e-12)
}

func xs(p plotter.XYs) []float64 {
	var v []float64
	for _, q := range p {
		v = append(v, q.X)
	}
	return v
}

func ys(p plotter.XYs) []float64 {
	var v []float64
	for _, q := range p {
		v = append(v, q.Y)
	}
	return v
}
