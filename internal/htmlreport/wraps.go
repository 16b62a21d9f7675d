package htmlreport

import (
	"html/template"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/report"
)

// The page names at most maxPageChains chains of encapsulations and
// maxPageTunnels tunnels; the rest are summed on one line each (the JSON
// report lists them all: capture.encapsulations, capture.tunnels).
const (
	maxPageChains  = 16
	maxPageTunnels = 32
)

// wrapsTmpl is the capture summary's lines on how frames arrived
// encapsulated, in the text report's words (report/wraps.go).
var wrapsTmpl = template.Must(template.New("wraps").Funcs(template.FuncMap{"plural": report.Plural[uint64]}).Parse(
	`<dl class="summary" id="encapsulations">` +
		`<dt>Encapsulated</dt><dd><ul class="lines" id="encapsulation-chains">` +
		`{{range .Chains}}<li>{{plural .Frames "frame"}} in {{.Chain}}</li>{{end}}` +
		`{{if .MoreChainFrames}}<li>{{plural .MoreChainFrames "frame"}} in other chains</li>{{end}}</ul></dd>` +
		`{{if or .Tunnels .Unlisted}}<dt>Tunnels</dt><dd><ul class="lines" id="tunnels">` +
		`{{range .Tunnels}}<li>{{.Name}}: {{plural .Frames "frame"}}</li>{{end}}` +
		`{{if .More}}<li>{{plural .More "tunnel"}} more: {{plural .MoreFrames "frame"}}</li>{{end}}` +
		`{{if .Unlisted}}<li>more tunnels than the {{.Counted}} counted one by one: {{plural .Unlisted "frame"}}</li>{{end}}` +
		`</ul></dd>{{end}}</dl>`))

// wrapsView is what wrapsTmpl shows.
type wrapsView struct {
	Chains           []analyze.Encapsulation
	MoreChainFrames  uint64 // of the chains not shown, and those analyze did not list
	Tunnels          []tunnelLine
	More, MoreFrames uint64
	Counted          int
	Unlisted         uint64
}

type tunnelLine struct {
	Name   string
	Frames uint64
}

// wrapsHTML is the capture summary's encapsulations and tunnels; "" when
// no frame arrived encapsulated.
func wrapsHTML(c *analyze.Capture) (string, error) {
	if len(c.Encapsulations) == 0 && len(c.Tunnels) == 0 && c.TunnelFramesUnlisted == 0 && c.EncapsulationFramesUnlisted == 0 {
		return "", nil
	}
	v := wrapsView{Counted: len(c.Tunnels), Unlisted: c.TunnelFramesUnlisted, MoreChainFrames: c.EncapsulationFramesUnlisted}
	for i, e := range c.Encapsulations {
		if i >= maxPageChains {
			v.MoreChainFrames += e.Frames
			continue
		}
		v.Chains = append(v.Chains, e)
	}
	for i, t := range c.Tunnels {
		if i >= maxPageTunnels {
			v.More++
			v.MoreFrames += t.Frames
			continue
		}
		v.Tunnels = append(v.Tunnels, tunnelLine{Name: report.TunnelName(t), Frames: t.Frames})
	}
	var b strings.Builder
	err := wrapsTmpl.Execute(&b, &v)
	return b.String(), err
}
