package cli

import (
	"fmt"
	"image/color"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// writePlot draws each flow's payload throughput over time, one line per
// flow, with PSN gaps (red crosses) and CNPs (orange triangles) marked on
// the time axis.
func writePlot(path string, rep *analyze.Report) error {
	p := plot.New()
	p.Title.Text = "RDMA throughput per flow"
	p.X.Label.Text = "time since first frame (s)"
	p.Y.Label.Text = "payload throughput (Gb/s)"
	p.Legend.Top = true
	if rep.Capture.FirstTime == nil {
		return fmt.Errorf("no frames to plot")
	}
	t0 := *rep.Capture.FirstTime
	i := 0
	for _, f := range rep.Flows {
		if len(f.Series) == 0 || f.Requests.Packets == 0 && f.Responses.ReadResponses == 0 {
			continue
		}
		line, err := plotter.NewLine(seriesPoints(&f, t0))
		if err != nil {
			return err
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i / 7)
		line.Width = vg.Points(1)
		p.Add(line)
		p.Legend.Add(f.ID().String(), line)
		i++
	}
	var gaps, cnps plotter.XYs
	for _, fd := range rep.Findings {
		switch fd.Kind {
		case analyze.KindPSNGap:
			gaps = append(gaps, plotter.XY{X: fd.Time.Sub(t0).Seconds()})
		case analyze.KindCNP:
			cnps = append(cnps, plotter.XY{X: fd.Time.Sub(t0).Seconds()})
		}
	}
	for _, m := range []struct {
		pts   plotter.XYs
		name  string
		shape draw.GlyphDrawer
		c     color.Color
	}{
		{gaps, "PSN gap", draw.CrossGlyph{}, color.RGBA{R: 220, A: 255}},
		{cnps, "CNP", draw.TriangleGlyph{}, color.RGBA{R: 255, G: 140, A: 255}},
	} {
		if len(m.pts) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(m.pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Shape = m.shape
		sc.GlyphStyle.Color = m.c
		sc.GlyphStyle.Radius = vg.Points(4)
		p.Add(sc)
		p.Legend.Add(m.name, sc)
	}
	if i == 0 {
		return fmt.Errorf("no data flow to plot")
	}
	format := "svg"
	if strings.HasSuffix(path, ".png") {
		format = "png"
	}
	wt, err := p.WriterTo(10*vg.Inch, 6*vg.Inch, format)
	if err != nil {
		return err
	}
	return saveTo(path, wt)
}

// seriesPoints returns a flow's throughput (Gb/s) at the start of each
// interval, seconds since t0. The report lists non-empty intervals only;
// the throughput of the empty ones between them is zero, so the line drops
// to zero across a pause instead of joining its two sides.
func seriesPoints(f *analyze.Flow, t0 time.Time) plotter.XYs {
	step := time.Duration(f.IntervalSeconds * float64(time.Second))
	pts := make(plotter.XYs, 0, len(f.Series))
	for j, s := range f.Series {
		if j > 0 && step > 0 {
			prev := f.Series[j-1].Start
			if gap := s.Start.Sub(prev); gap > step {
				pts = append(pts, plotter.XY{X: prev.Add(step).Sub(t0).Seconds()})
				if gap > 2*step {
					pts = append(pts, plotter.XY{X: s.Start.Add(-step).Sub(t0).Seconds()})
				}
			}
		}
		pts = append(pts, plotter.XY{X: s.Start.Sub(t0).Seconds(), Y: float64(s.PayloadBytes) * 8 / f.IntervalSeconds / 1e9})
	}
	return pts
}
