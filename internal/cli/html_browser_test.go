package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/analyzetest"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

var screenshotPath = flag.String("screenshot", "", "TestHTMLReportInBrowser: also save the screenshot of the \"impaired\" case to this path (go test ./internal/cli -run HTMLReportInBrowser -screenshot ../../docs/html-report.png)")

// findChromium returns the path of a Chromium or Chrome, "" if none.
func findChromium() string {
	if p := os.Getenv("CHROME"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// needChromium returns the path of a Chromium or Chrome, skipping the
// test where there is none (failing it on CI, which must run it).
func needChromium(t *testing.T) string {
	t.Helper()
	chrome := findChromium()
	if chrome == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chromium found, and CI must run the browser test: .ci/run installs it (apt-get install -y chromium)")
		}
		t.Skip("no Chromium or Chrome installed (apt-get install -y chromium, or set CHROME=path): the HTML report's browser test is skipped")
	}
	return chrome
}

// wirePacket is what gopacket, not the code under test, decodes from a frame.
type wirePacket struct {
	src, dst string
	qp, psn  uint32
	op       layers.Opcode
}

// decodeWire decodes every frame of a capture with gopacket and the layers
// package: the oracle for the chart's points.
func decodeWire(t *testing.T, path string) map[uint64]wirePacket {
	t.Helper()
	cr, err := capture.Open(path)
	require.NoError(t, err)
	defer cr.Close()
	out := map[uint64]wirePacket{}
	for n := uint64(1); ; n++ {
		_, data, lt, err := cr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		pkt := gopacket.NewPacket(data, lt, gopacket.Default)
		ip, ok := pkt.Layer(gplayers.LayerTypeIPv4).(*gplayers.IPv4)
		bth, ok2 := pkt.Layer(layers.LayerTypeBTH).(*layers.BTH)
		if !ok || !ok2 {
			continue
		}
		src, _ := netip.AddrFromSlice(ip.SrcIP.To4())
		dst, _ := netip.AddrFromSlice(ip.DstIP.To4())
		out[n] = wirePacket{src: src.String(), dst: dst.String(), qp: bth.DestQP, psn: bth.PSN, op: bth.Opcode}
	}
	return out
}

// analyzeFile is the analyzer's report of a capture, the oracle for the
// page's tables.
func analyzeFile(t *testing.T, path string) *analyze.Report {
	return analyzetest.Report(t, path, analyze.Options{})
}

func flowLabel(f *analyze.Flow) string {
	return fmt.Sprintf("%s → %s QP 0x%06x", f.Src, f.Dst, f.DestQP)
}

// synthCapture writes a roce-synth capture into dir.
func synthHTMLCapture(t *testing.T, name string, args ...string) string {
	t.Helper()
	out := name
	cfg, _, _, err := synth.ParseArgs(append(args, "-no-truth", "-o", out))
	require.NoError(t, err)
	require.NoError(t, synth.WriteFiles(cfg, out, ""))
	return out
}

