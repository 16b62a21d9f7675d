package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/export"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// exporter returns the function that feeds a frame to a, and with
// --export also writes its packet row to the packets table of its file
// (the run's index-th, or index+i-th for the i-th piece of src); start
// is readSource's, which opens each file's table, and done returns the
// errors of writing them.
func (r *runner) exporter(index int, src *source, a *analyze.Analyzer, tap func(*analyze.Packet)) (feed func(*frame), start func(int, *capture.Reader) func(), done func() error) {
	prefetch := prefetcher(a)
	if r.cfg.export == "" {
		return func(f *frame) {
			if f.num%aheadEvery == 1 {
				prefetch(f)
			}
			p := a.Feed(f.ci, f.linkType, f.data)
			if tap != nil {
				tap(p)
			}
		}, nil, func() error { return nil }
	}
	// One packets table per file: the files of a source each have
	// theirs, with their frames numbered in the file.
	writers := make([]*export.PacketWriter, len(src.files))
	var errs []error
	start = func(i int, _ *capture.Reader) func() {
		w, err := export.NewPacketWriter(filepath.Join(r.exp.Dir(), export.PacketsFile(index+i, 0)), fileName(src.files[i]))
		if err != nil {
			errs = append(errs, fmt.Errorf("--export: %w", err))
			r.exportFailed.Store(true)
			return func() {}
		}
		writers[i] = w
		return func() {
			if err := w.Close(); err != nil {
				errs = append(errs, fmt.Errorf("--export: %w", err))
				r.exportFailed.Store(true)
			}
			writers[i] = nil
		}
	}
	feed = func(f *frame) {
		if f.num%aheadEvery == 1 {
			prefetch(f)
		}
		p := a.Feed(f.ci, f.linkType, f.data)
		if w := writers[f.file]; w != nil && r.exportSelects(p) {
			w.Add(p, f.num)
		}
		if tap != nil {
			tap(p)
		}
	}
	return feed, start, func() error { return errors.Join(errs...) }
}

// exportSelects reports whether --qp and --flow select p's row; the
// addresses' text is made only for --flow (String allocates, and this
// runs for every frame).
func (r *runner) exportSelects(p *analyze.Packet) bool {
	switch {
	case p.BTH == nil:
		return true
	case r.cfg.flow == nil:
		return r.selects("", "", p.BTH.DestQP)
	}
	return r.selects(p.Src.String(), p.Dst.String(), p.BTH.DestQP)
}

// exportNames names the capture of the export's tables (the files'
// names) and its file: the one file's name, "" for several (each finding
// then names its own).
func exportNames(files []string) (capture, file string) {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = fileName(f)
	}
	if len(names) == 1 {
		file = names[0]
	}
	return strings.Join(names, " "), file
}

// exportReport writes the flows, connections, findings and pause tables
// of the run's report, and the collectives tables of its NCCL traffic
// (res); it reports a failure on stderr and returns false.
func (r *runner) exportReport(files []string, rep *analyze.Report, res *nccl.Result) bool {
	capture, file := exportNames(files)
	if err := export.WriteReport(r.exp.Dir(), capture, file, rep, res); err != nil {
		fmt.Fprintf(r.stderr, "roce-dissect: --export %s: %v\n", r.cfg.export, err)
		r.exportFailed.Store(true)
		return false
	}
	r.exported = true
	return true
}

// streamExport writes the flows, connections, findings and pause tables
// of one file's report (-o parquet) as its flows are built, each flow's row
// written before the next flow is built: the same rows as exportReport.
func (r *runner) streamExport(res fileResult) error {
	capture, file := exportNames(res.exportFiles([]string{res.name}))
	rw, err := export.NewReportWriter(r.exp.Dir(), capture, file)
	if err != nil {
		r.exportFailed.Store(true)
		return fmt.Errorf("--export %s: %w", r.cfg.export, err)
	}
	s := res.stream
	rw.Head(s.Head())
	rw.NCCL(ncclResult([]fileResult{res}, nil))
	keep := r.keepFlows()
	var f analyze.Flow
	for r.nextFlow(s, keep, &f) {
		rw.Flow(&f)
		s.Reuse(&f)
	}
	findings := r.filterFindings(s.End().Findings, keep)
	for i := range findings {
		rw.Finding(&findings[i])
	}
	if err := rw.Close(); err != nil {
		r.exportFailed.Store(true)
		return fmt.Errorf("--export %s: %w", r.cfg.export, err)
	}
	r.exported = true
	return nil
}

// commitExport puts the export's tables in place when the run wrote them
// all and nothing withholds its outputs (withheld: interrupted, an input
// not opened), and otherwise removes them, leaving the last export as it
// was; it says so on stderr and returns false when it did not commit.
func (r *runner) commitExport(withheld string) bool {
	if withheld == "" && (!r.exported || r.exportFailed.Load()) {
		withheld = "its tables could not all be written"
	}
	if withheld != "" {
		r.exp.Abort()
		fmt.Fprintf(r.stderr, "roce-dissect: --export %s: nothing exported, as %s: the last export there is left as it was\n", displayName(r.cfg.export), withheld)
		return false
	}
	if err := r.exp.Commit(); err != nil {
		fmt.Fprintf(r.stderr, "roce-dissect: --export %s: %v\n", r.cfg.export, err)
		return false
	}
	return true
}
