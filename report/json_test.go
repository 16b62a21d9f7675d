package report_test

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/report"
)

// TestStreamedJSONIsTheReport: the streamed JSON decodes to exactly what
// encoding/json makes of the whole analyze.Report.
func TestStreamedJSONIsTheReport(t *testing.T) {
	for _, file := range []string{"../testdata/loss_nak_gobackn.pcap", "../testdata/mix_small.pcap", "../testdata/rnr_corrupt_icrc.pcap"} {
		r, err := capture.Open(file)
		require.NoError(t, err)
		a := analyze.New(analyze.Options{})
		for {
			ci, data, lt, err := r.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			a.Feed(ci, lt, data)
		}
		r.Close()
		rep := a.Report()
		var streamed bytes.Buffer
		require.NoError(t, report.WriteJSON(&streamed, rep))
		whole, err := json.Marshal(rep)
		require.NoError(t, err)
		var got, want any
		require.NoError(t, json.Unmarshal(streamed.Bytes(), &got), streamed.String())
		require.NoError(t, json.Unmarshal(whole, &want))
		assert.Equal(t, want, got, file)
		var indented bytes.Buffer
		require.NoError(t, json.Indent(&indented, whole, "", "  "))
		assert.Equal(t, indented.String()+"\n", streamed.String(), "the same text as json.MarshalIndent")
	}
}

// BenchmarkWriteJSON writes the report of a capture of many flows (mix,
// 512 QPs) as -o json does for a whole report (Merge, capture points).
func BenchmarkWriteJSON(b *testing.B) {
	var buf bytes.Buffer
	_, err := synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 100_000, QPs: 512, Seed: 3}, &buf, nil)
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
	b.ReportAllocs()
	for b.Loop() {
		require.NoError(b, report.WriteJSON(io.Discard, rep))
	}
	b.ReportMetric(float64(len(rep.Flows)), "flows")
}
