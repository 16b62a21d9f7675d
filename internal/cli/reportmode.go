package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/htmlreport"
	"github.com/roce-dissect/roce-dissect/internal/outfile"
	"github.com/roce-dissect/roce-dissect/nccl"
	"github.com/roce-dissect/roce-dissect/points"
	"github.com/roce-dissect/roce-dissect/report"
)

// reportMode analyzes the files and prints the report: the pieces of one
// capture as one stream (source.go), capture points each on its own and
// matched, unrelated files merged by time as one stream (merge.go), and
// files that share transmissions without being points, or several with
// one read once among them, each on its own, in parallel, their reports
// merged.
func (r *runner) reportMode(ctx context.Context, files []string) int {
	files, status := r.openable(files)
	if len(files) == 0 {
		return status
	}
	return max(status, r.reportFiles(ctx, files))
}

// openable returns the files that open as captures, and ExitDamaged
// after naming each that does not: a file that cannot be opened has no
// report (not an empty one), and the others are reported as if given
// alone. Standard input, named pipes and devices are not tried (their
// frames would be read): they are read once, in their turn.
func (r *runner) openable(files []string) ([]string, int) {
	if len(files) < 2 {
		return files, ExitOK
	}
	status := ExitOK
	var ok []string
	for _, name := range files {
		if !readOnce(name) {
			cr, _, err := r.openWith(name, openSmall)
			if err != nil {
				fmt.Fprintf(r.stderr, "roce-dissect: %s: %v\n", displayName(name), err)
				status = ExitDamaged
				r.inputMissing = true
				continue
			}
			cr.Close()
		}
		ok = append(ok, name)
	}
	return ok, status
}

// reportFiles is reportMode of files that open.
func (r *runner) reportFiles(ctx context.Context, files []string) int {
	src, why := r.piecesOf(files)
	if src != nil {
		res, collectors := r.analyzeSource(ctx, src)
		var np *notPiecesError
		if !errors.As(res.err, &np) {
			return r.writeReports(ctx, []string{files[0]}, []fileResult{res}, nil, collectors)
		}
		why = np.Error()
	}
	r.notPieces = why
	if src := mergedOf(files); src != nil && why != whyPoints && why != whyApart && len(r.cfg.clockOffsets) == 0 {
		// Their first frames do not say they are capture points: their
		// whole samples do, else they are merged by time.
		switch why = r.wholeSamples(ctx, files); {
		case ctx.Err() != nil: // interrupted before any report: say so
			fmt.Fprintf(r.stderr, "roce-dissect: interrupted while sampling the files to tell capture points: no report\n")
			return ExitDamaged
		case why == "":
			res, collectors := r.analyzeSource(ctx, src)
			return r.writeReports(ctx, []string{files[0]}, []fileResult{res}, nil, collectors)
		}
		r.notPieces = why
	}
	if (why == whyPoints || why == whyPointsWhole) && len(files) > points.MaxFiles {
		// Matched, they would cost every file a comparison with every
		// other; merged, they would count each transmission once per file.
		fmt.Fprintf(r.stderr, "roce-dissect: the %d files are capture points of the same traffic (%s), and at most %d points are matched: give at most %d of them (run 'roce-dissect --help' for the flags and examples)\n", len(files), why, points.MaxFiles, points.MaxFiles)
		return ExitUsage
	}
	results, samplers, collectors := r.analyzeAll(ctx, files, r.jobs())
	if len(files) > 1 && r.jobs() > 1 && ctx.Err() == nil && r.budget.Refused() {
		// The files raced for the flows (or connections) of --max-flows:
		// which got them depended on their speed. Again, one after
		// another, so that the first files get them, as with -j 1.
		results, samplers, collectors = r.analyzeAll(ctx, files, 1)
	}
	return r.writeReports(ctx, files, results, samplers, collectors)
}

