package analyze_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestFinishIsReport checks that Finish, which frees the flow table while
// it builds the report, gives the report Report gives, on every testdata
// capture, with a flow table cap that drops flows on some of them.
func TestFinishIsReport(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.pcap")
	require.NoError(t, err)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			frames, cis, lt, err := loadFrames(file)
			require.NoError(t, err)
			opts := analyze.Options{MaxFlows: 3}
			a, b := analyze.New(opts), analyze.New(opts)
			for i, fr := range frames {
				a.Feed(cis[i], lt, fr)
				b.Feed(cis[i], lt, fr)
			}
			want, err := json.Marshal(a.Report())
			require.NoError(t, err)
			got, err := json.Marshal(b.Finish())
			require.NoError(t, err)
			require.JSONEq(t, string(want), string(got))
		})
	}
}
