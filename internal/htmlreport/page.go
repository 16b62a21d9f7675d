package htmlreport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"html"
	"io"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// The page's parts, embedded in the binary.
var (
	//go:embed assets/uplot/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uplot/uPlot.min.css
	uplotCSS string
	//go:embed assets/report.js
	appJS string
	//go:embed assets/report.css
	appCSS string
	//go:embed assets/report.html
	pageHTML string
)

// pageData is what the page's script renders (the <script
// type="application/json" id="report-data"> block).
type pageData struct {
	Title  string          `json:"title"`
	Files  []string        `json:"files"`
	Report *analyze.Report `json:"report"`
	// Flows and Findings run parallel to Report.Flows and Report.Findings.
	Flows    []flowExtra    `json:"flows"`
	Findings []findingExtra `json:"findings"`
	Limits   Limits         `json:"limits"`
	// FlowsWithoutChart counts flows beyond Limits.Flows.
	FlowsWithoutChart uint64 `json:"flows_without_chart"`
}

type flowExtra struct {
	Name       string     `json:"name"`
	Peer       int        `json:"peer"`
	DurationNs int64      `json:"duration_ns"`
	Chart      *chartData `json:"chart"`
	Tput       tputData   `json:"tput"`
}

type findingExtra struct {
	// Flow is the index of the finding's flow in Report.Flows (-1: none).
	Flow int   `json:"flow"`
	TNs  int64 `json:"t_ns"`
}

// Write renders rep as one self-contained HTML page. srcs are the capture
// files with the Collectors fed with their packets, in the order their
// findings name them; title heads the page.
func Write(w io.Writer, title string, rep *analyze.Report, srcs []Source) error {
	var t0 int64
	if rep.Capture.FirstTime != nil {
		t0 = rep.Capture.FirstTime.UnixNano()
	}
	d := pageData{Title: title, Report: rep, Limits: DefaultLimits}
	fileIdx := map[string]int{}
	for i, s := range srcs {
		d.Files = append(d.Files, s.Name)
		fileIdx[s.Name] = i
		if s.Collector != nil {
			d.Limits = s.Collector.lim
			d.FlowsWithoutChart += s.Collector.flowsOver
		}
	}
	kinds := map[fileFrame]uint8{}
	for _, fd := range rep.Findings {
		var b uint8
		switch fd.Kind {
		case analyze.KindRetransmission, analyze.KindDuplicate:
			b = fkResend
		case analyze.KindOutOfOrder:
			b = fkOutOfOrder
		case analyze.KindPSNGap:
			b = fkGap
		default:
			continue
		}
		kinds[fileFrame{fileIdx[fd.File], fd.Frame}] |= b // a single file's findings name no file: index 0
	}
	byName := gather(srcs)
	pts := make([]*merged, len(rep.Flows))
	flowIdx := map[analyze.FlowID]int{}
	for i := range rep.Flows {
		f := &rep.Flows[i]
		flowIdx[f.ID()] = i
		pts[i] = byName[f.ID().String()]
	}
	peer := pairFlows(rep, pts)
	for i := range rep.Flows {
		f := &rep.Flows[i]
		d.Flows = append(d.Flows, flowExtra{
			Name:       f.ID().String(),
			Peer:       peer[i],
			DurationNs: f.LastTime.Sub(f.FirstTime).Nanoseconds(),
			Chart:      buildChart(rep, i, peer, pts, kinds, t0),
			Tput:       buildTput(f, pts[i], t0),
		})
	}
	for _, fd := range rep.Findings {
		fe := findingExtra{Flow: -1, TNs: fd.Time.UnixNano() - t0}
		if i, ok := flowIdx[fd.Flow]; ok {
			fe.Flow = i
		}
		d.Findings = append(d.Findings, fe)
	}
	if d.Flows == nil {
		d.Flows = []flowExtra{}
	}
	if d.Findings == nil {
		d.Findings = []findingExtra{}
	}
	if d.Files == nil {
		d.Files = []string{}
	}
	wraps, err := wrapsHTML(&rep.Capture)
	if err != nil {
		return err
	}
	pause, pauseNav, err := pauseHTML(rep)
	if err != nil {
		return err
	}
	// The script renders neither the tunnels nor the pause table: the
	// page's data leaves them out rather than carry them twice.
	shown := *rep
	shown.Capture.Encapsulations, shown.Capture.Tunnels, shown.Pause = nil, nil, nil
	d.Report = &shown
	var data bytes.Buffer
	enc := json.NewEncoder(&data) // escapes <, > and &: safe inside <script>
	if err := enc.Encode(&d); err != nil {
		return err
	}
	page := strings.NewReplacer(
		"{{TITLE}}", html.EscapeString(title),
		"{{UPLOT_CSS}}", uplotCSS,
		"{{APP_CSS}}", appCSS,
		"{{UPLOT_JS}}", uplotJS,
		"{{APP_JS}}", appJS,
		"{{DATA}}", strings.TrimSpace(data.String()),
		"{{WRAPS}}", wraps,
		"{{PAUSE}}", pause,
		"{{PAUSE_NAV}}", pauseNav,
	).Replace(pageHTML)
	_, err = io.WriteString(w, page)
	return err
}
