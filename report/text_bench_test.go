package report_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/report"
)

// BenchmarkWriteText writes the text report of a mix of 4,096 QPs (100,000
// packets): its table of 4,096 connections and its flows, as the command
// writes a report of many connections (BenchmarkSpeed's 65,536 QPs write
// 24 MB of text).
func BenchmarkWriteText(b *testing.B) {
	rep := mixReport(b, 4096)
	var out bytes.Buffer
	require.NoError(b, report.WriteText(&out, rep, report.TextOptions{}))
	b.SetBytes(int64(out.Len()))
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, report.WriteText(io.Discard, rep, report.TextOptions{}))
	}
	b.ReportMetric(float64(len(rep.Connections)), "connections")
}
