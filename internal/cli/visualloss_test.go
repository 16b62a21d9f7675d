package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// rocesynth writes a capture with roce-synth's command line (the
// scenario and its flags; -o is added) into dir and returns its path.
func rocesynth(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	var so, se bytes.Buffer
	require.Equal(t, 0, synth.Run(append(args, "-o", out, "--no-truth"), &so, &se), se.String())
	return out
}

// lossJSON is what -o json says of a capture's missing PSNs: per class
// the PSNs still missing (flows' missing_lost, missing_not_captured and
// the rest) and the psn_gap and capture_gap findings.
type lossJSON struct {
	lost, notCaptured, unknown uint64
	gapErrors, gapWarnings     int // psn_gap findings: lost, fate unknown
	captureGaps                int
}

func reportLoss(t *testing.T, args ...string) lossJSON {
	t.Helper()
	code, out, errs := run(t, nil, append([]string{"-o", "json"}, args...)...)
	require.Equal(t, 0, code, errs)
	var rep struct {
		Flows []struct {
			Requests struct {
				Missing            uint64 `json:"missing"`
				MissingLost        uint64 `json:"missing_lost"`
				MissingNotCaptured uint64 `json:"missing_not_captured"`
			} `json:"requests"`
		} `json:"flows"`
		Findings []struct {
			Kind     string `json:"kind"`
			Severity string `json:"severity"`
		} `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	var l lossJSON
	for _, f := range rep.Flows {
		r := f.Requests
		l.lost, l.notCaptured, l.unknown = l.lost+r.MissingLost, l.notCaptured+r.MissingNotCaptured, l.unknown+r.Missing-r.MissingLost-r.MissingNotCaptured
	}
	for _, f := range rep.Findings {
		switch {
		case f.Kind == "psn_gap" && f.Severity == "error":
			l.gapErrors++
		case f.Kind == "psn_gap":
			l.gapWarnings++
		case f.Kind == "capture_gap":
			l.captureGaps++
		}
	}
	return l
}

// plotLegend returns the legend entries of the marks of an SVG plot that
// speak of PSNs, by their name before the colon.
func plotLegend(t *testing.T, svg string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`>(PSNs [^<:]*): ([^<]*)<`).FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = m[2]
	}
	return out
}

// countWord writes "1 gap", "3 gaps".
func countWord(n uint64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// TestPlotLossClasses: the plot's marks of PSNs the capture did not see
// say what the report's JSON says of the same capture: PSNs the tap
// missed are "not captured" (grey), never "lost", and add up to the
// flows' missing_not_captured; PSNs NAKed before a tap at the responder
// are "lost in the network", one mark per psn_gap error; PSNs no
// response covers (UD) are of unknown fate, one per psn_gap warning. A
// --severity filter leaves out the marks of the findings it drops.
func TestPlotLossClasses(t *testing.T) {
	dir := t.TempDir()
	drops := make([]string, 0, 40)
	for k := 10; k < 290; k += 7 {
		drops = append(drops, fmt.Sprintf("+%d", k))
	}
	for _, tc := range []struct {
		name    string
		synth   []string
		flags   []string
		lost    bool // marks of each class expected
		nc, unk bool
	}{
		{"tap drops, RoCE v1", []string{"write-bw", "--encap", "rocev1", "--messages", "100", "--drop", strings.Join(drops, ",")}, nil, false, true, false},
		{"tap drops, --severity warning", []string{"write-bw", "--encap", "rocev1", "--messages", "100", "--drop", strings.Join(drops, ",")}, []string{"--severity", "warning"}, false, false, false},
		{"NAKs before a responder tap and drops", []string{"write-bw", "--messages", "60", "--tap", "responder", "--nak", "+30,+100", "--drop", "+10,+11,+12,+50,+150,+233"}, nil, true, true, false},
		{"UD drops", []string{"ud", "--messages", "40", "--drop", "+4,+20"}, nil, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			capPath := rocesynth(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".pcap", tc.synth...)
			svg := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".svg")
			code, _, errs := run(t, nil, append(append([]string{"--plot", svg}, tc.flags...), capPath)...)
			require.Equal(t, 0, code, errs)
			want := reportLoss(t, append(tc.flags, capPath)...)
			leg := plotLegend(t, svg)
			t.Logf("legend %v; JSON %+v", leg, want)
			if tc.nc {
				require.Contains(t, leg, "PSNs not captured")
				assert.Regexp(t, `^\d+ gaps?, `+countWord(want.notCaptured, "PSN")+`$`, leg["PSNs not captured"], "the PSNs the JSON counts as not captured")
			} else {
				assert.NotContains(t, leg, "PSNs not captured")
			}
			if tc.lost {
				require.Contains(t, leg, "PSNs lost in the network")
				assert.True(t, strings.HasPrefix(leg["PSNs lost in the network"], countWord(uint64(want.gapErrors), "gap")+", "), "one mark per psn_gap error")
			} else {
				assert.NotContains(t, leg, "PSNs lost in the network", "no PSN lost in the network: the JSON has no psn_gap error")
				assert.Zero(t, want.gapErrors)
			}
			if tc.unk {
				require.Contains(t, leg, "PSNs missing, fate unknown")
				assert.True(t, strings.HasPrefix(leg["PSNs missing, fate unknown"], countWord(uint64(want.gapWarnings), "gap")+", "), "one mark per psn_gap warning")
			} else {
				assert.NotContains(t, leg, "PSNs missing, fate unknown")
			}
		})
	}
}

// TestMissingColour: the text report's MISSING count is red only when the
// JSON counts PSNs lost in the network (missing_lost); PSNs the capture
// missed or of unknown fate are yellow, as the summary line that says
// "not network loss" is.
func TestMissingColour(t *testing.T) {
	dir := t.TempDir()
	const red, yellow = "\x1b[31;1m", "\x1b[33m"
	for _, tc := range []struct {
		name  string
		synth []string
		want  string
	}{
		{"tap drops", []string{"write-bw", "--encap", "rocev1", "--messages", "20", "--drop", "+3,+9,+10"}, yellow},
		{"UD drops", []string{"ud", "--messages", "20", "--drop", "+4"}, yellow},
		{"NAKed and never resent", []string{"write-bw", "--messages", "20", "--tap", "responder", "--nak", "+7", "--gbn-skip", "1"}, red},
	} {
		t.Run(tc.name, func(t *testing.T) {
			capPath := rocesynth(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".pcap", tc.synth...)
			want := reportLoss(t, capPath)
			require.Equal(t, tc.want == red, want.lost > 0, "the JSON's missing_lost: %+v", want)
			code, out, errs := run(t, nil, "--color=always", capPath)
			require.Equal(t, 0, code, errs)
			missing := want.lost + want.notCaptured + want.unknown
			require.NotZero(t, missing)
			// The flow row's MISSING cell: the count, coloured, between
			// the MTU cell and the next counter.
			cellRE := `\x1b\[[0-9;]+m\d+\x1b\[[0-9;]*m`
			m := regexp.MustCompile(`(\x1b\[[0-9;]+m)` + fmt.Sprint(missing) + `\x1b\[[0-9;]*m` + strings.Repeat(`  +`+cellRE, 5) + `\n`).FindStringSubmatch(out)
			require.NotNil(t, m, out)
			assert.Equal(t, tc.want, m[1])
		})
	}
}
