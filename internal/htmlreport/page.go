package htmlreport

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"html"
	"io"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/points"
)

// The page's parts, embedded in the binary.
var (
	//go:embed assets/uplot/uPlot.iife.min.js
	uplotJS string
	//go:embed assets/uplot/uPlot.min.css
	uplotCSS string
	//go:embed assets/report-lib.js
	libJS string
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
	// FlowsTotal counts the report's flows, FlowsMore those the page
	// does not list (Report.Flows holds the listed ones), Charts those
	// it charts; Bounds are the page's caps (select.go).
	FlowsTotal int        `json:"flows_total"`
	FlowsMore  flowsMore  `json:"flows_more"`
	Charts     int        `json:"charts"`
	Bounds     pageBounds `json:"bounds"`
	// ConnectionsTotal counts the report's connections (Report.Connections
	// holds the first MaxConnectionRows).
	ConnectionsTotal int `json:"connections_total"`
	// FindingCounts counts all the report's findings by severity;
	// FindingsMore those the page does not list (Report.Findings holds the
	// listed ones: pickFindings).
	FindingCounts findingCounts `json:"finding_counts"`
	FindingsMore  int           `json:"findings_more"`
}

// pageBounds are MaxFlowRows, MaxCharts and MaxChartPoints, for the
// page's notes.
type pageBounds struct {
	Rows   int `json:"rows"`
	Charts int `json:"charts"`
	Points int `json:"points"`
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

// addFiles lists the page's files, those of a source of several files
// read as one (Source.Files) each, and takes the sources' limits; it
// returns each file's index by name.
func (d *pageData) addFiles(srcs []Source) map[string]int {
	fileIdx := map[string]int{}
	for _, s := range srcs {
		names := []string{s.Name}
		if s.Files != nil && len(s.Files.Names()) > 1 {
			names = s.Files.Names()
		}
		for _, name := range names {
			fileIdx[name] = len(d.Files)
			d.Files = append(d.Files, name)
		}
		if s.Collector != nil {
			d.Limits = s.Collector.lim
		}
	}
	return fileIdx
}

// Write renders rep as one self-contained HTML page. srcs are the capture
// files with the Collectors fed with their packets, in the order their
// findings name them; title heads the page.
func Write(w io.Writer, title string, rep *analyze.Report, srcs []Source) error {
	return WritePoints(w, title, rep, nil, srcs)
}

// WritePoints is Write of a report of capture points of one traffic (cps;
// nil for none, as Write): the page has their section, as the text
// report, and draws each flow's packets once, as the first point that saw
// the flow captured them (its source's ClockOffset puts them on the
// report's clock).
func WritePoints(w io.Writer, title string, rep *analyze.Report, cps *points.Report, srcs []Source) error {
	var t0 int64
	if rep.Capture.FirstTime != nil {
		t0 = rep.Capture.FirstTime.UnixNano()
	}
	d := pageData{Title: title, Report: rep, Limits: DefaultLimits, FlowsTotal: len(rep.Flows),
		Bounds: pageBounds{Rows: MaxFlowRows, Charts: MaxCharts, Points: MaxChartPoints}}
	fileIdx := d.addFiles(srcs)
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
			if fd.Severity != analyze.SeverityError {
				b = fkGapUnknown
			}
		default:
			continue
		}
		kinds[fileFrame{fileIdx[fd.File], fd.Frame}] |= b // a single file's findings name no file: index 0
	}
	byName := gather(srcs, fileIdx, cps != nil)
	pts := make([]*merged, len(rep.Flows))
	all := make(map[analyze.FlowID]int, len(rep.Flows))
	for i := range rep.Flows {
		f := &rep.Flows[i]
		all[f.ID()] = i
		pts[i] = byName[f.ID().String()]
	}
	perFlow := make([]int, len(rep.Flows))
	for _, fd := range rep.Findings {
		if i, ok := all[fd.Flow]; ok {
			perFlow[i]++
		}
	}
	peer := pairFlows(rep, pts)
	// The page lists and charts a bounded number of flows (select.go);
	// flowIdx indexes the listed ones, as the page's data does.
	list, charted := pickFlows(rep, perFlow, peer, pts, MaxFlowRows, MaxCharts)
	at := make([]int, len(rep.Flows))
	for i := range at {
		at[i] = -1
	}
	for k, i := range list {
		at[i] = k
	}
	remap := func(i int) int {
		if i < 0 {
			return -1
		}
		return at[i]
	}
	for _, c := range charted {
		if c {
			d.Charts++
		}
	}
	budget := chartBudget(d.Charts)
	flowIdx := make(map[analyze.FlowID]int, len(list))
	listed := make([]analyze.Flow, 0, len(list))
	for k, i := range list {
		f := &rep.Flows[i]
		flowIdx[f.ID()] = k
		fe := flowExtra{
			Name:       f.ID().String(),
			Peer:       remap(peer[i]),
			DurationNs: f.LastTime.Sub(f.FirstTime).Nanoseconds(),
			Tput:       tputData{TNs: []int64{}, PayloadBps: []float64{}, WireBps: []float64{}},
		}
		if charted[i] {
			fe.Chart = buildChart(rep, i, peer, pts, kinds, fileIdx, t0, budget)
			if fe.Chart != nil {
				fe.Chart.DataFlow, fe.Chart.RespFlow = remap(fe.Chart.DataFlow), remap(fe.Chart.RespFlow)
			}
			fe.Tput = buildTput(f, pts[i], t0)
		}
		d.Flows = append(d.Flows, fe)
		listed = append(listed, pageFlow(*f))
	}
	for i := range rep.Flows {
		if at[i] < 0 {
			d.FlowsMore.Flows++
			d.FlowsMore.Packets += rep.Flows[i].Packets
			d.FlowsMore.WireBytes += rep.Flows[i].WireBytes
		}
	}
	pick, counts := pickFindings(rep.Findings)
	d.FindingCounts, d.FindingsMore = counts, len(rep.Findings)-len(pick)
	listedFindings := make([]analyze.Finding, 0, len(pick))
	for _, k := range pick {
		fd := &rep.Findings[k]
		fe := findingExtra{Flow: -1, TNs: fd.Time.UnixNano() - t0}
		if i, ok := flowIdx[fd.Flow]; ok {
			fe.Flow = i
		}
		d.Findings = append(d.Findings, fe)
		listedFindings = append(listedFindings, *fd)
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
	ptsSection, ptsNav, err := pointsHTML(cps)
	if err != nil {
		return err
	}
	// The script renders neither the tunnels nor the pause table: the
	// page's data leaves them out rather than carry them twice.
	shown := *rep
	shown.Capture.Encapsulations, shown.Capture.Tunnels, shown.Pause = nil, nil, nil
	shown.Flows, shown.Findings = listed, listedFindings
	d.ConnectionsTotal = len(rep.Connections)
	shown.Connections = rep.Connections[:min(len(rep.Connections), MaxConnectionRows)]
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
		"{{LIB_JS}}", libJS,
		"{{APP_JS}}", appJS,
		"{{DATA}}", strings.TrimSpace(data.String()),
		"{{WRAPS}}", wraps,
		"{{PAUSE}}", pause,
		"{{PAUSE_NAV}}", pauseNav,
		"{{POINTS}}", ptsSection,
		"{{POINTS_NAV}}", ptsNav,
	).Replace(pageHTML)
	_, err = io.WriteString(w, page)
	return err
}
