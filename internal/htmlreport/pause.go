package htmlreport

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/report"
)

// maxPagePause is how many senders and priorities the Pause table lists;
// the analyzer keeps one per sender MAC and priority without a bound, so
// the page counts the rest on one line (the JSON report lists them all).
const maxPagePause = 128

// pauseTmpl is the Pause (PFC) section, in the text report's words
// (report/pause.go): a row per sender and priority.
var pauseTmpl = template.Must(template.New("pause").Parse(
	`<section id="pause"><h2>Pause (PFC)</h2>` +
		`<p class="hint">PFC and 802.3x PAUSE frames per sender and priority (802.3x: all); ` +
		`timed at <span id="pause-link-speed">{{.LinkSpeed}}</span> (--link-speed). ` +
		`The flow table gives each flow's priority and paused time; pause storms are findings.</p>` +
		`<div class="scroll"><table id="pause-table"><thead><tr>` +
		`<th>Sender</th><th>Kind</th><th class="num">Priority</th><th class="num">Frames</th>` +
		`<th class="num" title="frames with quanta &gt; 0">XOFF</th><th class="num" title="frames with quanta 0">XON</th>` +
		`<th class="num" title="pause times asked for, in quanta of 512 bit times">Quanta</th>` +
		`<th class="num" title="the union of the pause intervals">Paused</th><th class="num">Longest pause</th></tr></thead><tbody>` +
		`{{range .Rows}}<tr><td>{{.SrcMAC}}</td><td>{{.Kind}}</td><td class="num">{{.Priority}}</td><td class="num">{{.Frames}}</td>` +
		`<td class="num">{{.XOFFFrames}}</td><td class="num">{{.XONFrames}}</td><td class="num">{{.Quanta}}</td>` +
		`<td class="num">{{.Paused}}</td><td class="num">{{.Longest}}</td></tr>{{end}}</tbody></table></div>` +
		`{{if .More}}<p class="hint" id="pause-more">and {{.More}} more senders and priorities not listed (-o json: pause[])</p>{{end}}` +
		`{{if .Unlisted}}<p class="hint" id="pause-unlisted">more senders and priorities than the {{.Followed}} followed one by one: {{.Unlisted}} frames</p>{{end}}` +
		`</section>`))

// pauseView is what pauseTmpl shows.
type pauseView struct {
	LinkSpeed string
	Rows      []pauseRow
	More      int
	Followed  int    // rows of the report
	Unlisted  uint64 // pause frames of senders and priorities beyond them
}

type pauseRow struct {
	analyze.Pause
	Priority        string // "all" for 802.3x
	Paused, Longest string
}

// pauseHTML is the Pause (PFC) section and its link in the page's
// navigation; both "" when the capture holds no pause frame.
func pauseHTML(rep *analyze.Report) (section, nav string, err error) {
	if len(rep.Pause) == 0 {
		return "", "", nil
	}
	v := pauseView{LinkSpeed: report.HumanRate(&rep.Capture.LinkSpeedBps), Followed: len(rep.Pause), Unlisted: rep.Capture.PauseFramesUnlisted}
	for i, s := range rep.Pause {
		if i >= maxPagePause {
			v.More++
			continue
		}
		prio := "all"
		if s.Priority != nil {
			prio = fmt.Sprint(*s.Priority)
		}
		v.Rows = append(v.Rows, pauseRow{Pause: s, Priority: prio,
			Paused: report.HumanDuration(time.Duration(s.PausedNs)), Longest: report.HumanDuration(time.Duration(s.LongestPauseNs))})
	}
	var b strings.Builder
	if err := pauseTmpl.Execute(&b, &v); err != nil {
		return "", "", err
	}
	return b.String(), ` <a href="#pause">Pause (PFC)</a>`, nil
}
