package cli_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestTextTopFlows: beyond 50 flows the text report lists the 50 with the
// most payload and every flow with a problem, and says how many it left
// out; --all-flows lists them all. The expected rows come from the JSON
// report of the same capture.
func TestTextTopFlows(t *testing.T) {
	file := filepath.Join(t.TempDir(), "mix.pcap")
	f, err := os.Create(file)
	require.NoError(t, err)
	_, err = synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 4000, QPs: 40}, f, nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	code, out, errs := run(t, nil, "-o", "json", file)
	require.Equal(t, 0, code, errs)
	var rep struct {
		Flows []struct {
			Src, Dst     string
			DestQP       uint32 `json:"dest_qp"`
			PayloadBytes uint64 `json:"payload_bytes"`
			Requests     struct{ Missing, Retransmitted, Duplicates uint64 }
			Responses    struct {
				NAKs    uint64 `json:"naks"`
				RNRNAKs uint64 `json:"rnr_naks"`
			}
			Congestion struct {
				CNPs  uint64 `json:"cnps"`
				ECNCE uint64 `json:"ecn_ce"`
			}
			ICRC struct{ Bad uint64 } `json:"icrc"`
			MTU  struct {
				AboveNegotiated uint64 `json:"above_negotiated"`
			} `json:"mtu"`
			Messages struct{ Incomplete uint64 }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Greater(t, len(rep.Flows), 50)
	order := make([]int, len(rep.Flows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rep.Flows[b].PayloadBytes, rep.Flows[a].PayloadBytes) })
	want := map[string]bool{}
	for rank, i := range order {
		fl := rep.Flows[i]
		problem := fl.Requests.Missing+fl.Requests.Retransmitted+fl.Requests.Duplicates+fl.Responses.NAKs+fl.Responses.RNRNAKs+
			fl.Congestion.CNPs+fl.Congestion.ECNCE+fl.ICRC.Bad+fl.MTU.AboveNegotiated+fl.Messages.Incomplete > 0
		if rank < 50 || problem {
			want[fmt.Sprintf("%s → %s 0x%06x", fl.Src, fl.Dst, fl.DestQP)] = true
		}
	}

	rowRE := regexp.MustCompile(`(?m)^  (\S+ → \S+)\s+(0x[0-9a-f]{6})  `)
	rows := func(text string) map[string]bool {
		table := text[strings.Index(text, "\nFlows\n"):]
		table = table[:strings.Index(table[1:], "\n\n")+1]
		got := map[string]bool{}
		for _, m := range rowRE.FindAllStringSubmatch(table, -1) {
			got[m[1]+" "+m[2]] = true
		}
		return got
	}
	code, out, errs = run(t, nil, "--color=never", file)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, want, rows(out))
	assert.Contains(t, out, fmt.Sprintf("  … and %d more flows not listed (--all-flows lists them)\n", len(rep.Flows)-len(want)))

	code, out, errs = run(t, nil, "--color=never", "--all-flows", file)
	require.Equal(t, 0, code, errs)
	assert.Len(t, rows(out), len(rep.Flows))
	assert.NotContains(t, out, "more flows not listed")
}
