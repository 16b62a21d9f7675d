package cli

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/report"
)

// Drawing the --plot view (plot.go computes what it shows): the lines
// and markers on a gonum plot, the axes' units, the legend and notes,
// written as SVG or PNG.

// plotColours are distinguishable colours (Tableau 10 without its grey,
// kept for "others").
var plotColours = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

var othersColour = color.RGBA{0x7f, 0x7f, 0x7f, 0xff}

// plotMarks are the markers' glyphs, colours and legend words: PSNs lost
// in the network red, those the capture missed grey (no problem of the
// network), those of unknown fate amber (the colours of the findings'
// severities, error and warning, and of the HTML chart).
var plotMarks = []struct {
	kind  markKind
	name  string
	shape draw.GlyphDrawer
	c     color.Color
}{
	{markLost, "PSNs lost in the network", draw.CrossGlyph{}, color.RGBA{R: 200, A: 255}},
	{markUnknown, "PSNs missing, fate unknown", draw.CrossGlyph{}, color.RGBA{R: 0xc8, G: 0x8a, A: 255}},
	{markNotCaptured, "PSNs not captured", draw.CrossGlyph{}, color.RGBA{R: 90, G: 90, B: 90, A: 255}},
	{markNAK, "NAK (on the flow it answers)", draw.RingGlyph{}, color.RGBA{R: 200, A: 255}},
	{markCNP, "CNP (on the flow it slows)", draw.TriangleGlyph{}, color.RGBA{R: 230, G: 120, A: 255}},
}

// markLegend is a marker's legend entry: its name and count, for jumps
// over PSNs "PSNs not captured: 12 gaps, 5860 PSNs".
func markLegend(name string, n int, psns uint64, gaps bool) string {
	if !gaps {
		return fmt.Sprintf("%s (%d)", name, n)
	}
	return fmt.Sprintf("%s: %s, %s", name, report.Plural(uint64(n), "gap"), report.Plural(psns, "PSN"))
}

// timeUnit picks ns, µs, ms or s for an axis spanning d.
func timeUnit(d time.Duration) (time.Duration, string) {
	switch {
	case d < 2*time.Microsecond:
		return time.Nanosecond, "ns"
	case d < 2*time.Millisecond:
		return time.Microsecond, "µs"
	case d < 2*time.Second:
		return time.Millisecond, "ms"
	}
	return time.Second, "s"
}

// rateUnit picks b/s, kb/s, Mb/s, Gb/s or Tb/s for a peak rate.
func rateUnit(peak float64) (float64, string) {
	units := []string{"b/s", "kb/s", "Mb/s", "Gb/s", "Tb/s"}
	scale := 1.0
	for _, u := range units[:len(units)-1] {
		if peak < scale*1000 {
			return scale, u
		}
		scale *= 1000
	}
	return scale, units[len(units)-1]
}

