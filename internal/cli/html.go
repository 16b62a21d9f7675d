package cli

import (
	"io"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/htmlreport"
	"github.com/roce-dissect/roce-dissect/points"
)

// htmlCollectors returns one point collector per file for --html, or nil
// collectors (which ignore packets) without it.
func (r *runner) htmlCollectors(n int) []*htmlreport.Collector {
	cols := make([]*htmlreport.Collector, n)
	if r.cfg.html != "" {
		for i := range cols {
			cols[i] = htmlreport.NewCollector(htmlreport.DefaultLimits)
		}
	}
	return cols
}

// writeHTML writes the --html page of the (filtered, merged) report to w,
// the files of capture points (pts, nil for none) on its clock.
func (r *runner) writeHTML(w io.Writer, files []string, rep *analyze.Report, pts *points.Report, cols []*htmlreport.Collector, pieces *analyze.Pieces) error {
	srcs := make([]htmlreport.Source, len(files))
	names := make([]string, len(files))
	for i, name := range files {
		srcs[i] = htmlreport.Source{Name: name, Collector: cols[i]}
		names[i] = displayName(name)
		for _, pf := range ptsFiles(pts) {
			if pf.File == names[i] {
				srcs[i].ClockOffset = time.Duration(pf.ClockOffsetNs)
			}
		}
	}
	if len(files) == 1 {
		srcs[0].Files = pieces // several files read as one: their frames named by file
	}
	return htmlreport.WritePoints(w, "roce-dissect: "+strings.Join(names, ", "), rep, pts, srcs)
}