// TestHTMLReportInBrowser writes --html pages and checks them in headless
// Chromium: no console error, no network request, the flow table holds the
// analyzer's flows (with their priority and paused time when the capture
// holds pause frames, beside a Pause table), a click on a finding charts
// its flow with the PSNs the capture's bytes carry, and a screenshot is
// not blank.
func TestHTMLReportInBrowser(t *testing.T) {
	chrome := needChromium(t)
	dir := t.TempDir()
	loss, err := filepath.Abs("../../testdata/loss_nak_gobackn.pcap")
	require.NoError(t, err)
	ecn, err := filepath.Abs("../../testdata/ecn_cnp.pcap")
	require.NoError(t, err)
	// Header-only: the CM fields beyond the snap length are null.
	cut, err := filepath.Abs("../../testdata/header_only_snap128.pcap")
	require.NoError(t, err)
	shotPath := *screenshotPath
	if shotPath != "" {
		shotPath, err = filepath.Abs(shotPath)
		require.NoError(t, err)
	}
	t.Chdir(dir) // the generated captures are named without a temporary path
	cases := []struct {
		name    string
		capture string
		// finding is the kind of the finding to click; "": click the
		// flow row of the flow with the most packets instead.
		finding analyze.Kind
	}{
		{"loss_nak", loss, analyze.KindNAK},
		{"ecn_cnp", ecn, analyze.KindCNP},
		{"header_only", cut, ""},
		{"impaired", synthHTMLCapture(t, "impaired.pcap", "write-bw", "-messages", "64", "-nanos",
			"-nak", "+40,+100,+200", "-ecn", "+70,+71,+72", "-rnr", "+150", "-drop", "+200", "-reorder", "+120"), analyze.KindPSNGap},
		// Among dozens of flows, PFC from two senders, a PFC storm and
		// 802.3x PAUSE: the Pause table, the flows' priority and paused
		// time, a pause_storm finding.
		{"dozens_of_flows_paused", synthHTMLCapture(t, "mix.pcap", "mix", "-qps", "24", "-packets", "3000", "-nanos",
			"-pfc", "3,senders=2", "-pfc-storm", "3", "-pause", "on"), ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			page := filepath.Join(dir, tc.name+".html")
			code, _, stderr := run(t, nil, "--html", page, tc.capture)
			require.Equal(t, 0, code, stderr)
			rep := analyzeFile(t, tc.capture)
			wire := decodeWire(t, tc.capture)
			png := checkInBrowser(t, chrome, filepath.Join(dir, "profile-"+tc.name), page, rep, wire, tc.finding)
			shot := filepath.Join(dir, tc.name+".png")
			if tc.name == "impaired" && shotPath != "" {
				shot = shotPath
			}
			require.NoError(t, os.WriteFile(shot, png, 0o644))
			t.Logf("screenshot: %s", shot)
		})
	}
}

// checkInBrowser opens page in a headless Chromium (chrome) with the
// profile directory profile and checks it against the analyzer's report
// rep and the capture's frames as gopacket decodes them (wire): the flow
// table and picker, the Pause table, the axis labels, that a click on a
// flow row selects it and one on the finding of kind findingKind (or, for
// "", the busiest flow's row) charts its flow, the chart's points, no
// console message or network request; it returns the screenshot of the
// whole page.
func checkInBrowser(t *testing.T, chrome, profile, page string, rep *analyze.Report, wire map[uint64]wirePacket, findingKind analyze.Kind) []byte {
	t.Helper()
	b, stop := openBrowser(t, chrome, profile)
	defer stop()

	// The page loads and renders the flows of the analyzer's report.
	require.NoError(t, chromedp.Do(b.ctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible(chromedp.CSS("#psn-chart .uplot")),
	))
	checkFlowTableInBrowser(t, b, rep)
	checkTickLabels(t, b)

	// The finding to click (or the busiest flow), and another flow.
	fi, fd, flowIdx := findingToClick(t, rep, findingKind)
	other := (flowIdx + 1) % len(rep.Flows)
	var selected int
	b.click(t, fmt.Sprintf(`#flow-table tbody tr[data-flow="%d"]`, other))
	b.eval(t, `window.roceReport.state.flow`, &selected)
	assert.Equal(t, other, selected, "a click on a flow row selects it")
	assert.Contains(t, b.text(t, "#chart-title"), flowLabel(&rep.Flows[other]))

	// A click on the finding (or flow row) charts its flow, marking the
	// finding's frame.
	var pts []chartPoint
	if fi >= 0 {
		b.click(t, fmt.Sprintf(`#finding-table tbody tr[data-row="%d"]`, fi))
		var markFrame uint64
		b.eval(t, `window.roceReport.state.mark.frame`, &markFrame)
		assert.Equal(t, fd.Frame, markFrame, "the finding's frame is marked")
	} else {
		b.click(t, fmt.Sprintf(`#flow-table tbody tr[data-flow="%d"]`, flowIdx))
	}
	b.eval(t, `window.roceReport.state.flow`, &selected)
	b.eval(t, `window.roceReport.chartPoints()`, &pts)
	assert.Equal(t, flowIdx, selected, "the flow is charted")
	assert.Contains(t, b.text(t, "#chart-title"), flowLabel(&rep.Flows[flowIdx]))
	seen := checkChartPoints(t, pts, wire, &rep.Flows[flowIdx])
	if fi >= 0 {
		assert.True(t, seen[fd.Frame], "the finding's frame %d is on the chart", fd.Frame)
	}

	buf := b.screenshot(t)
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Empty(t, b.problems, "console messages and exceptions")
	assert.Empty(t, b.requests, "network requests (the page must be self-contained)")
	return buf
}

