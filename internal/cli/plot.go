package cli

import (
	"cmp"
	"fmt"
	"image/color"
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
)

// The --plot view: each data flow's payload throughput over time as a
// step line (throughput is constant over an interval), the top flows by
// bytes in distinct colours and the rest summed as "others" (above the
// scale when higher); PSN gaps and CNPs marked on their flow's line. CM
// traffic (QP0/QP1) is not data and is left out.

// plotTopFlows is how many flows get a line of their own; plotMaxBuckets
// bounds the points of a line (a smaller --interval is widened to it).
const (
	plotTopFlows   = 8
	plotMaxBuckets = 20_000
)

// plotColours are distinguishable colours (Tableau 10 without its grey,
// kept for "others").
var plotColours = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

var othersColour = color.RGBA{0x7f, 0x7f, 0x7f, 0xff}

// plotLine is one line of the plot: bucket k covers [t0+k·iv, t0+(k+1)·iv).
type plotLine struct {
	name  string
	flows []int // indexes in the report's flows
	bytes uint64
	bps   []float64 // per bucket; NaN: omitted (see plotData.note)
}

// isOthers reports the line that sums the flows beyond the named ones.
func (l *plotLine) isOthers() bool { return strings.HasPrefix(l.name, "others (") }

// scale returns the highest rate of the named lines, which sets the
// plot's scale (the "others" line's when none is named), and that of the
// "others" line, whose line is then clipped at the top.
func (d *plotData) scale() (peak, others float64) {
	for _, l := range d.lines {
		for _, v := range l.bps {
			switch {
			case math.IsNaN(v):
			case l.isOthers():
				others = max(others, v)
			default:
				peak = max(peak, v)
			}
		}
	}
	if peak == 0 {
		peak = others
	}
	return peak, others
}

// plotMarker is a finding drawn on a line.
type plotMarker struct {
	kind analyze.Kind
	at   time.Duration // since t0
	line int           // index in plotData.lines, -1: on the time axis
}

// plotData is what the plot shows, computed from a report.
type plotData struct {
	t0      time.Time
	dur     time.Duration
	iv      time.Duration
	lines   []plotLine
	markers []plotMarker
	notes   []string
}

// niceDuration rounds d up to 1, 2 or 5 × 10ⁿ nanoseconds.
func niceDuration(d time.Duration) time.Duration {
	if d <= 1 {
		return 1
	}
	p := time.Duration(1)
	for p*10 <= d {
		p *= 10
	}
	for _, m := range []time.Duration{1, 2, 5, 10} {
		if m*p >= d {
			return m * p
		}
	}
	return 10 * p
}

// dataFlow says whether a flow is data to plot: not QP0/QP1 (CM, subnet
// management) and with requests or read responses.
func dataFlow(f *analyze.Flow) bool {
	return f.DestQP > 1 && len(f.Series) > 0 && (f.Requests.Packets > 0 || f.Responses.ReadResponses > 0)
}

// buildPlot computes the lines. interval is --interval, 0 when not given:
// the interval is then chosen from the capture's duration (about 80
// steps across it).
func buildPlot(rep *analyze.Report, interval time.Duration) (*plotData, error) {
	if rep.Capture.FirstTime == nil || rep.Capture.LastTime == nil {
		return nil, fmt.Errorf("no frames to plot")
	}
	d := &plotData{t0: *rep.Capture.FirstTime, dur: rep.Capture.LastTime.Sub(*rep.Capture.FirstTime)}
	var flows []int
	var finest time.Duration
	for i := range rep.Flows {
		f := &rep.Flows[i]
		if !dataFlow(f) {
			continue
		}
		flows = append(flows, i)
		finest = max(finest, time.Duration(math.Round(f.IntervalSeconds*1e9)))
	}
	if len(flows) == 0 {
		return nil, fmt.Errorf("no data flow to plot (only CM or management traffic)")
	}
	switch {
	case interval > 0:
		d.iv = interval
	default:
		d.iv = niceDuration(d.dur / 80)
	}
	if d.iv < finest {
		d.notes = append(d.notes, fmt.Sprintf("interval %s: the finest the analysis kept", plotDuration(finest)))
		d.iv = finest
	}
	if n := d.dur / d.iv; n > plotMaxBuckets {
		d.iv = niceDuration(d.dur / plotMaxBuckets)
		d.notes = append(d.notes, fmt.Sprintf("interval widened to %s (at most %d steps)", plotDuration(d.iv), plotMaxBuckets))
	}
	buckets := int(d.dur/d.iv) + 1
	// The last interval ends after the capture: its throughput is over
	// the part the capture covers; below a quarter of it, it is left out.
	lastCover := d.dur - time.Duration(buckets-1)*d.iv
	omitLast := buckets > 1 && lastCover < d.iv/4
	if omitLast {
		d.notes = append(d.notes, fmt.Sprintf("last %s interval left out: the capture covers %s of it", plotDuration(d.iv), plotDuration(lastCover)))
	} else if buckets > 1 && lastCover < d.iv {
		d.notes = append(d.notes, fmt.Sprintf("last interval scaled to the %s the capture covers", plotDuration(lastCover)))
	}

	slices.SortStableFunc(flows, func(a, b int) int { return cmp.Compare(rep.Flows[b].PayloadBytes, rep.Flows[a].PayloadBytes) })
	lineOf := map[int]int{} // flow index → line
	for k, fi := range flows {
		f := &rep.Flows[fi]
		if k < plotTopFlows || len(flows) == plotTopFlows+1 {
			lineOf[fi] = len(d.lines)
			d.lines = append(d.lines, plotLine{name: f.Name()})
		} else {
			if k == plotTopFlows {
				d.lines = append(d.lines, plotLine{})
			}
			lineOf[fi] = len(d.lines) - 1
		}
		l := &d.lines[lineOf[fi]]
		l.flows = append(l.flows, fi)
		l.bytes += f.PayloadBytes
	}
	if n := len(d.lines); n > plotTopFlows {
		d.lines[n-1].name = fmt.Sprintf("others (%d flows)", len(d.lines[n-1].flows))
	}
	for li := range d.lines {
		l := &d.lines[li]
		bytes := make([]uint64, buckets)
		for _, fi := range l.flows {
			for _, s := range rep.Flows[fi].Series {
				k := int(max(s.Start.Sub(d.t0), 0) / d.iv)
				bytes[min(k, buckets-1)] += s.PayloadBytes
			}
		}
		l.bps = make([]float64, buckets)
		for k, b := range bytes {
			w := d.iv
			if k == buckets-1 && buckets > 1 {
				w = lastCover
			}
			if k == buckets-1 && omitLast || w <= 0 {
				l.bps[k] = math.NaN()
				continue
			}
			l.bps[k] = float64(b) * 8 / w.Seconds()
		}
	}
	d.markers = markersOf(rep, d, lineOf)
	return d, nil
}

