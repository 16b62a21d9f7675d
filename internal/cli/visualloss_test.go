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

// tapDrops is the roce-synth command line of a RoCE v1 capture whose tap
// missed 40 request packets the responder acknowledged, one every 7 PSNs:
// the report says "not network loss".
func tapDrops() []string {
	drops := make([]string, 0, 40)
	for k := 10; k < 290; k += 7 {
		drops = append(drops, fmt.Sprintf("+%d", k))
	}
	return []string{"write-bw", "--encap", "rocev1", "--messages", "100", "--drop", strings.Join(drops, ",")}
}

// lossJSON is what -o json says of a capture's missing PSNs: per class
// the PSNs still missing (flows' missing_lost, missing_not_captured and
// the rest) and the psn_gap and capture_gap findings.
type lossJSON struct {
	lost, notCaptured, unknown uint64
	gapErrors, gapWarnings     int // psn_gap findings: lost, fate unknown
	captureGaps                int
}

// missingFlow is a flow's missing PSNs in the JSON report (and the
// HTML page's data).
type missingFlow struct {
	Requests struct {
		Missing            uint64 `json:"missing"`
		MissingLost        uint64 `json:"missing_lost"`
		MissingNotCaptured uint64 `json:"missing_not_captured"`
	} `json:"requests"`
}

