package report_test

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/analyzetest"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/report"
)

// TestStreamedJSONIsTheReport: the streamed JSON of every capture in
// testdata is, byte for byte, what encoding/json's MarshalIndent makes
// of the whole analyze.Report (WriteJSON encodes with internal/jsonindent).
func TestStreamedJSONIsTheReport(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.pcap*")
	require.NoError(t, err)
	files = slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, ".json") })
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			assertEncodingJSON(t, reportOf(t, file))
		})
	}
}

// FuzzJSONLikeEncodingJSON: whatever the strings (file names, details:
// invalid UTF-8, HTML, U+2028) and figures in a report, WriteJSON writes
// what encoding/json writes, and fails where it fails.
func FuzzJSONLikeEncodingJSON(f *testing.F) {
	f.Add("a<b>&c", "frame 1 of x.pcap", 905793896.5059708, uint64(1))
	f.Add("\xff\xfe", "line\u2028sep\u2029\t\x01", 1e-7, uint64(1<<63))
	f.Add("µs", "\"q\\", 1e21, uint64(0))
	base := reportOf(f, "../testdata/mix_small.pcap")
	f.Fuzz(func(t *testing.T, file, detail string, figure float64, n uint64) {
		rep := *base
		rep.Findings = append([]analyze.Finding(nil), base.Findings...)
		rep.Findings = append(rep.Findings, analyze.Finding{Frame: n, Kind: analyze.KindMalformed, Detail: detail, File: file})
		rep.Flows = append([]analyze.Flow(nil), base.Flows...)
		rep.Flows[0].Src, rep.Flows[0].ThroughputBps = detail, &figure
		rep.Capture.MalformedFrames = []analyze.Malformed{{Frame: n, Reason: detail, File: file}}
		assertEncodingJSON(t, &rep)
	})
}

// reportOf is the report of a capture file.
func reportOf(tb testing.TB, file string) *analyze.Report {
	return analyzetest.Report(tb, file, analyze.Options{})
}

// assertEncodingJSON asserts that WriteJSON writes rep as encoding/json's
// MarshalIndent does, and fails where it fails.
func assertEncodingJSON(t *testing.T, rep *analyze.Report) {
	t.Helper()
	var streamed bytes.Buffer
	err := report.WriteJSON(&streamed, rep)
	whole, werr := json.MarshalIndent(rep, "", "  ")
	if werr != nil {
		require.Error(t, err, "encoding/json fails: %v", werr)
		return
	}
	require.NoError(t, err)
	require.Equal(t, string(whole)+"\n", streamed.String())
}

// BenchmarkWriteJSON writes the report of a capture of many flows (mix,
// 512 QPs) as -o json does for a whole report (Merge, capture points).
func BenchmarkWriteJSON(b *testing.B) {
	rep := mixReport(b, 512)
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, report.WriteJSON(io.Discard, rep))
	}
	b.ReportMetric(float64(len(rep.Flows)), "flows")
}

// mixReport is the report of a roce-synth mix of 100,000 packets over qps
// QPs (seed 3).
func mixReport(b *testing.B, qps int) *analyze.Report {
	var buf bytes.Buffer
	_, err := synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 100_000, QPs: qps, Seed: 3}, &buf, nil)
	require.NoError(b, err)
	return analyzetest.ReportOf(b, &buf, analyze.Options{})
}