// markersOf places PSN gaps and CNPs on the line of their flow; a CNP's
// own flow (responder to requester) carries no data, so it goes on the
// line of the data flow it answers: the other direction of its
// connection, or of the same two hosts.
func markersOf(rep *analyze.Report, d *plotData, lineOf map[int]int) []plotMarker {
	byID := map[analyze.FlowID]int{}
	for i := range rep.Flows {
		byID[rep.Flows[i].ID()] = i
	}
	var out []plotMarker
	for _, fd := range rep.Findings {
		switch fd.Kind {
		case analyze.KindPSNGap, analyze.KindCaptureGap, analyze.KindNAK, analyze.KindCNP:
		default:
			continue
		}
		line := -1
		if fi, ok := byID[fd.Flow]; ok {
			if l, ok := lineOf[fi]; ok {
				line = l
			} else if l, ok := reverseLine(rep, fi, lineOf); ok {
				line = l
			}
		}
		out = append(out, plotMarker{kind: fd.Kind, at: fd.Time.Sub(d.t0), line: line})
	}
	return out
}

// reverseLine finds the plotted flow going the other way between the
// same hosts, in the same connection when it has one.
func reverseLine(rep *analyze.Report, fi int, lineOf map[int]int) (int, bool) {
	f := &rep.Flows[fi]
	best, found := 0, false
	for j, l := range lineOf {
		g := &rep.Flows[j]
		if g.Src != f.Dst || g.Dst != f.Src {
			continue
		}
		if f.Connection != nil && g.Connection != nil && *f.Connection == *g.Connection {
			return l, true
		}
		if !found {
			best, found = l, true
		}
	}
	return best, found
}

// plotDuration prints a duration with a unit that keeps it short ("20 µs").
func plotDuration(d time.Duration) string {
	u, name := time.Nanosecond, "ns"
	for _, c := range []struct {
		u    time.Duration
		name string
	}{{time.Microsecond, "µs"}, {time.Millisecond, "ms"}, {time.Second, "s"}} {
		if d >= c.u {
			u, name = c.u, c.name
		}
	}
	return fmt.Sprintf("%g %s", math.Round(float64(d)/float64(u)*1000)/1000, name)
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

// writePlot draws the plot of a report into path (.svg or .png).
func writePlot(path string, rep *analyze.Report, interval time.Duration) error {
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
	for _, m := range []struct {
		kind  analyze.Kind
		name  string
		shape draw.GlyphDrawer
		c     color.Color
	}{
		{analyze.KindPSNGap, "PSN gap (lost)", draw.CrossGlyph{}, color.RGBA{R: 200, A: 255}},
		{analyze.KindCaptureGap, "PSN gap (not captured)", draw.CrossGlyph{}, color.RGBA{R: 90, G: 90, B: 90, A: 255}},
		{analyze.KindNAK, "NAK (on the flow it answers)", draw.CircleGlyph{}, color.RGBA{R: 200, A: 255}},
		{analyze.KindCNP, "CNP (on the flow it slows)", draw.TriangleGlyph{}, color.RGBA{R: 230, G: 120, A: 255}},
	} {
		var pts plotter.XYs
		for _, mk := range d.markers {
			if mk.kind != m.kind {
				continue
			}
			y := 0.0
			if mk.line >= 0 && steps[mk.line] != nil {
				y = stepValue(steps[mk.line], x(mk.at))
			}
			pts = append(pts, plotter.XY{X: x(mk.at), Y: y})
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
		p.Add(sc)
		leg.Add(fmt.Sprintf("%s (%d)", m.name, len(pts)), sc)
	}

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
	return saveTo(path, c)
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

// plotInterval is the analyzer's series interval: --interval, or with
// --plot and no --interval a fine one (1 µs) that the analyzer widens by
// itself (at most 4096 intervals per flow), so that the plot can choose
// its interval from the capture's duration.
func (r *runner) plotInterval() time.Duration {
	if r.cfg.plot != "" && !r.cfg.intervalSet {
		return time.Microsecond
	}
	return r.cfg.interval
}
