package cli_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFindingFlowPastesIntoFlow: the flow a finding names, pasted as it
// is into --flow, selects that flow and its findings (RoCE v2 addresses,
// native IB LIDs, the report's own names as the oracle).
func TestFindingFlowPastesIntoFlow(t *testing.T) {
	type rep struct {
		Flows []struct {
			Src    string `json:"src"`
			Dst    string `json:"dst"`
			DestQP uint32 `json:"dest_qp"`
		} `json:"flows"`
		Findings []struct {
			Flow string `json:"flow"`
		} `json:"findings"`
	}
	for _, file := range []string{"../../testdata/loss_nak_gobackn.pcap", "../../testdata/ecn_cnp.pcap", "../../testdata/erf.pcap", "../../testdata/rnr_corrupt_icrc.pcap"} {
		t.Run(file, func(t *testing.T) {
			code, out, errs := run(t, nil, "-o", "json", file)
			require.Equal(t, 0, code, errs)
			var all rep
			require.NoError(t, json.Unmarshal([]byte(out), &all))
			flows := map[string]bool{}
			for _, f := range all.Findings {
				if f.Flow != "" {
					flows[f.Flow] = true
				}
			}
			for _, f := range all.Flows {
				flows[fmt.Sprintf("%s → %s QP 0x%06x", f.Src, f.Dst, f.DestQP)] = true
			}
			for name := range flows {
				code, out, errs := run(t, nil, "-o", "json", "--flow", name, file)
				require.Equal(t, 0, code, errs)
				var one rep
				require.NoError(t, json.Unmarshal([]byte(out), &one))
				require.Len(t, one.Flows, 1, name)
				got := fmt.Sprintf("%s → %s QP 0x%06x", one.Flows[0].Src, one.Flows[0].Dst, one.Flows[0].DestQP)
				assert.Equal(t, name, got)
				for _, f := range one.Findings {
					assert.Equal(t, name, f.Flow)
				}
			}
		})
	}
	code, _, errs := run(t, nil, "--flow", "10.0.0.1 → 10.0.0.2", "../../testdata/ecn_cnp.pcap")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, `want SRC,DST,QP or "SRC → DST QP N" as findings name flows`)
	code, _, _ = run(t, nil, "-o", "json", "--flow", "10.0.0.1->10.0.0.2 QP 0x5669", "../../testdata/ecn_cnp.pcap")
	assert.Equal(t, 0, code, "ASCII arrow")
}