// browser is a headless Chromium tab and what it reported: console
// messages, exceptions and log errors or warnings (problems), requests
// other than for files.
type browser struct {
	ctx                context.Context
	mu                 sync.Mutex
	problems, requests []string
}

// openBrowser starts a headless Chromium (chrome) with the profile
// directory profile, a 1400×1500 window and 90 s to live, listening to
// its console, log and network; stop ends it.
func openBrowser(t *testing.T, chrome, profile string) (b *browser, stop func()) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1400, 1500),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 90*time.Second)
	stop = func() {
		cancelT()
		cancel()
		cancelA()
	}
	b = &browser{ctx: ctx}
	require.NoError(t, chromedp.Listen(ctx, b.record))
	_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
	require.NoError(t, err)
	_, err = chromedp.Call(ctx, cdplog.Enable, cdp.Empty{})
	require.NoError(t, err)
	return b, stop
}

// record notes an event of the browser that the page must not cause: a
// console message, an exception, a log error or warning, a request other
// than for a file.
func (b *browser) record(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		var args []string
		for _, a := range e.Args {
			args = append(args, string(a.Value)+a.Description)
		}
		b.problems = append(b.problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		msg := d.Text
		if d.Exception != nil {
			msg += " " + d.Exception.Description
		}
		b.problems = append(b.problems, fmt.Sprintf("exception at %d:%d: %s", d.LineNumber, d.ColumnNumber, msg))
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
			b.problems = append(b.problems, fmt.Sprintf("log %s: %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL))
		}
	case *network.EventRequestWillBeSent:
		if !strings.HasPrefix(e.Request.URL, "file://") {
			b.requests = append(b.requests, e.Request.URL)
		}
	}
}

// eval evaluates the JavaScript expression expr in the page into v.
func (b *browser) eval(t *testing.T, expr string, v any) {
	t.Helper()
	res, err := chromedp.Run(b.ctx, chromedp.Evaluate[json.RawMessage](expr))
	require.NoError(t, err, expr)
	require.NoError(t, json.Unmarshal(res, v), expr)
}

// text is the text of the element sel selects.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err, sel)
	return s
}

// click scrolls to the element sel selects and clicks it.
func (b *browser) click(t *testing.T, sel string) {
	t.Helper()
	require.NoError(t, chromedp.Do(b.ctx, chromedp.ScrollIntoView(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel))), sel)
}