// analyzeSource analyzes the files of one capture as one stream (the
// pieces of a rotation, or files merged by time), with fresh budgets, on
// the cores -j allows, and names the files read in the report
// (Capture.Files, FilesMerged).
func (r *runner) analyzeSource(ctx context.Context, src *source) (fileResult, []*htmlreport.Collector) {
	r.progress = startProgress(r.cfg.progress, r.stderr)
	r.budget = analyze.NewBudget(r.cfg.maxFlows, r.cfg.maxConns)
	collectors := r.htmlCollectors(1)
	tr := r.traceCollectors([]string{src.name()})[0]
	var tap func(*analyze.Packet)
	switch col := collectors[0]; {
	case col != nil && tr != nil:
		tap = func(p *analyze.Packet) { col.Add(p); tr.Add(p) }
	case col != nil:
		tap = col.Add
	case tr != nil:
		tap = tr.Add
	}
	res := r.analyzeFile(ctx, 0, src, false, make(chan struct{}, 1), tap)
	r.progress.stop()
	if c := res.capture(); c != nil {
		c.Files, c.FilesMerged = src.captureFiles(), src.merged
	}
	return res, collectors
}

// writeReports prints the reports of the files analyzed (results, in the
// order of files), merged or matched as capture points (samplers), and
// writes the other outputs asked for.
func (r *runner) writeReports(ctx context.Context, files []string, results []fileResult, samplers []*points.Sampler, collectors []*htmlreport.Collector) int {
	status := ExitOK
	for i := range results {
		results[i].markInterrupted()
	}
	for _, res := range results {
		if res.err != nil {
			if res.src != nil && res.src.pieces != nil {
				fmt.Fprintf(r.stderr, "roce-dissect: %v\n", res.err) // each piece's error names it
			} else {
				fmt.Fprintf(r.stderr, "roce-dissect: %s: %v\n", displayName(res.name), res.err)
			}
			status = ExitDamaged
		}
	}
	// A file that could not be opened (missing, a directory, not a
	// capture) has no report, not an empty one.
	results = slices.DeleteFunc(results, func(res fileResult) bool {
		if isOpenError(res.err) {
			r.inputMissing = true
			return true
		}
		return false
	})
	if len(results) == 0 {
		return ExitDamaged
	}
	if len(results) < len(files) {
		files = nil
		for _, res := range results {
			files = append(files, res.name)
		}
		samplers = nil
	}
	if results[0].stream != nil { // one file, default views: written while built
		return r.streamReport(results[0], status)
	}
	merged, pts, status := r.combine(ctx, files, results, samplers, status)
	return r.writeOutputs(files, results, merged, pts, collectors, status, r.withheld(ctx))
}

// withheld says why the run's output files (--html, --plot, --trace,
// --export) must not replace the last run's, "" when they may: the run
// was interrupted, or an input could not be opened, and the report
// covers only part of what was asked for. A damaged input's report is
// that of the capture as it is, and is written.
func (r *runner) withheld(ctx context.Context) string {
	switch {
	case ctx.Err() != nil:
		return "the run was interrupted"
	case r.inputMissing:
		return "an input could not be opened"
	}
	return ""
}

// combine merges the reports of the files analyzed each on its own, or
// matches them as capture points (samplers), and returns the report of
// them all, the points' report (nil when none) and the exit status.
func (r *runner) combine(ctx context.Context, files []string, results []fileResult, samplers []*points.Sampler, status int) (*analyze.Report, *points.Report, int) {
	merged := results[0].report
	if len(results) > 1 {
		merged = &analyze.Report{Connections: []analyze.Connection{}, Flows: []analyze.Flow{}, Findings: []analyze.Finding{}}
		for _, res := range results {
			if err := merged.Merge(res.report); err != nil {
				fmt.Fprintf(r.stderr, "roce-dissect: %s: %v\n", displayName(res.name), err)
				status = ExitDamaged
			}
		}
	}
	var pts *points.Report
	if samplers != nil && status == ExitOK {
		reports := make([]*analyze.Report, len(results))
		for i := range results {
			reports[i] = results[i].report
		}
		if m, p, err := r.capturePoints(ctx, files, samplers, reports); err != nil && ctx.Err() != nil {
			fmt.Fprintf(r.stderr, "roce-dissect: capture points: interrupted while matching them: the report merges the files' own reports, unmatched\n")
			status = ExitDamaged
		} else if err != nil {
			fmt.Fprintf(r.stderr, "roce-dissect: capture points: %v\n", err)
			status = ExitDamaged
		} else if p != nil {
			merged, pts = m, p
		}
	}
	return merged, pts, status
}