// writePlot draws the plot of a report to w, as PNG when path (the file
// w writes) ends in .png, else as SVG.
func writePlot(w io.Writer, path string, rep *analyze.Report, interval time.Duration) error {
	d, err := buildPlot(rep, interval)
	if err != nil {
		return err
	}
	tu, tname := timeUnit(d.dur + d.iv)
	peak, others := d.scale()
	ru, rname := rateUnit(peak)
	if others > peak { // else the summed others flatten the named flows into a band
		l := &d.lines[len(d.lines)-1]
		l.name += fmt.Sprintf(", up to %.3g %s: above the scale", others/ru, rname)
	}

	p := plot.New()
	p.Title.Text = fmt.Sprintf("RDMA payload throughput per flow, %s intervals", plotDuration(d.iv))
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = fmt.Sprintf("time since the first frame (%s)", tname)
	p.Y.Label.Text = fmt.Sprintf("payload throughput (%s)", rname)
	p.Y.Min = 0
	p.Y.Max = niceCeil(peak / ru * 1.08) // room above the highest step and its markers
	p.X.Min = 0
	p.Add(plotter.NewGrid())
	leg := plot.NewLegend()
	leg.Top = true
	leg.Left = true
	leg.TextStyle.Font.Size = vg.Points(9)
	leg.Padding = vg.Points(3)
	x := func(t time.Duration) float64 { return float64(t) / float64(tu) }
	steps := make([]plotter.XYs, len(d.lines))
	for li, l := range d.lines {
		var pts plotter.XYs
		for k, v := range l.bps {
			if math.IsNaN(v) {
				continue
			}
			pts = append(pts, plotter.XY{X: x(time.Duration(k) * d.iv), Y: v / ru})
		}
		if len(pts) == 0 {
			continue
		}
		// The last step ends where its interval (or the capture) ends.
		end := min(time.Duration(len(pts))*d.iv, max(d.dur, d.iv))
		pts = append(pts, plotter.XY{X: x(end), Y: pts[len(pts)-1].Y})
		steps[li] = pts
		line, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		line.StepStyle = plotter.PostStep
		line.Width = vg.Points(1.5)
		line.Color = othersColour
		if li < len(plotColours) && !l.isOthers() {
			line.Color = plotColours[li]
		}
		p.Add(line)
		leg.Add(l.name, line)
	}
	var scatters []plot.Plotter
	for _, m := range plotMarks {
		var pts plotter.XYs
		var psns uint64
		for _, mk := range d.markers {
			if mk.kind != m.kind {
				continue
			}
			y := 0.0
			if mk.line >= 0 && steps[mk.line] != nil {
				y = stepValue(steps[mk.line], x(mk.at))
			}
			pts = append(pts, plotter.XY{X: x(mk.at), Y: y})
			psns += mk.psns
		}
		if len(pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Shape = m.shape
		sc.GlyphStyle.Color = m.c
		sc.GlyphStyle.Radius = vg.Points(4)
		scatters = append(scatters, sc)
		leg.Add(markLegend(m.name, len(pts), psns, m.kind <= markNotCaptured), sc)
	}
	// The gaps' crosses over the NAKs' dots, which sit at the same time.
	slices.Reverse(scatters)
	p.Add(scatters...)

	const width, height, legendWidth = 12 * vg.Inch, 6 * vg.Inch, 3.6 * vg.Inch
	var c vg.CanvasWriterTo
	if strings.HasSuffix(path, ".png") {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(110))}
	} else {
		c = vgsvg.New(width, height)
	}
	dc := draw.New(c)
	p.Draw(draw.Crop(dc, vg.Points(4), -legendWidth, vg.Points(4), -vg.Points(6)))
	legArea := draw.Crop(dc, width-legendWidth+vg.Points(6), 0, 0, -vg.Points(30))
	leg.Draw(legArea)
	if len(d.notes) > 0 {
		sty := text.Style{Color: color.Gray{Y: 60}, Font: font.From(leg.TextStyle.Font, vg.Points(8)), Handler: leg.TextStyle.Handler}
		y := vg.Points(12) + vg.Length(len(d.notes)-1)*vg.Points(11)
		for _, n := range d.notes {
			dc.FillText(sty, vg.Point{X: width - legendWidth + vg.Points(6), Y: y}, n)
			y -= vg.Points(11)
		}
	}
	_, err = c.WriteTo(w)
	return err
}

// niceCeil rounds v up to a round axis end (1, 1.2, 1.5, 2, 2.5, 3, 4, 5,
// 6 or 8 × 10ⁿ).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10} {
		if m*p >= v*(1-1e-12) {
			return m * p
		}
	}
	return 10 * p
}

// stepValue is the value of a post-step line at x.
func stepValue(pts plotter.XYs, x float64) float64 {
	v := 0.0
	for _, p := range pts {
		if p.X > x {
			break
		}
		v = p.Y
	}
	return v
}