func reportLoss(t *testing.T, args ...string) lossJSON {
	t.Helper()
	code, out, errs := run(t, nil, append([]string{"-o", "json"}, args...)...)
	require.Equal(t, 0, code, errs)
	var rep struct {
		Flows    []missingFlow `json:"flows"`
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
	for _, tc := range []struct {
		name    string
		synth   []string
		flags   []string
		lost    bool // marks of each class expected
		nc, unk bool
	}{
		{"tap drops, RoCE v1", tapDrops(), nil, false, true, false},
		{"tap drops, --severity warning", tapDrops(), []string{"--severity", "warning"}, false, false, false},
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

// htmlPage is what the HTML tests read of a page's data.
type htmlPage struct {
	Report struct {
		Flows    []missingFlow `json:"flows"`
		Findings []htmlFinding `json:"findings"`
	} `json:"report"`
	Flows []struct {
		Name  string `json:"name"`
		Chart *struct {
			DataFlow int      `json:"data_flow"`
			RespFlow int      `json:"resp_flow"`
			Packets  uint64   `json:"packets"`
			Shown    int      `json:"shown"`
			TNs      []int64  `json:"t_ns"`
			Frame    []uint64 `json:"frame"`
			File     []int    `json:"file"`
			Cat      []int    `json:"cat"`
			Points   []string `json:"points"`
			Gaps     []struct {
				From        int64  `json:"from"`
				To          int64  `json:"to"`
				Count       uint64 `json:"count"`
				TNs         int64  `json:"t_ns"`
				Lost        uint64 `json:"lost"`
				NotCaptured uint64 `json:"not_captured"`
				Unknown     uint64 `json:"unknown"`
			} `json:"gaps"`
		} `json:"chart"`
	} `json:"flows"`
}

type htmlFinding struct {
	Severity string `json:"severity"`
	Kind     string `json:"kind"`
	Frame    uint64 `json:"frame"`
	File     string `json:"file"`
}

// writeHTMLPage runs roce-dissect --html on the captures and returns the
// page and its data.
func writeHTMLPage(t *testing.T, dir string, captures ...string) (string, htmlPage) {
	t.Helper()
	page := filepath.Join(dir, "page.html")
	code, _, errs := run(t, nil, append([]string{"--html", page}, captures...)...)
	require.Equal(t, 0, code, errs)
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindSubmatch(b)
	require.Len(t, m, 2)
	var d htmlPage
	require.NoError(t, json.Unmarshal(m[1], &d))
	return string(b), d
}

// The chart's categories of the request after a gap (internal/htmlreport,
// chart.go: catAfterGap, catAfterUnknown, catAfterNotCaptured).
const (
	catAfterLost        = 3
	catAfterUnknown     = 9
	catAfterNotCaptured = 10
)

// TestHTMLLossClasses: the HTML sequence chart splits each flow's gaps as
// -o json splits its missing PSNs (missing_lost, missing_not_captured, the
// rest unknown), and draws the request after a gap in the category of the
// gap's class: "not captured" for tap drops, never "lost" unless the JSON
// counts PSNs lost.
func TestHTMLLossClasses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		synth []string
	}{
		{"tap drops, RoCE v1", tapDrops()},
		{"NAKs before a responder tap and drops", []string{"write-bw", "--messages", "60", "--tap", "responder", "--nak", "+30,+100", "--drop", "+10,+11,+12,+50,+150,+233"}},
		{"NAKed and never resent", []string{"write-bw", "--messages", "20", "--tap", "responder", "--nak", "+7", "--gbn-skip", "1", "--drop", "+40"}},
		{"UD drops", []string{"ud", "--messages", "40", "--drop", "+4,+20"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			capPath := rocesynth(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".pcap", tc.synth...)
			want := reportLoss(t, capPath)
			_, d := writeHTMLPage(t, dir, capPath)
			var got lossJSON
			cats := map[int]int{}
			for i, f := range d.Flows {
				ch := f.Chart
				if ch == nil || ch.DataFlow != i {
					continue // each data flow once
				}
				r := d.Report.Flows[i].Requests
				var lost, nc, unk uint64
				for _, g := range ch.Gaps {
					assert.Equal(t, g.Count, g.Lost+g.NotCaptured+g.Unknown)
					lost, nc, unk = lost+g.Lost, nc+g.NotCaptured, unk+g.Unknown
				}
				assert.Equal(t, [3]uint64{r.MissingLost, r.MissingNotCaptured, r.Missing - r.MissingLost - r.MissingNotCaptured}, [3]uint64{lost, nc, unk}, f.Name)
				got.lost, got.notCaptured, got.unknown = got.lost+lost, got.notCaptured+nc, got.unknown+unk
				for _, c := range ch.Cat {
					cats[c]++
				}
			}
			assert.Equal(t, [3]uint64{want.lost, want.notCaptured, want.unknown}, [3]uint64{got.lost, got.notCaptured, got.unknown}, "the page's gaps split as -o json's flows")
			if cats[catAfterLost] > 0 { // else drawn as resent or out of order
				assert.NotZero(t, want.gapErrors, "requests after PSNs lost only when the JSON has psn_gap errors: %v", cats)
			}
			assert.Equal(t, want.notCaptured > 0, cats[catAfterNotCaptured] > 0, "requests after PSNs not captured: %v", cats)
			assert.Equal(t, want.gapWarnings > 0, cats[catAfterUnknown] > 0, "requests after PSNs of unknown fate: %v", cats)
		})
	}
}

// textOrder is the findings of the text report (--findings all) in its
// order, worst first.
func textOrder(t *testing.T, captures ...string) []htmlFinding {
	t.Helper()
	_, lines := textFindings(t, append([]string{"--findings", "all"}, captures...)...)
	var fs []htmlFinding
	re := regexp.MustCompile(`^  (ERROR|WARNING|INFO) +(?:(\S+) )?frame (\d+) (\S+)`)
	for _, line := range lines {
		if line == "" {
			break // the capture points' section follows
		}
		m := re.FindStringSubmatch(line)
		require.NotNil(t, m, line)
		var frame uint64
		_, err := fmt.Sscan(m[3], &frame)
		require.NoError(t, err)
		fs = append(fs, htmlFinding{Severity: strings.ToLower(m[1]), Kind: m[4], Frame: frame, File: m[2]})
	}
	require.NotEmpty(t, fs)
	return fs
}

// TestHTMLFindingsOrder: the HTML page lists the findings in the text
// report's order, worst first (docs/cli.md), not in frame order.
func TestHTMLFindingsOrder(t *testing.T) {
	dir := t.TempDir()
	mixed := rocesynth(t, dir, "mixed.pcap", "write-bw", "--messages", "60", "--tap", "responder", "--nak", "+30,+100",
		"--drop", "+10,+11,+12,+50,+150,+233", "--ecn", "+5,+80")
	synthPoints(t, dir, "pts", "write-bw", "--messages", "20", "--nak", "+9", "--ecn", "+3", "--point", "tx", "--point", "rx,delay=2us,drop=+5;+6")
	for _, tc := range []struct {
		name     string
		captures []string
	}{
		{"one capture", []string{mixed}},
		{"capture points", []string{filepath.Join(dir, "pts.tx.pcap"), filepath.Join(dir, "pts.rx.pcap")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := textOrder(t, tc.captures...)
			_, d := writeHTMLPage(t, dir, tc.captures...)
			got := d.Report.Findings
			if len(tc.captures) == 1 {
				for i := range got {
					got[i].File = "" // the text report names no file of one capture
				}
			}
			assert.Equal(t, want, got)
			sevs := map[string]bool{}
			for _, f := range want {
				sevs[f.Severity] = true
			}
			assert.Len(t, sevs, 3, "errors, warnings and info to order")
		})
	}
}

// synthPoints writes the captures of several points of one traffic with
// roce-synth points (OUT.NAME.pcap in dir).
func synthPoints(t *testing.T, dir, out string, args ...string) {
	t.Helper()
	var so, se bytes.Buffer
	require.Equal(t, 0, synth.Run(append([]string{"points"}, append(args, "-o", filepath.Join(dir, out))...), &so, &se), se.String())
}

// TestHTMLCapturePoints: the page of several capture points of one
// traffic has the text report's capture points section (each file's
// clock, the flows between points, the PSNs lost between them), and each
// chart counts each packet once, as -o json counts the flows' packets,
// saying which point's packets it draws.
func TestHTMLCapturePoints(t *testing.T) {
	dir := t.TempDir()
	synthPoints(t, dir, "w", "write-bw", "--messages", "15", "--start-psn", "100", "--nak", "105",
		"--point", "a", "--point", "b,offset=1500us,delay=3us,jitter=200ns,drop=103", "--point", "c,delay=1us")
	files := []string{filepath.Join(dir, "w.a.pcap"), filepath.Join(dir, "w.b.pcap"), filepath.Join(dir, "w.c.pcap")}
	code, text, errs := run(t, nil, append([]string{"--color=never"}, files...)...)
	require.Equal(t, 0, code, errs)
	page, d := writeHTMLPage(t, dir, files...)

	// Each packet once: the chart's packets are those -o json counts in
	// its flows.
	rep, _ := runJSON(t, files...)
	packets := map[string]uint64{}
	for _, f := range rep.Flows {
		packets[fmt.Sprintf("%s → %s QP 0x%06x", f.Src, f.Dst, f.DestQP)] = f.Packets
	}
	charts := 0
	for _, f := range d.Flows {
		ch := f.Chart
		if ch == nil {
			continue
		}
		var want uint64
		for _, j := range []int{ch.DataFlow, ch.RespFlow} {
			if j >= 0 && (j != ch.RespFlow || j != ch.DataFlow) {
				want += packets[d.Flows[j].Name]
			}
		}
		assert.Equal(t, want, ch.Packets, "%s: packets of its chart", f.Name)
		assert.Equal(t, []string{files[0]}, ch.Points, "%s: drawn as the first point captured it", f.Name)
		charts++
	}
	assert.NotZero(t, charts)

	// The section's lines are the text report's.
	i := strings.Index(text, "\nCapture points\n")
	require.GreaterOrEqual(t, i, 0, text)
	var clocks, losses []string
	for _, line := range strings.Split(text[i:], "\n") {
		switch {
		case regexp.MustCompile(`^  \d+\. `).MatchString(line):
			clocks = append(clocks, regexp.MustCompile(`^  \d+\. `).ReplaceAllString(line, ""))
		case strings.HasPrefix(line, "  lost between"), strings.HasPrefix(line, "  corrupted between"):
			losses = append(losses, strings.TrimPrefix(line, "  "))
		}
	}
	require.Len(t, clocks, 3)
	require.NotEmpty(t, losses, "a PSN lost between points")
	sectionText := func(id string) []string {
		m := regexp.MustCompile(`(?s)id="` + id + `">(.*?)</(?:ol|ul)>`).FindStringSubmatch(page)
		require.Len(t, m, 2, id)
		var out []string
		for _, li := range regexp.MustCompile(`<li[^>]*>(.*?)</li>`).FindAllStringSubmatch(m[1], -1) {
			out = append(out, strings.NewReplacer("&#43;", "+", "&#39;", "'", "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(li[1]))
		}
		return out
	}
	assert.Equal(t, clocks, sectionText("points-files"))
	assert.Equal(t, losses, sectionText("points-losses"))
	rows := regexp.MustCompile(`(?m)^  \S+ → \S+ QP 0x[0-9a-f]{6}  `).FindAllString(text[i:], -1)
	require.NotEmpty(t, rows)
	assert.Len(t, rows, strings.Count(page[strings.Index(page, `id="points-table"`):strings.Index(page, `id="points-losses"`)], "<tr>")-1,
		"a row per flow and pair of points")
}

// TestHTMLCapturePointsGaps: of capture points, the page draws the gaps
// of the combined report (-o json of the same files: flows[].requests.gaps
// and their split into missing_lost and missing_not_captured) as for one
// file: each placed on the request just above it, as the first point
// captured it (gopacket decodes its PSN from that file's bytes), that
// request drawn in the class of the gap.
func TestHTMLCapturePointsGaps(t *testing.T) {
	dir := t.TempDir()
	// PSN +7 NAKed and never resent, missed by both taps: lost; +30 and
	// +31 missed by both taps, acknowledged: not captured; +40 missed by
	// the second tap only: no gap of the combined report.
	synthPoints(t, dir, "g", "write-bw", "--messages", "20", "--nak", "+7", "--gbn-skip", "1",
		"--point", "a,drop=+7;+30;+31", "--point", "b,offset=3ms,delay=2us,drop=+7;+30;+31;+40")
	files := []string{filepath.Join(dir, "g.a.pcap"), filepath.Join(dir, "g.b.pcap")}

	code, out, errs := run(t, nil, append([]string{"-o", "json"}, files...)...)
	require.Equal(t, 0, code, errs)
	var rep struct {
		Flows []struct {
			Src      string `json:"src"`
			Dst      string `json:"dst"`
			DestQP   uint32 `json:"dest_qp"`
			Requests struct {
				MissingLost        uint64 `json:"missing_lost"`
				MissingNotCaptured uint64 `json:"missing_not_captured"`
				Gaps               []struct {
					From  uint32 `json:"from"`
					To    uint32 `json:"to"`
					Count uint32 `json:"count"`
				} `json:"gaps"`
			} `json:"requests"`
		} `json:"flows"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))

	_, d := writeHTMLPage(t, dir, files...)
	charts := map[string]int{}
	for i, f := range d.Flows {
		if f.Chart != nil && f.Chart.DataFlow == i {
			charts[f.Name] = i
		}
	}

	wire := decodeWire(t, files[0])
	var lost, notCaptured uint64
	for _, f := range rep.Flows {
		r := f.Requests
		lost, notCaptured = lost+r.MissingLost, notCaptured+r.MissingNotCaptured
		if len(r.Gaps) == 0 {
			continue
		}
		name := fmt.Sprintf("%s → %s QP 0x%06x", f.Src, f.Dst, f.DestQP)
		i, ok := charts[name]
		require.True(t, ok, "%s: charted", name)
		ch := d.Flows[i].Chart
		require.Len(t, ch.Gaps, len(r.Gaps), name)
		var gl, gnc uint64
		for k, want := range r.Gaps {
			g := ch.Gaps[k]
			assert.Equal(t, uint64(want.Count), g.Count, "%s gap %d", name, k)
			assert.Equal(t, want.From, uint32(g.From)&0xFFFFFF, "%s gap %d", name, k)
			assert.Equal(t, want.To, uint32(g.To)&0xFFFFFF, "%s gap %d", name, k)
			assert.Equal(t, g.Count, g.Lost+g.NotCaptured+g.Unknown, "%s gap %d", name, k)
			gl, gnc = gl+g.Lost, gnc+g.NotCaptured
			require.GreaterOrEqual(t, g.TNs, int64(0), "%s gap %d (PSNs %d–%d) placed on the chart", name, k, want.From, want.To)
			wantCat := catAfterNotCaptured
			if g.Lost > 0 {
				wantCat = catAfterLost
			}
			// Among the points of the gap's time, the request just
			// above the gap, of the first point's file, drawn in the
			// gap's class.
			var above []string
			for k := range ch.TNs {
				if ch.TNs[k] != g.TNs || (ch.File != nil && ch.File[k] != 0) {
					continue
				}
				w, ok := wire[ch.Frame[k]]
				require.True(t, ok, "frame %d of %s", ch.Frame[k], files[0])
				above = append(above, fmt.Sprintf("PSN %d cat %d", w.psn, ch.Cat[k]))
			}
			assert.Contains(t, above, fmt.Sprintf("PSN %d cat %d", (want.To+1)&0xFFFFFF, wantCat), "%s gap %d: on the request just above it, in its class", name, k)
		}
		assert.Equal(t, [2]uint64{r.MissingLost, r.MissingNotCaptured}, [2]uint64{gl, gnc}, name)
	}
	assert.Equal(t, [2]uint64{1, 2}, [2]uint64{lost, notCaptured}, "-o json: PSN +7 lost, +30 and +31 not captured")
}
