package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/htmlreport"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// jsonFinding is a finding of -o json, the oracle of the text report's.
type jsonFinding struct {
	Frame    uint64 `json:"frame"`
	Kind     string `json:"kind"`
	Severity string `json:"severity"`
	Flow     string `json:"flow"`
	Detail   string `json:"detail"`
}

// reportFindings runs -o json with args and returns its findings.
func reportFindings(t *testing.T, args ...string) []jsonFinding {
	t.Helper()
	code, out, errs := run(t, nil, append([]string{"-o", "json"}, args...)...)
	require.Equal(t, 0, code, errs)
	var doc struct {
		Findings []jsonFinding `json:"findings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	return doc.Findings
}

// textFindings runs the text report with args and returns its Findings
// section: the title, then the lines under it.
func textFindings(t *testing.T, args ...string) (string, []string) {
	t.Helper()
	code, out, errs := run(t, nil, append([]string{"--color=never"}, args...)...)
	require.Equal(t, 0, code, errs)
	_, sec, ok := strings.Cut(out, "\nFindings (worst first")
	if !ok {
		return "", nil
	}
	_, sec, ok = strings.Cut(sec, "): ")
	require.True(t, ok)
	lines := strings.Split(strings.TrimSuffix(sec, "\n"), "\n")
	return lines[0], lines[1:]
}

var severityRank = map[string]int{"error": 1, "warning": 2, "info": 3}

// title is the Findings title the text report writes for these findings.
func title(fs []jsonFinding) string {
	n := map[string]int{}
	for _, f := range fs {
		n[f.Severity]++
	}
	s := func(k int, noun string) string {
		if k == 1 {
			return "1 " + noun
		}
		return fmt.Sprintf("%d %ss", k, noun)
	}
	return fmt.Sprintf("%s, %s, %d info", s(n["error"], "error"), s(n["warning"], "warning"), n["info"])
}

// group is the findings of one severity, flow and kind, as the roll-up
// lists them.
type group struct {
	sev, flow, kind string
	fs              []jsonFinding
}

// rollUp groups the JSON findings as the text report should: worst
// first (stable), by severity, flow and kind, in the order of their
// first finding.
func rollUp(fs []jsonFinding) []*group {
	fs = slices.Clone(fs)
	slices.SortStableFunc(fs, func(a, b jsonFinding) int { return severityRank[a.Severity] - severityRank[b.Severity] })
	var gs []*group
	at := map[[3]string]*group{}
	for _, f := range fs {
		k := [3]string{f.Severity, f.Flow, f.Kind}
		g := at[k]
		if g == nil {
			g = &group{sev: f.Severity, flow: f.Flow, kind: f.Kind}
			at[k] = g
			gs = append(gs, g)
		}
		g.fs = append(g.fs, f)
	}
	return gs
}

// wantRollUp is the roll-up's lines for the JSON findings.
func wantRollUp(fs []jsonFinding) []string {
	var lines []string
	flow := func(f string) string {
		if f == "" {
			return ""
		}
		return "  " + f
	}
	for _, g := range rollUp(fs) {
		sev := fmt.Sprintf("%-7s", strings.ToUpper(g.sev))
		f := g.fs[0]
		if len(g.fs) == 1 {
			lines = append(lines, fmt.Sprintf("  %s frame %d %s%s: %s", sev, f.Frame, f.Kind, flow(f.Flow), f.Detail))
			continue
		}
		lines = append(lines, fmt.Sprintf("  %s %d × %s%s: frames %d to %d", sev, len(g.fs), g.kind, flow(g.flow), f.Frame, g.fs[len(g.fs)-1].Frame))
		for _, e := range g.fs[:min(3, len(g.fs))] {
			lines = append(lines, fmt.Sprintf("    frame %d: %s", e.Frame, e.Detail))
		}
		if len(g.fs) > 3 {
			lines = append(lines, fmt.Sprintf("    … and %d more (--findings all lists them)", len(g.fs)-3))
		}
	}
	return lines
}

// stormCapture writes a 5,000-message RDMA WRITE run whose every 4th
// request packet (2,000) is ECN-CE marked and answered by a CNP: 2,000
// ecn_ce and cnp findings, and a cnp_no_slowdown for each CNP the
// generator's sender did not slow down after.
func stormCapture(t *testing.T) string {
	t.Helper()
	var ecn []synth.PSNRef
	for i := range 2000 {
		ecn = append(ecn, synth.PSNRef{Relative: true, Value: uint32(i * 4)})
	}
	path := filepath.Join(t.TempDir(), "storm.pcap")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = synth.Generate(synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 5000, MsgSize: 4096, MTU: 1024, Impairments: synth.Impairments{ECN: ecn}}, f, nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path
}

// TestFindingsRollUp: by default the text report lists each kind once
// per flow (count, first and last frame, 3 examples), --findings all
// every finding; the title counts them all, as the JSON report has them.
func TestFindingsRollUp(t *testing.T) {
	storm := stormCapture(t)
	for _, tc := range []struct {
		name, file string
		args       []string
	}{
		{"loss", "../../testdata/loss_nak_gobackn.pcap", nil},
		{"ecn", "../../testdata/ecn_cnp.pcap", nil},
		{"rnr", "../../testdata/rnr_corrupt_icrc.pcap", nil},
		{"storm", storm, nil},
		{"storm warnings", storm, []string{"--severity", "warning"}},
		{"storm one flow", storm, []string{"--qp", "0x5668"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(slices.Clone(tc.args), tc.file)
			fs := reportFindings(t, args...)
			require.NotEmpty(t, fs)

			head, lines := textFindings(t, args...)
			assert.Equal(t, title(fs), head, "the title counts every finding")
			assert.Equal(t, wantRollUp(fs), lines)

			head, lines = textFindings(t, append([]string{"--findings", "all"}, args...)...)
			assert.Equal(t, title(fs), head)
			require.Len(t, lines, len(fs), "--findings all: one line per finding of the JSON report")
			sorted := slices.Clone(fs)
			slices.SortStableFunc(sorted, func(a, b jsonFinding) int { return severityRank[a.Severity] - severityRank[b.Severity] })
			for i, f := range sorted {
				assert.Contains(t, lines[i], fmt.Sprintf(" frame %d %s  %s: %s", f.Frame, f.Kind, f.Flow, f.Detail))
				assert.True(t, strings.HasPrefix(lines[i], "  "+strings.ToUpper(f.Severity)), lines[i])
			}
		})
	}
}

// TestFindingsStormShort: a 5,000-message ECN storm's report stays under
// 200 lines by default, while its JSON report holds thousands of findings.
func TestFindingsStormShort(t *testing.T) {
	storm := stormCapture(t)
	fs := reportFindings(t, storm)
	require.Greater(t, len(fs), 4000)
	code, out, errs := run(t, nil, "--color=never", storm)
	require.Equal(t, 0, code, errs)
	assert.Less(t, strings.Count(out, "\n"), 200)
	code, out, errs = run(t, nil, "--color=never", "--findings", "all", storm)
	require.Equal(t, 0, code, errs)
	assert.Greater(t, strings.Count(out, "\n"), len(fs))
}

// TestNICViolationsOnce: a NIC conformance finding (cnp_no_slowdown, …)
// is listed once, under Findings; the NIC section gives its count.
func TestNICViolationsOnce(t *testing.T) {
	storm := stormCapture(t)
	fs := reportFindings(t, storm)
	perFlow := map[string]int{}
	for _, f := range fs {
		if f.Kind == "cnp_no_slowdown" {
			perFlow[f.Flow]++
		}
	}
	require.NotEmpty(t, perFlow, "the storm's sender does not slow down")
	code, out, errs := run(t, nil, "--color=never", "--findings", "all", storm)
	require.Equal(t, 0, code, errs)
	nic, findings, ok := strings.Cut(out, "\nFindings (worst first)")
	require.True(t, ok)
	_, nic, ok = strings.Cut(nic, "\nNIC behaviour\n")
	require.True(t, ok)
	for flow, n := range perFlow {
		assert.Contains(t, nic, flow+": capture at")
		assert.Contains(t, nic, fmt.Sprintf("violations             %d cnp_no_slowdown (under Findings)", n))
		assert.Equal(t, n, strings.Count(findings, "cnp_no_slowdown  "+flow+":"))
	}
	assert.NotRegexp(t, regexp.MustCompile(`frame \d+ cnp_no_slowdown`), nic, "no finding line in the NIC section")
}

// TestFindingFilters: --severity and --kind keep the same findings in
// the JSON report (written while built, and whole), the text report, the
// Parquet findings table and the HTML page, as the unfiltered JSON
// report filtered by hand.
func TestFindingFilters(t *testing.T) {
	storm := stormCapture(t)
	for _, tc := range []struct {
		name, file string
		args       []string
		keep       func(jsonFinding) bool
	}{
		{"errors", "../../testdata/loss_nak_gobackn.pcap", []string{"--severity", "error"}, func(f jsonFinding) bool { return f.Severity == "error" }},
		{"warnings", "../../testdata/loss_nak_gobackn.pcap", []string{"--severity", "warning"}, func(f jsonFinding) bool { return f.Severity != "info" }},
		{"info", "../../testdata/loss_nak_gobackn.pcap", []string{"--severity", "info"}, func(jsonFinding) bool { return true }},
		{"kinds", "../../testdata/loss_nak_gobackn.pcap", []string{"--kind", "nak,capture_gap"}, func(f jsonFinding) bool { return f.Kind == "nak" || f.Kind == "capture_gap" }},
		{"kind and severity", "../../testdata/rnr_corrupt_icrc.pcap", []string{"--severity=warning", "--kind", "retransmission,bad_icrc,rnr_nak"}, func(f jsonFinding) bool {
			return f.Severity != "info" && (f.Kind == "retransmission" || f.Kind == "bad_icrc" || f.Kind == "rnr_nak")
		}},
		{"kind and qp", "../../testdata/ecn_cnp.pcap", []string{"--kind", "cnp", "--qp", "0x5668"}, func(f jsonFinding) bool { return f.Kind == "cnp" }},
		{"storm", storm, []string{"--kind", "cnp_no_slowdown,ecn_ce"}, func(f jsonFinding) bool { return f.Kind == "cnp_no_slowdown" || f.Kind == "ecn_ce" }},
		{"none left", "../../testdata/ecn_cnp.pcap", []string{"--severity", "error"}, func(jsonFinding) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sel []string
			if i := slices.Index(tc.args, "--qp"); i >= 0 {
				sel = tc.args[i : i+2]
			}
			want := []jsonFinding{}
			for _, f := range reportFindings(t, append(slices.Clone(sel), tc.file)...) {
				if tc.keep(f) {
					want = append(want, f)
				}
			}
			args := append(slices.Clone(tc.args), tc.file)
			got := reportFindings(t, args...)
			assert.Equal(t, want, got, "-o json, written while built")
			dir := t.TempDir()
			whole := reportFindings(t, append([]string{"--export", dir}, args...)...)
			assert.Equal(t, want, whole, "-o json of the whole report (--export)")
			assert.Len(t, readParquet(t, filepath.Join(dir, "findings.parquet")), len(want), "--export findings table")
			pdir := t.TempDir()
			code, _, errs := run(t, nil, append([]string{"-o", "parquet", "--export", pdir}, args...)...)
			require.Equal(t, 0, code, errs)
			assert.Len(t, readParquet(t, filepath.Join(pdir, "findings.parquet")), len(want), "-o parquet findings table, written while built")

			head, lines := textFindings(t, args...)
			_, out, _ := run(t, nil, append([]string{"--color=never"}, args...)...)
			filter := strings.Join(slices.DeleteFunc(slices.Clone(tc.args), func(a string) bool { return a == "--qp" || a == "0x5668" }), " ")
			filter = strings.ReplaceAll(filter, "=", " ")
			if len(want) == 0 {
				assert.Empty(t, head)
				assert.Contains(t, out, "\nNo findings match "+filter+".\n")
				assert.NotContains(t, out, "No problems found")
			} else {
				assert.Contains(t, out, "\nFindings (worst first; "+filter+"): ", "the title names the filters")
				assert.Equal(t, title(want), head)
				assert.Equal(t, wantRollUp(want), lines)
			}

			page := filepath.Join(t.TempDir(), "r.html")
			code, _, errs = run(t, nil, append([]string{"--html", page}, args...)...)
			require.Equal(t, 0, code, errs)
			html, err := os.ReadFile(page)
			require.NoError(t, err)
			// The page counts every finding kept by severity, and lists the
			// worst htmlreport.MaxFindingRows of them.
			counts := regexp.MustCompile(`"finding_counts":\{"error":(\d+),"warning":(\d+),"info":(\d+)\}`).FindStringSubmatch(string(html))
			require.NotNil(t, counts, "the page's finding counts")
			listed := 0
			for k, sev := range []string{"error", "warning", "info"} {
				n := 0
				for _, f := range want {
					if f.Severity == sev {
						n++
					}
				}
				assert.Equal(t, strconv.Itoa(n), counts[k+1], "--html findings of severity %s", sev)
				listed += strings.Count(string(html), `"severity":"`+sev+`"`)
			}
			assert.Equal(t, min(len(want), htmlreport.MaxFindingRows), listed, "--html findings listed")
		})
	}
}

// TestFindingFilterMarks: with -P, --severity and --kind keep the " !"
// marks of the findings they keep.
func TestFindingFilterMarks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		frames []string
	}{
		{"all", nil, []string{"7", "15", "16", "17", "19"}},
		{"errors", []string{"--severity", "error"}, []string{"15"}},
		{"retransmissions", []string{"--kind", "retransmission"}, []string{"16", "17", "19"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := run(t, nil, append([]string{"--color=never", "-P"}, append(tc.args, "../../testdata/loss_nak_gobackn.pcap")...)...)
			require.Equal(t, 0, code, errs)
			var marked []string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasSuffix(l, " !") {
					marked = append(marked, strings.Fields(l)[0])
				}
			}
			assert.Equal(t, tc.frames, marked)
		})
	}
}

// TestFindingFlagsUsage: a bad --findings, --severity or --kind is a
// usage error (exit status 2).
func TestFindingFlagsUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--findings", "some"}, `--findings "some": want summary or all`},
		{[]string{"--severity", "fatal"}, `--severity "fatal": want error, warning or info`},
		{[]string{"--kind", "nak,naks"}, `--kind "naks": want kinds of bad_dma_length,`},
		{[]string{"--kind", ""}, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errs := run(t, nil, append(tc.args, "../../testdata/ecn_cnp.pcap")...)
			if tc.want == "" {
				assert.Equal(t, 0, code, errs)
				return
			}
			assert.Equal(t, 2, code)
			assert.Contains(t, errs, tc.want)
		})
	}
}
