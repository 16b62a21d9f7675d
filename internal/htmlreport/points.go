package htmlreport

import (
	"html/template"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/points"
	"github.com/roce-dissect/roce-dissect/report"
)

// maxPageLinks bounds the rows of the capture points' table (a flow per
// pair of consecutive points); the rest are counted (-o json: points.links).
const maxPageLinks = 1000

// pointsTmpl is the capture points section, in the text report's words
// (report/points.go): each file's clock, a row per flow and pair of
// points, the PSNs lost or corrupted between them.
var pointsTmpl = template.Must(template.New("points").Parse(
	`<section id="points"><h2>Capture points</h2>` +
		`<p class="hint">The files are captures of the same traffic at several points, put on the first file's clock; ` +
		`the report counts each transmission once, at the first point that saw it, and the charts draw each flow's packets once.</p>` +
		`<ol id="points-files">{{range .Files}}<li>{{.File}}: {{.Clock}}</li>{{end}}</ol>` +
		`{{if .Links}}<div class="scroll"><table id="points-table"><thead><tr>` +
		`<th>Flow</th><th>From → to</th><th class="num">Matched</th>` +
		`<th class="num" title="seen upstream, never downstream, and not acknowledged: lost between the points">Lost</th>` +
		`<th class="num" title="absent downstream but acknowledged by the receiver: the downstream capture missed them">Not captured</th>` +
		`<th class="num">Corrupted</th><th class="num">Reordered</th>` +
		`<th class="num">Delay min</th><th class="num">Median</th><th class="num">P99</th><th class="num">Max</th></tr></thead><tbody>` +
		`{{range .Links}}<tr><td>{{.Flow}}</td><td>{{.From}} → {{.To}}</td><td class="num">{{.Matched}}</td>` +
		`<td class="num{{if .Lost}} bad{{end}}">{{.Lost}}</td><td class="num">{{.NotCaptured}}</td>` +
		`<td class="num{{if .Corrupted}} bad{{end}}">{{.Corrupted}}</td><td class="num">{{.Reordered}}</td>` +
		`<td class="num">{{.Min}}</td><td class="num">{{.Median}}</td><td class="num">{{.P99}}</td><td class="num">{{.Max}}</td></tr>{{end}}` +
		`</tbody></table></div>` +
		`{{if .More}}<p class="hint" id="points-more">and {{.More}} more flows between points not listed (-o json: points.links)</p>{{end}}` +
		`{{if .Losses}}<ul class="lines" id="points-losses">{{range .Losses}}<li{{if .Bad}} class="bad"{{end}}>{{.Text}}</li>{{end}}</ul>{{end}}` +
		`{{else}}<p class="hint">No flow seen at two points.</p>{{end}}</section>`))

// pointsView is what pointsTmpl shows.
type pointsView struct {
	Files  []pointFile
	Links  []pointLink
	More   int
	Losses []report.LossLine
}

type pointFile struct{ File, Clock string }

type pointLink struct {
	points.Link
	Flow                  string
	Min, Median, P99, Max string
}

// pointsHTML is the capture points section and its link in the page's
// navigation; both "" without capture points (pts nil).
func pointsHTML(pts *points.Report) (section, nav string, err error) {
	if pts == nil {
		return "", "", nil
	}
	var v pointsView
	for _, f := range pts.Files {
		v.Files = append(v.Files, pointFile{File: f.File, Clock: report.PointClock(f)})
	}
	dur := func(ns int64) string { return time.Duration(ns).String() }
	for i := range pts.Links {
		l := &pts.Links[i]
		if i >= maxPageLinks {
			v.More++
			continue
		}
		flow := analyze.FlowID{Src: l.Src, Dst: l.Dst, DestQP: l.DestQP}.String()
		d := l.OneWayDelayNs
		v.Links = append(v.Links, pointLink{Link: *l, Flow: flow, Min: dur(d.Min), Median: dur(d.Median), P99: dur(d.P99), Max: dur(d.Max)})
		v.Losses = append(v.Losses, report.LinkLosses(l)...)
	}
	var b strings.Builder
	if err := pointsTmpl.Execute(&b, &v); err != nil {
		return "", "", err
	}
	return b.String(), ` <a href="#points">Capture points</a>`, nil
}
