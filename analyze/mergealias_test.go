package analyze_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestMergeLeavesPartsUnchanged: merging reports into another leaves the
// reports merged unchanged, so that merging the same ones again gives the
// same report (the command merges several files' reports, then merges
// them again for capture points). Merge used to adopt a flow's NIC object,
// NAK-code map and RTT histogram and then add the next parts into them,
// changing the first part's figures.
func TestMergeLeavesPartsUnchanged(t *testing.T) {
	for _, path := range []string{"../testdata/loss_nak_gobackn.pcap", "../testdata/ecn_cnp.pcap", "../testdata/dup_reorder.pcap", "../testdata/read_bw.pcap", "../testdata/rnr_corrupt_icrc.pcap"} {
		t.Run(path, func(t *testing.T) {
			whole := analyzeFile(t, path, analyze.Options{}, 0, 0)
			half := whole.Capture.Frames/2 + 1
			parts := func() []*analyze.Report {
				return []*analyze.Report{
					analyzeFile(t, path, analyze.Options{}, 0, half),
					analyzeFile(t, path, analyze.Options{}, half, 0),
					analyzeFile(t, path, analyze.Options{}, 0, 0),
				}
			}
			merge := func(ps []*analyze.Report) []byte {
				m := &analyze.Report{Connections: []analyze.Connection{}, Flows: []analyze.Flow{}, Findings: []analyze.Finding{}}
				for _, p := range ps {
					require.NoError(t, m.Merge(p))
				}
				b, err := json.Marshal(m)
				require.NoError(t, err)
				return b
			}
			ps := parts()
			var before [][]byte
			for _, p := range ps {
				b, err := json.Marshal(p)
				require.NoError(t, err)
				before = append(before, b)
			}
			first := merge(ps)
			for i, p := range ps {
				after, err := json.Marshal(p)
				require.NoError(t, err)
				assert.JSONEq(t, string(before[i]), string(after), "part %d changed by the merge", i)
			}
			assert.JSONEq(t, string(first), string(merge(ps)), "the same parts merged again")
			assert.JSONEq(t, string(first), string(merge(parts())), "fresh parts")
		})
	}
}
