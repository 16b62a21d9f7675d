package analyze_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestMergeRefusesReportsReadFromJSON: the halves of loss_nak_gobackn.pcap
// merge into the whole capture's counts as the Analyzers return them; read
// back from JSON they have lost the state Merge needs (merged, they gave
// missing 0 instead of 1, retransmitted 1 instead of 3, incomplete 3
// instead of 1), and Merge refuses them, changing nothing.
func TestMergeRefusesReportsReadFromJSON(t *testing.T) {
	const path = "../testdata/loss_nak_gobackn.pcap"
	whole := analyzeFile(t, path, analyze.Options{}, 0, 0)
	rc := findFlow(t, whole, "10.0.0.1", "10.0.0.2", 0x5669)
	// The generator's truth for this flow (testdata/loss_nak_gobackn.pcap.truth.json).
	require.Equal(t, uint64(1), rc.Requests.Missing)
	require.Equal(t, uint64(3), rc.Requests.Retransmitted)
	require.Equal(t, uint64(1), rc.Messages.Incomplete)
	half := whole.Capture.Frames/2 + 1

	first := analyzeFile(t, path, analyze.Options{}, 0, half)
	second := analyzeFile(t, path, analyze.Options{}, half, 0)
	require.NoError(t, first.Merge(second))
	got := findFlow(t, first, "10.0.0.1", "10.0.0.2", 0x5669)
	assert.Equal(t, rc.Requests.Missing, got.Requests.Missing)
	assert.Equal(t, rc.Requests.Retransmitted, got.Requests.Retransmitted)
	assert.Equal(t, rc.Messages.Incomplete, got.Messages.Incomplete)

	viaJSON := func(r *analyze.Report) *analyze.Report {
		b, err := json.Marshal(r)
		require.NoError(t, err)
		var out analyze.Report
		require.NoError(t, json.Unmarshal(b, &out))
		return &out
	}
	tests := []struct {
		name        string
		into, other func() *analyze.Report
	}{
		{"second half from JSON", func() *analyze.Report { return analyzeFile(t, path, analyze.Options{}, 0, half) }, func() *analyze.Report { return viaJSON(analyzeFile(t, path, analyze.Options{}, half, 0)) }},
		{"first half from JSON", func() *analyze.Report { return viaJSON(analyzeFile(t, path, analyze.Options{}, 0, half)) }, func() *analyze.Report { return analyzeFile(t, path, analyze.Options{}, half, 0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			into, other := tt.into(), tt.other()
			before, err := json.Marshal(into)
			require.NoError(t, err)
			assert.ErrorIs(t, into.Merge(other), analyze.ErrNotMergeable)
			after, err := json.Marshal(into)
			require.NoError(t, err)
			assert.JSONEq(t, string(before), string(after), "a refused Merge changes nothing")
		})
	}
	// An empty Report takes Analyzer reports one after the other.
	var empty analyze.Report
	require.NoError(t, empty.Merge(analyzeFile(t, path, analyze.Options{}, 0, half)))
	require.NoError(t, empty.Merge(analyzeFile(t, path, analyze.Options{}, half, 0)))
	assert.Equal(t, rc.Requests.Missing, findFlow(t, &empty, "10.0.0.1", "10.0.0.2", 0x5669).Requests.Missing)
}

// TestNoMerge: an Analyzer with Options.NoMerge reports every testdata
// capture as one without it does, to the byte in JSON, and its report is
// refused by Merge (it kept no head log), in either place.
func TestNoMerge(t *testing.T) {
	paths, err := filepath.Glob("../testdata/*.pcap") // analyzeFile reads pcap
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want, err := json.Marshal(analyzeFile(t, path, analyze.Options{}, 0, 0))
			require.NoError(t, err)
			lean := analyzeFile(t, path, analyze.Options{NoMerge: true}, 0, 0)
			got, err := json.Marshal(lean)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
			if lean.Capture.Frames == 0 {
				return
			}
			assert.ErrorIs(t, lean.Merge(analyzeFile(t, path, analyze.Options{}, 0, 0)), analyze.ErrNotMergeable)
			assert.ErrorIs(t, analyzeFile(t, path, analyze.Options{}, 0, 0).Merge(lean), analyze.ErrNotMergeable)
		})
	}
}
