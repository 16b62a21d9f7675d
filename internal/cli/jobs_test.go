package cli_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJobsSameCounters: the JSON report of a file cut into ranges (-j 2,
// 3, 7) has the sequential report's (-j 1) capture totals, flows in the
// same order, and per flow the counters that Report.Merge carries exactly
// across a seam (docs/parallel.md lists what it does not yet).
func TestJobsSameCounters(t *testing.T) {
	caps, err := filepath.Glob("../../testdata/*.pcap*")
	require.NoError(t, err)
	real, _ := filepath.Glob(filepath.Join(shared, "softroce/*.pcap"))
	for _, file := range append(caps, real...) {
		if strings.HasSuffix(file, ".json") {
			continue
		}
		code, seq, errs := run(t, nil, "-o", "json", "-j", "1", file)
		require.Equal(t, 0, code, errs)
		var want map[string]any
		require.NoError(t, json.Unmarshal([]byte(seq), &want))
		for _, jobs := range []string{"2", "3", "7"} {
			t.Run(filepath.Base(file)+"/j"+jobs, func(t *testing.T) {
				code, par, errs := run(t, nil, "-o", "json", "-j", jobs, file)
				require.Equal(t, 0, code, errs)
				var got map[string]any
				require.NoError(t, json.Unmarshal([]byte(par), &got))
				wc, gc := want["capture"].(map[string]any), got["capture"].(map[string]any)
				for k := range wc {
					if k != "not_captured" { // from the flows' missing_not_captured: see docs/parallel.md
						assert.Equal(t, wc[k], gc[k], "capture.%s", k)
					}
				}
				assert.Equal(t, len(want["connections"].([]any)), len(got["connections"].([]any)))
				wf, gf := want["flows"].([]any), got["flows"].([]any)
				require.Equal(t, len(wf), len(gf))
				for i := range wf {
					w, g := wf[i].(map[string]any), gf[i].(map[string]any)
					label := fmt.Sprintf("%v → %v QP %v", w["src"], w["dst"], w["dest_qp"])
					for _, k := range []string{"src", "dst", "dest_qp", "transport", "packets", "wire_bytes", "payload_bytes", "first_time", "last_time", "throughput_bps", "congestion", "icrc", "series", "interval_seconds"} {
						assert.Equal(t, w[k], g[k], "%s: %s", label, k)
					}
					for _, k := range []string{"packets", "psn_first", "psn_last"} {
						assert.Equal(t, get(w, "requests", k), get(g, "requests", k), "%s: requests.%s", label, k)
					}
					for _, k := range []string{"packets", "acks", "naks", "nak_codes", "rnr_naks", "read_responses", "atomic_acks"} {
						assert.Equal(t, get(w, "responses", k), get(g, "responses", k), "%s: responses.%s", label, k)
					}
				}
			})
		}
	}
}