// writeOutputs writes the outputs asked for of the report of the files
// (merged; results, each file's) and returns the exit status.
func (r *runner) writeOutputs(files []string, results []fileResult, merged *analyze.Report, pts *points.Report, collectors []*htmlreport.Collector, status int, withheld string) int {
	for i := range results {
		results[i].report = r.filter(results[i].report)
	}
	merged = r.filter(merged)
	var err error
	if r.cfg.export != "" && !r.exportReport(results[0].exportFiles(files), merged, ncclResult(results, pts)) {
		status = ExitDamaged
	}
	switch r.cfg.output {
	case "parquet": // --export only
	case "json":
		d := report.ReportDocument(merged, pts)
		d.NCCL = func() *nccl.Result { return ncclResult(results, pts) }
		d.Hosts = func() *report.Hosts { return hostsOf(results, merged) }
		err = report.WriteJSONDocument(r.stdout, d)
	case "csv":
		err = report.WriteFlowsCSV(r.stdout, merged)
	default:
		r.writeTexts(files, results, merged, pts)
	}
	if err != nil {
		r.outputError(err)
		status = ExitDamaged
	}
	// Each file is attempted, whichever failed before it, and each
	// failure said once: a file not written keeps the last run's.
	files = results[0].htmlFiles(files)
	var iv time.Duration // the plot's interval: its own unless set
	if r.cfg.intervalSet {
		iv = r.cfg.interval
	}
	for _, out := range []struct {
		flag, path string
		write      func(io.Writer) error
	}{
		{"--plot", r.cfg.plot, func(w io.Writer) error { return writePlot(w, r.cfg.plot, merged, iv) }},
		{"--html", r.cfg.html, func(w io.Writer) error { return r.writeHTML(w, files, merged, pts, collectors, results[0].pieces()) }},
		{"--trace", r.cfg.trace, func(w io.Writer) error {
			return r.writeTrace(w, merged, ncclResult(results, pts), pts, results[0].pieces())
		}},
	} {
		if out.path == "" {
			continue
		}
		if withheld != "" {
			fmt.Fprintf(r.stderr, "roce-dissect: %s %s: not written, as %s: the last one there is left as it was\n", out.flag, displayName(out.path), withheld)
			status = ExitDamaged
			continue
		}
		if err := outfile.Write(out.path, out.write); err != nil {
			fmt.Fprintf(r.stderr, "roce-dissect: %s %s: %v\n", out.flag, displayName(out.path), err)
			status = ExitDamaged
		}
	}
	return status
}

// writeTexts writes the text report: of one capture, or each file's
// report, then that of them all.
func (r *runner) writeTexts(files []string, results []fileResult, merged *analyze.Report, pts *points.Report) {
	if len(results) == 1 {
		r.writeText(report.TextOptions{Title: results[0].title(), ReadErr: errText(results[0].err), Notes: r.mergedNotes(results[0]), NCCL: ncclResult(results, pts), Hosts: hostsOf(results, merged)}, merged)
		return
	}
	// One line per file under the report of them all, not a report each.
	failed := 0
	inputs := make([]report.Input, len(results))
	for i, res := range results {
		inputs[i] = report.Input{File: fileName(res.name), Capture: res.report.Capture, Err: errText(res.err)}
		if res.err != nil {
			failed++
		}
	}
	note := ""
	if failed > 0 {
		note = fmt.Sprintf("%d of %d files had errors (under their names)", failed, len(files))
	}
	o := report.TextOptions{Title: fmt.Sprintf("all %d files", len(files)), ReadErr: note, Points: pts, Inputs: inputs, NCCL: ncclResult(results, pts), Hosts: hostsOf(results, merged)}
	switch {
	case pts != nil:
		o.Notes = []string{"matched as capture points of one traffic: " + r.notPieces}
	case r.notPieces != "":
		o.Notes = []string{"analyzed each on its own, not as the pieces of one capture: " + r.notPieces}
	}
	if o.Notes != nil {
		for _, why := range r.apart {
			o.Notes = append(o.Notes, "not capture points of one traffic: "+why)
		}
	}
	r.writeText(o, merged)
}

// mergedNotes are the text report's notes on a capture of files merged by
// time: why they were not read one after another, and why those that
// share transmissions are not capture points of one traffic.
func (r *runner) mergedNotes(res fileResult) []string {
	if res.src == nil || !res.src.merged {
		return nil
	}
	notes := []string{"not read one after another as the pieces of one capture: " + r.notPieces}
	for _, why := range r.apart {
		notes = append(notes, "not capture points of one traffic: "+why)
	}
	return notes
}