// screenshot is the whole page in PNG, once the charts have set their
// ranges; it checks that it is not blank.
func (b *browser) screenshot(t *testing.T) []byte {
	t.Helper()
	ready := false
	for range 50 {
		if b.eval(t, `window.roceReport.state.ready`, &ready); ready {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	assert.True(t, ready, "the charts are ready")
	require.NoError(t, chromedp.Do(b.ctx, chromedp.ScrollIntoView(chromedp.CSS("#chart"))))
	buf, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(buf))
	require.NoError(t, err)
	assert.Greater(t, distinctColours(img), 20, "the screenshot is not blank")
	return buf
}

// checkFlowTableInBrowser checks that the page's flow table and flow
// picker hold the report's flows, in order, and what it shows of the
// pause frames (checkPauseInBrowser).
func checkFlowTableInBrowser(t *testing.T, b *browser, rep *analyze.Report) {
	t.Helper()
	eval := func(expr string, v any) {
		t.Helper()
		b.eval(t, expr, v)
	}
	var names []string
	eval(`Array.from(document.querySelectorAll('#flow-table tbody tr')).map(tr => tr.dataset.name)`, &names)
	var want []string
	for i := range rep.Flows {
		want = append(want, flowLabel(&rep.Flows[i]))
	}
	require.NotEmpty(t, want)
	assert.Equal(t, want, names, "flow table rows")
	var picker int
	eval(`document.querySelectorAll('#flow-picker option').length`, &picker)
	assert.Equal(t, len(rep.Flows), picker, "flow picker entries")
	checkPauseInBrowser(t, eval, rep)
}

// checkTickLabels checks that the page's axis labels have the decimals
// their step needs (0.25 ms steps were labelled 0.3, 0.5, 0.8).
func checkTickLabels(t *testing.T, b *browser) {
	t.Helper()
	for _, tc := range []struct{ js, want string }{
		{`fmtTicks([0, 0.00025, 0.0005, 0.00075, 0.001])`, "0.00 ms,0.25 ms,0.50 ms,0.75 ms,1.00 ms"},
		{`fmtTicks([0.0005, 0.001, 0.0015])`, "0.5 ms,1.0 ms,1.5 ms"},
		{`fmtTicks([0, 0.2, 0.4000000000000001, 0.6000000000000001])`, "0 ms,200 ms,400 ms,600 ms"},
		{`fmtTicks([2, 2.000025, 2.00005])`, "2.000000 s,2.000025 s,2.000050 s"},
		{`fmtRateTicks([0, 0.25e9, 0.5e9, 0.75e9, 1e9, 1.25e9])`, "0.00 Gb/s,0.25 Gb/s,0.50 Gb/s,0.75 Gb/s,1.00 Gb/s,1.25 Gb/s"},
	} {
		var got string
		b.eval(t, `window.roceReport.`+tc.js+`.join(',')`, &got)
		assert.Equal(t, tc.want, got, tc.js)
	}
}

// findingToClick returns the first finding of kind in the page's order
// (its row fi, -1 for kind "", and the finding) and the index of its flow, or for kind "" the
// flow with the most packets.
func findingToClick(t *testing.T, rep *analyze.Report, kind analyze.Kind) (fi int, fd analyze.Finding, flowIdx int) {
	t.Helper()
	fi, flowIdx = -1, -1
	if kind == "" {
		for i := range rep.Flows {
			if flowIdx < 0 || rep.Flows[i].Packets > rep.Flows[flowIdx].Packets {
				flowIdx = i
			}
		}
		return fi, fd, flowIdx
	}
	// The page lists the findings worst first (TestHTMLFindingsOrder):
	// fi is the row of the first one of kind there.
	listed := slices.Clone(rep.Findings)
	slices.SortStableFunc(listed, func(a, b analyze.Finding) int { return int(a.Severity) - int(b.Severity) })
	for i, x := range listed {
		if x.Kind == kind {
			fi, fd = i, x
			break
		}
	}
	require.GreaterOrEqual(t, fi, 0, "the capture has a %s finding", kind)
	for i := range rep.Flows {
		if flowLabel(&rep.Flows[i]) == fd.FlowName() {
			flowIdx = i
		}
	}
	require.GreaterOrEqual(t, flowIdx, 0, "finding's flow %q in the report", fd.Flow)
	return fi, fd, flowIdx
}

// chartPoint is a point of the page's chart.
type chartPoint struct {
	Frame uint64 `json:"frame"`
	PSN   uint32 `json:"psn"`
	Cat   string `json:"cat"`
}

// checkChartPoints checks the points of flow f's chart against the
// capture's frames (wire): every point is a frame of f or of its reverse
// direction, with the PSN its bytes carry; every frame of f the chart
// draws (a request flow's requests) is there (these captures are below
// the decimation limits). It returns the frames on the chart.
func checkChartPoints(t *testing.T, pts []chartPoint, wire map[uint64]wirePacket, f *analyze.Flow) map[uint64]bool {
	t.Helper()
	seen := map[uint64]bool{}
	for _, p := range pts {
		w, ok := wire[p.Frame]
		require.True(t, ok, "frame %d on the chart is a BTH frame", p.Frame)
		fwd := w.src == f.Src && w.dst == f.Dst
		rev := w.src == f.Dst && w.dst == f.Src
		assert.True(t, fwd || rev, "frame %d (%s → %s) belongs to the flow or its reverse", p.Frame, w.src, w.dst)
		assert.Equal(t, w.psn, p.PSN, "PSN of frame %d", p.Frame)
		seen[p.Frame] = true
	}
	drawn := 0
	for n, w := range wire {
		if w.src != f.Src || w.dst != f.Dst || w.qp != f.DestQP {
			continue
		}
		if f.Requests.Packets > 0 && (w.op.IsResponse() || w.op.IsCNP()) {
			continue // a request flow's chart draws its requests
		}
		assert.True(t, seen[n], "frame %d of the flow is on its chart", n)
		drawn++
	}
	assert.Positive(t, drawn)
	return seen
}

// checkPauseInBrowser checks what the page shows of the pause frames: a
// row per sender and priority in the Pause table, each flow's priority
// and paused time in the flow table, the pause storms in the findings'
// table; none of it without pause frames.
func checkPauseInBrowser(t *testing.T, eval func(string, any), rep *analyze.Report) {
	t.Helper()
	var header []string
	eval(`Array.from(document.querySelectorAll('#flow-table thead th')).map(th => th.textContent)`, &header)
	var pauseRows, storms int
	eval(`document.querySelectorAll('#pause-table tbody tr').length`, &pauseRows)
	eval(`Array.from(document.querySelectorAll('#finding-table tbody tr')).filter(tr => tr.textContent.includes('pause_storm')).length`, &storms)
	wantStorms := 0
	for _, f := range rep.Findings {
		if f.Kind == analyze.KindPauseStorm {
			wantStorms++
		}
	}
	assert.Equal(t, len(rep.Pause), pauseRows, "rows of the Pause table")
	assert.Equal(t, wantStorms, storms, "pause_storm rows of the findings' table")
	prio, paused := slices.Index(header, "Prio"), slices.Index(header, "Paused")
	if len(rep.Pause) == 0 {
		assert.Equal(t, -1, prio, "no priority column without pause frames")
		assert.Equal(t, -1, paused, "no paused column without pause frames")
		return
	}
	require.GreaterOrEqual(t, prio, 0, "the flow table has the flows' priority")
	require.GreaterOrEqual(t, paused, 0, "the flow table has the flows' paused time")
	var cells [][]string
	eval(`Array.from(document.querySelectorAll('#flow-table tbody tr')).map(tr => Array.from(tr.children).map(td => td.textContent))`, &cells)
	require.Len(t, cells, len(rep.Flows))
	wasPaused := 0
	for i := range rep.Flows {
		f := &rep.Flows[i]
		require.NotNil(t, f.Priority)
		assert.Equal(t, fmt.Sprint(*f.Priority), cells[i][prio], "priority of %s", flowLabel(f))
		var want int64
		if f.PausedNs != nil {
			want = *f.PausedNs
			wasPaused++
		}
		got, err := time.ParseDuration(strings.ReplaceAll(cells[i][paused], " ", ""))
		require.NoError(t, err, "paused time of %s: %q", flowLabel(f), cells[i][paused])
		assert.InDelta(t, float64(want), float64(got), 0.005*float64(want)+1, "paused time of %s: %q", flowLabel(f), cells[i][paused])
	}
	assert.Positive(t, wasPaused, "a flow was paused: the case tests the paused time")
}

// distinctColours counts the colours of a sample of an image's pixels.
func distinctColours(img image.Image) int {
	b := img.Bounds()
	seen := map[[4]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen)
}

// gapLabel is a label of the sequence chart's gaps and its box (CSS px).
type gapLabel struct {
	Label string  `json:"label"`
	L     float64 `json:"l"`
	R     float64 `json:"r"`
	T     float64 `json:"t"`
	B     float64 `json:"b"`
}

// TestHTMLGapLabelsInBrowser: on a capture whose tap missed dozens of
// packets, the sequence chart's gap labels never overlap (nearby gaps
// share one: "3 gaps, 3 PSNs not captured"), at full view and zoomed in,
// and say of their PSNs what -o json says: the PSNs of the labels add up
// to the flows' missing_not_captured and missing_lost, and "lost" appears
// only when the JSON counts PSNs lost. The legend names the request after
// a gap by its class.
func TestHTMLGapLabelsInBrowser(t *testing.T) {
	chrome := needChromium(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		synth  []string
		points bool   // synth is roce-synth points' command line: the page of its files
		legend string // a category the legend must name
	}{
		{"tap_drops", tapDrops(), false, "request after PSNs not captured"},
		{"lost_and_not_captured", []string{"write-bw", "--messages", "20", "--tap", "responder", "--nak", "+7", "--gbn-skip", "1", "--drop", "+40,+41,+60"}, false, "request after PSNs not captured"},
		{"capture_points", pointsTapDrops(), true, "request after PSNs not captured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := []string{filepath.Join(dir, tc.name+".a.pcap"), filepath.Join(dir, tc.name+".b.pcap")}
			if tc.points {
				synthPoints(t, dir, tc.name, tc.synth...)
			} else {
				files = []string{rocesynth(t, dir, tc.name+".pcap", tc.synth...)}
			}
			want := reportLoss(t, files...)
			require.NotZero(t, want.lost+want.notCaptured, "the report has gaps to draw")
			page := filepath.Join(dir, tc.name+".html")
			code, _, errs := run(t, nil, append([]string{"--html", page}, files...)...)
			require.Equal(t, 0, code, errs)
			b, stop := openBrowser(t, chrome, filepath.Join(dir, "profile-"+tc.name))
			defer stop()
			require.NoError(t, chromedp.Do(b.ctx, chromedp.Navigate("file://"+page)))
			_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`window.roceReport.state.ready && !!window.roceReport.state.psn.gapLabels`))
			require.NoError(t, err)
			var labels []gapLabel
			b.eval(t, `window.roceReport.state.psn.gapLabels`, &labels)
			t.Logf("labels: %v", labels)
			lost, nc := labelPSNs(t, labels)
			assert.Equal(t, want.notCaptured, nc, "PSNs not captured in the labels: %v", labels)
			assert.Equal(t, want.lost, lost, "PSNs lost in the labels: %v", labels)
			assertApart(t, labels)
			var legend []string
			b.eval(t, `window.roceReport.state.psn.series.map((s) => s.label)`, &legend)
			assert.Contains(t, legend, tc.legend)
			if want.gapErrors == 0 {
				assert.NotContains(t, legend, "request after PSNs lost in the network")
			}
			// Zoomed into the middle, the labels are grouped anew, still
			// apart.
			b.eval(t, `(() => { const u = window.roceReport.state.psn; const a = u.scales.x.min, z = u.scales.x.max;
				u.setScale('x', { min: a + (z - a) * 0.3, max: a + (z - a) * 0.6 }); return true; })()`, new(bool))
			b.eval(t, `window.roceReport.state.psn.gapLabels`, &labels)
			require.NotEmpty(t, labels)
			assertApart(t, labels)
			shot := b.screenshot(t)
			require.NoError(t, os.WriteFile(filepath.Join(dir, tc.name+".png"), shot, 0o644))
			b.mu.Lock()
			defer b.mu.Unlock()
			assert.Empty(t, b.problems, "console messages and exceptions")
		})
	}
}

