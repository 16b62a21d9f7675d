package analyze_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestFinishStreamIsFinish checks that the report FinishStream gives in
// parts (head, flows one at a time, findings) is Finish's report, on every
// testdata capture and on the real captures of ../shared/captures, with
// and without a flow table cap and a findings cap: the capture's totals
// the head shows before any flow is built (not_captured, flows_dropped)
// are those Finish adds up while it builds them.
func TestFinishStreamIsFinish(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.pcap")
	require.NoError(t, err)
	real, _ := filepath.Glob("../../shared/captures/*/*.pcap*")
	files = append(files, real...)
	require.NotEmpty(t, files)
	for _, file := range files {
		frames, cis, lt, err := loadFrames(file)
		if err != nil {
			continue // not a capture this loader reads (gzip, …): the CLI tests read them
		}
		for _, opts := range []analyze.Options{{}, {MaxFlows: 3, MaxFindings: 5}} {
			t.Run(filepath.Base(file), func(t *testing.T) {
				a, b := analyze.New(opts), analyze.New(opts)
				for i, fr := range frames {
					a.Feed(cis[i], lt, fr)
					b.Feed(cis[i], lt, fr)
				}
				want := a.Finish()
				s := b.FinishStream()
				head := *s.Head() // the head as a writer sees it before the flows
				require.Nil(t, head.Flows)
				require.Equal(t, len(want.Flows), s.Flows())
				var flows []analyze.Flow
				for {
					f, ok := s.Next()
					if !ok {
						break
					}
					flows = append(flows, f)
				}
				end := s.End()
				require.Empty(t, end.Flows)
				got := *end
				got.Capture = head.Capture
				got.Connections = head.Connections
				got.Flows = flows
				if got.Flows == nil {
					got.Flows = []analyze.Flow{}
				}
				wj, err := json.Marshal(want)
				require.NoError(t, err)
				gj, err := json.Marshal(&got)
				require.NoError(t, err)
				require.Equal(t, string(wj), string(gj))
			})
		}
	}
}
