package analyze_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestOnMessage: Options.OnMessage is told of every message a flow's
// Messages.Count counts, once, at the frame that completed it, with the
// frame of its first packet before it (or unknown).
func TestOnMessage(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.pcap")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			got := map[analyze.FlowID]uint64{}
			var last uint64
			opts := analyze.Options{OnMessage: func(m analyze.Message) {
				id := analyze.FlowID{Src: m.Src.String(), Dst: m.Dst.String(), DestQP: m.DestQP, Tunnel: m.Tunnel.String()}
				got[id]++
				assert.LessOrEqual(t, m.First, m.Frame, "%s: the first packet is not after the last", id)
				assert.GreaterOrEqual(t, m.Frame, last, "told in frame order")
				last = m.Frame
			}}
			rep := analyzeFile(t, path, opts, 0, 0)
			want := map[analyze.FlowID]uint64{}
			for i := range rep.Flows {
				if n := rep.Flows[i].Messages.Count; n > 0 {
					want[rep.Flows[i].ID()] = n
				}
			}
			assert.Equal(t, want, got)
		})
	}
}
