package analyze_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestGapLosses: the split of each gap and each jump adds up to what the
// generator's truth says of the flow (missing_lost, missing_not_captured)
// and lands on the frames of the truth's psn_gap and capture_gap
// findings: a view that colours gaps by it says what the report says.
func TestGapLosses(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"tap drops", []string{"write-bw", "--messages", "30", "--drop", "+3,+9,+10,+40"}},
		{"tap drops, RoCE v1", []string{"write-bw", "--encap", "rocev1", "--messages", "30", "--drop", "+3,+17"}},
		{"drops after the last ACK", []string{"write-bw", "--messages", "8", "--drop", "+5,+31"}},
		{"lost before a responder tap", []string{"write-bw", "--messages", "20", "--tap", "responder", "--nak", "+7,+30"}},
		{"both", []string{"write-bw", "--messages", "20", "--tap", "responder", "--nak", "+7", "--drop", "+12"}},
		{"UD: no ACK", []string{"ud", "--messages", "20", "--drop", "+4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _, _, err := synth.ParseArgs(tc.args)
			require.NoError(t, err)
			capBytes, truthBytes := generateBytes(t, cfg)
			var truth synth.Truth
			require.NoError(t, json.Unmarshal(truthBytes, &truth))
			rep := feedAll(t, capBytes, nil)
			type frameSev struct {
				frame int
				sev   string
			}
			want := map[frameSev]bool{}
			for _, f := range truth.Findings {
				if f.Kind == string(analyze.KindPSNGap) || f.Kind == string(analyze.KindCaptureGap) {
					want[frameSev{f.Frame, f.Kind + "/" + f.Severity}] = true
				}
			}
			got := map[frameSev]bool{}
			var missing, seen int
			for i := range rep.Flows {
				f := &rep.Flows[i]
				var tf *synth.Flow
				for _, x := range truth.Flows {
					if x.Src == f.Src && x.Dst == f.Dst && x.DestQP == f.DestQP {
						tf = x
					}
				}
				require.NotNil(t, tf, f.Name())
				var lost, nc, unk uint64
				gl := f.Requests.GapLosses()
				require.Len(t, gl, len(f.Requests.Gaps))
				for k, g := range gl {
					assert.Equal(t, uint64(f.Requests.Gaps[k].Count), g.Lost+g.NotCaptured+g.Unknown, "gap %d: every PSN in one class", k)
					lost, nc, unk = lost+g.Lost, nc+g.NotCaptured, unk+g.Unknown
				}
				assert.Equal(t, tf.Requests.MissingLost, int64(lost), "%s: lost", f.Name())
				assert.Equal(t, tf.Requests.MissingNotCaptured, int64(nc), "%s: not captured", f.Name())
				assert.Equal(t, tf.Requests.Missing-tf.Requests.MissingLost-tf.Requests.MissingNotCaptured, int64(unk), "%s: unknown", f.Name())
				missing += int(tf.Requests.Missing)
				firstNC := true
				var jnc uint64
				for _, j := range f.Requests.Jumps() {
					seen++
					if j.Lost > 0 {
						got[frameSev{int(j.Frame), "psn_gap/error"}] = true
					}
					if j.Unknown > 0 {
						got[frameSev{int(j.Frame), "psn_gap/warning"}] = true
					}
					if j.NotCaptured > 0 && firstNC {
						got[frameSev{int(j.Frame), "capture_gap/info"}] = true
						firstNC = false
					}
					jnc += j.NotCaptured
				}
				assert.Equal(t, nc, jnc, "%s: the jumps' PSNs not captured are the gaps'", f.Name())
			}
			assert.Equal(t, want, got, "the jumps' classes are the truth's findings")
			assert.NotEmpty(t, want, "the capture has gaps to classify")
			t.Logf("%d missing PSNs, %d jumps", missing, seen)
		})
	}
}
