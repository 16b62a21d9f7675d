package analyze_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/capture"
)

// analyzeCapture runs the analyzer over any capture the reader takes.
func analyzeCapture(t *testing.T, path string, opts analyze.Options) *analyze.Report {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	a := analyze.New(opts)
	for {
		ci, data, lt, err := r.Next()
		if err != nil {
			break
		}
		a.Feed(ci, lt, data)
	}
	return a.Report()
}

// toMap turns a value into its generic JSON form.
func toMap(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// subset reports every difference between the values the truth states
// and the report's values at the same keys.
func subset(path string, want, got any) []string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return []string{fmt.Sprintf("%s: want an object, got %v", path, got)}
		}
		var diffs []string
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing from the report", path, k))
				continue
			}
			diffs = append(diffs, subset(path+"."+k, wv, gv)...)
		}
		return diffs
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
		}
		var diffs []string
		for i := range w {
			diffs = append(diffs, subset(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return diffs
	default:
		if fmt.Sprint(want) != fmt.Sprint(got) {
			return []string{fmt.Sprintf("%s: want %v, got %v", path, want, got)}
		}
	}
	return nil
}

// TestGeneratedCapturesMatchTruth runs the analyzer over every capture in
// testdata/ that roce-synth wrote and compares each field its truth file
// states.
func TestGeneratedCapturesMatchTruth(t *testing.T) {
	truths, err := filepath.Glob("../testdata/*.truth.json")
	require.NoError(t, err)
	require.NotEmpty(t, truths, "testdata/ holds the generated captures")
	for _, truthFile := range truths {
		capFile := strings.TrimSuffix(truthFile, ".truth.json")
		t.Run(filepath.Base(capFile), func(t *testing.T) {
			raw, err := os.ReadFile(truthFile)
			require.NoError(t, err)
			var truth map[string]any
			require.NoError(t, json.Unmarshal(raw, &truth))
			rep := toMap(t, analyzeCapture(t, capFile, analyze.Options{})).(map[string]any)
			var diffs []string
			capt := rep["capture"].(map[string]any)
			for _, k := range []string{"frames", "roce_packets"} {
				if v, ok := truth[k]; ok {
					diffs = append(diffs, subset(k, v, capt[k])...)
				}
			}
			flows := rep["flows"].([]any)
			tflows, _ := truth["flows"].([]any)
			assert.Len(t, flows, len(tflows), "number of flows")
			for _, tf := range tflows {
				tfm := tf.(map[string]any)
				key := fmt.Sprintf("%v→%v/%v", tfm["src"], tfm["dst"], tfm["dest_qp"])
				var found any
				for _, f := range flows {
					fm := f.(map[string]any)
					if fmt.Sprintf("%v→%v/%v", fm["src"], fm["dst"], fm["dest_qp"]) == key {
						found = fm
					}
				}
				if found == nil {
					diffs = append(diffs, "flow "+key+": not in the report")
					continue
				}
				diffs = append(diffs, subset("flow "+key, tfm, found)...)
			}
			conns := rep["connections"].([]any)
			tconns, _ := truth["connections"].([]any)
			assert.Len(t, conns, len(tconns), "number of connections")
			for i, tc := range tconns {
				if i < len(conns) {
					diffs = append(diffs, subset(fmt.Sprintf("connections[%d]", i), tc, conns[i])...)
				}
			}
			assert.Empty(t, diffs, "report differs from the truth:\n%s", strings.Join(diffs, "\n"))
		})
	}
}
