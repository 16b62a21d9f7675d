package report_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/report"
)

// BenchmarkWriteText writes the text report of a mix of 4,096 QPs (100,000
// packets): its table of 4,096 connections and its flows, as the command
// writes a report of many connections (BenchmarkSpeed's 65,536 QPs write
// 24 MB of text).
func BenchmarkWriteText(b *testing.B) {
	var buf bytes.Buffer
	_, err := synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 100_000, QPs: 4096, Seed: 3}, &buf, nil)
	require.NoError(b, err)
	r, err := capture.NewReader(&buf)
	require.NoError(b, err)
	a := analyze.New(analyze.Options{})
	for {
		ci, data, lt, err := r.Next()
		if err != nil {
			break
		}
		a.Feed(ci, lt, data)
	}
	rep := a.Finish()
	var out bytes.Buffer
	require.NoError(b, report.WriteText(&out, rep, report.TextOptions{}))
	b.SetBytes(int64(out.Len()))
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, report.WriteText(io.Discard, rep, report.TextOptions{}))
	}
	b.ReportMetric(float64(len(rep.Connections)), "connections")
}