// pointsTapDrops is the roce-synth points command line of two capture
// points of one traffic whose taps both missed 30 request packets the
// responder acknowledged, one every 7 PSNs, and one PSN NAKed and never
// resent: the combined report's gaps, 29 not captured and 1 lost.
func pointsTapDrops() []string {
	drops := make([]string, 0, 30)
	for k := 10; k < 220; k += 7 {
		drops = append(drops, fmt.Sprintf("+%d", k))
	}
	d := strings.Join(drops, ";")
	return []string{"write-bw", "--messages", "100", "--nak", "+10", "--gbn-skip", "1",
		"--point", "a,drop=" + d, "--point", "b,offset=3ms,delay=2us,drop=" + d}
}

// labelPSNs adds up the PSNs the gap labels call lost and not captured:
// "gap: 1 PSN not captured", "3 gaps, 3 PSNs not captured", "4 gaps, 5
// PSNs: 1 lost in the network, 4 not captured".
func labelPSNs(t *testing.T, labels []gapLabel) (lost, notCaptured uint64) {
	t.Helper()
	n := func(s string) uint64 {
		var v uint64
		_, err := fmt.Sscan(strings.ReplaceAll(s, ",", ""), &v)
		require.NoError(t, err)
		return v
	}
	one := regexp.MustCompile(`^(?:gap: |[\d,]+ gaps, )([\d,]+) PSNs? (lost in the network|not captured|of unknown fate)$`)
	part := regexp.MustCompile(`([\d,]+) (lost in the network|not captured|of unknown fate)`)
	for _, l := range labels {
		var parts [][]string
		if m := one.FindStringSubmatch(l.Label); m != nil {
			parts = [][]string{m}
		} else {
			_, tail, ok := strings.Cut(l.Label, ": ")
			require.True(t, ok, l.Label)
			parts = part.FindAllStringSubmatch(tail, -1)
			require.NotEmpty(t, parts, l.Label)
		}
		for _, p := range parts {
			switch p[2] {
			case "lost in the network":
				lost += n(p[1])
			case "not captured":
				notCaptured += n(p[1])
			}
		}
	}
	return lost, notCaptured
}

// assertApart checks that no two label boxes overlap.
func assertApart(t *testing.T, labels []gapLabel) {
	t.Helper()
	for i, a := range labels {
		for _, b := range labels[i+1:] {
			overlap := a.L < b.R && b.L < a.R && a.T < b.B && b.T < a.B
			assert.False(t, overlap, "labels %q and %q overlap", a.Label, b.Label)
		}
	}
}
