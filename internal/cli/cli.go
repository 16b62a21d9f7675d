// Package cli is the roce-dissect command: flags, opening captures,
// running the analyzer and rendering its report as text, JSON, CSV or a
// plot. It holds no protocol logic; cmd/roce-dissect only calls Run.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/mattn/go-isatty"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/export"
	"github.com/roce-dissect/roce-dissect/internal/filename"
	"github.com/roce-dissect/roce-dissect/internal/htmlreport"
	"github.com/roce-dissect/roce-dissect/internal/trace"
	"github.com/roce-dissect/roce-dissect/points"
	"github.com/roce-dissect/roce-dissect/report"
)

// Exit statuses.
const (
	ExitOK      = 0
	ExitDamaged = 1
	ExitUsage   = 2
)

// Run runs roce-dissect with the given arguments (without the program
// name) and returns the exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return RunWithStdin(ctx, args, os.Stdin, stdout, stderr)
}

// RunWithStdin is Run reading "-" from stdin.
func RunWithStdin(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, files, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		printUsage(stdout)
		return ExitOK
	}
	if errors.Is(err, errVersion) {
		fmt.Fprintln(stdout, version())
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "roce-dissect: %s (run 'roce-dissect --help' for the flags and examples)\n", strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		return ExitUsage
	}
	if a, b, same := sameCapture(files); same {
		fmt.Fprintf(stderr, "roce-dissect: %s and %s hold the same capture (the same frames): give each capture once (run 'roce-dissect --help' for the flags and examples)\n", displayName(a), displayName(b))
		return ExitUsage
	}
	out := newOutput(stdout)
	out.perFrame = isTerminal(stdout) || slices.Contains(files, "-") && isLive(stdin)
	colour := colourOn(cfg.color, stdout)
	r := &runner{cfg: cfg, stdin: stdin, stdout: out, out: out, stderr: stderr, colour: colour, pal: report.NewPalette(colour)}
	if cfg.export != "" {
		// Once, before any file is read: the directory, no input
		// overwritten, and where the tables are written until the run
		// has written them all (export.Export).
		exp, err := export.Begin(cfg.export, files)
		if err != nil {
			fmt.Fprintf(stderr, "roce-dissect: --export %s: %v\n", cfg.export, err)
			return ExitDamaged
		}
		r.exp = exp
	}
	var code int
	if cfg.packets || cfg.verbose || cfg.hex {
		code = r.packetMode(ctx, files)
	} else {
		code = r.reportMode(ctx, files)
	}
	if r.exp != nil && !r.commitExport(r.withheld(ctx)) {
		code = max(code, ExitDamaged)
	}
	if err := out.Flush(); err != nil {
		r.outputError(err)
		code = max(code, ExitDamaged)
	}
	return code
}

// outputError reports a failure to write the output, once.
func (r *runner) outputError(err error) {
	if !r.out.reported {
		r.out.reported = true
		fmt.Fprintf(r.stderr, "roce-dissect: writing output: %v\n", err)
	}
}

type runner struct {
	cfg    *config
	stdin  io.Reader
	stdout io.Writer // out, as a plain writer
	out    *output
	stderr io.Writer
	colour bool // --color and the terminal: the output is coloured
	// notPieces says why several files are not read as the pieces of one
	// capture (piecesOf, readSource), for the report of them all.
	notPieces string
	// apart says, of the files that share transmissions but are not
	// capture points of one traffic (points.Estimate.Apart), why not.
	apart []string
	pal   report.Palette

	progress *progress
	// budget caps the flows and CM connections of all the files of the
	// run together (--max-flows and --max-connections are for the run,
	// not for each file): their Analyzers are made with its New.
	budget *analyze.Budget
	// traces are the --trace collectors, one per file of traceFiles
	// (trace.go); nil without --trace.
	traces     []*trace.Collector
	traceFiles []string
	// exp is the --export under way (nil without --export); exported
	// says its report tables were written, exportFailed that a table
	// could not be (commitExport).
	exp          *export.Export
	exported     bool
	exportFailed atomic.Bool
	// inputMissing says an input could not be opened: the report lacks
	// it, and the output files keep the last run's (withheld).
	inputMissing bool
}

func (r *runner) options(src *source, multi bool) analyze.Options {
	o := analyze.Options{
		Interval:  r.plotInterval(),
		NoICRC:    r.cfg.noICRC,
		RoCEPorts: r.cfg.rocePorts,
		MaxFlows:  r.cfg.maxFlows,
	}
	o.DecodeRDAs = r.cfg.rdAs
	o.NoSeries = !r.needsSeries()
	o.NoMerge = !multi // one file's report is never merged
	o.MaxConnections = r.cfg.maxConns
	o.LinkSpeed, o.PauseStorm, o.DSCPPriority = r.cfg.linkGbps*1e9, r.cfg.pauseStorm, r.cfg.dscpPrio
	o.OnRelease = runtime.GC // Finish hands the flow table's memory to the report
	if multi {
		o.File = src.files[0]
	}
	o.Pieces = src.pieces
	return o
}

// open opens a capture, "-" being stdin.
func (r *runner) open(name string) (*capture.Reader, int64, error) {
	return r.openWith(name, capture.Open)
}

// openWith opens a capture with open (capture.Open or OpenMapped), "-"
// being stdin.
func (r *runner) openWith(name string, open func(string) (*capture.Reader, error)) (*capture.Reader, int64, error) {
	if name == "-" {
		cr, err := capture.NewReader(r.stdin)
		return cr, 0, err
	}
	var size int64
	if st, err := os.Stat(name); err == nil {
		if st.IsDir() {
			return nil, 0, fmt.Errorf("is a directory, not a capture file")
		}
		size = st.Size()
	}
	cr, err := open(name)
	return cr, size, err
}

// fileResult is the outcome of one file.
type fileResult struct {
	name   string
	src    *source
	report *analyze.Report
	err    error
	// stream, instead of report: the report written while it is built
	// (streamReport).
	stream *analyze.ReportStream
	// nccl are the analysis' NCCL collectors (observeNCCL).
	nccl *ncclCollectors
}

// writeText writes rep's text report (report.WriteText) to the output,
// with the run's colours, --all-flows, --findings, --severity and --kind;
// a write error is the output's.
func (r *runner) writeText(o report.TextOptions, rep *analyze.Report) {
	o.Colour, o.AllFlows, o.AllFindings = r.colour, r.cfg.allFlows, r.cfg.allFindings
	o.FindingsFilter = r.cfg.findingFilter
	_ = report.WriteText(r.stdout, rep, o)
}

// colourOn says whether the output is coloured: --color=always, or auto
// on a terminal without NO_COLOR.
func colourOn(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "auto":
		if f, ok := w.(*os.File); ok && os.Getenv("NO_COLOR") == "" {
			return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
		}
	}
	return false
}

// title is how the text report names the result's capture.
func (res fileResult) title() string {
	if res.src != nil {
		return res.src.name()
	}
	return displayName(res.name)
}

// exportFiles are the files the export's capture column names: the
// pieces read, or files.
func (res fileResult) exportFiles(files []string) []string {
	if res.src != nil && res.src.pieces != nil {
		return res.src.files
	}
	return files
}

// pieces are the files of the result's source read as one capture (nil
// for one file, or files each analyzed on its own).
func (res fileResult) pieces() *analyze.Pieces {
	if res.src == nil {
		return nil
	}
	return res.src.pieces
}

// htmlFiles are the sources of the HTML report, one per collector: the
// pieces read are one.
func (res fileResult) htmlFiles(files []string) []string {
	if res.src != nil && res.src.pieces != nil {
		return []string{res.src.name()}
	}
	return files
}

// each reads the frames of one file, calling fn for each, and returns the
// first error that stopped it (the frames before it were all given to fn).
func (r *runner) each(ctx context.Context, name string, fn func(*frame)) error {
	cr, size, err := r.open(name)
	if err != nil {
		return &openError{err}
	}
	defer cr.Close()
	return r.eachFrom(ctx, cr, size, r.cfg.count, fn)
}

// interruptedError is a reading the context stopped (Ctrl-C) after
// frames frames, all given to the analysis: what is reported of them
// is partial, not wrong.
type interruptedError struct {
	frames uint64
	err    error // the context's
}

func (e *interruptedError) Error() string {
	return fmt.Sprintf("interrupted after %d frames: the report covers only the frames read", e.frames)
}

func (e *interruptedError) Unwrap() error { return e.err }

// capture is the capture of res's report (streamed or whole), nil
// without one.
func (res *fileResult) capture() *analyze.Capture {
	switch {
	case res.stream != nil:
		return &res.stream.Head().Capture
	case res.report != nil:
		return &res.report.Capture
	}
	return nil
}

// markInterrupted marks the report of a reading the context stopped as
// partial (Capture.Interrupted), and counts in its error the frames it
// covers: those of every file read, not of the one being read then.
func (res *fileResult) markInterrupted() {
	var ie *interruptedError
	if !errors.As(res.err, &ie) {
		return
	}
	c := res.capture()
	if c == nil {
		return
	}
	c.Interrupted = true
	res.err = &interruptedError{frames: c.Frames, err: ie.err}
}

// eachFrom is each on an open capture of size bytes (0: unknown), which
// it leaves open, giving fn at most count frames (0: all).
func (r *runner) eachFrom(ctx context.Context, cr *capture.Reader, size int64, count uint64, fn func(*frame)) error {
	var tracker *progressFile
	if r.progress != nil {
		if cr.Format().Gzip || size == 0 {
			size = -1 // offsets count decompressed bytes, or no size known: no percentage
		}
		tracker = r.progress.add(size)
	}
	unsupported := map[gplayers.LinkType]bool{}
	var linkErr error
	var n uint64
	var fr frame // reused: fn gets it for the call only (no allocation per frame)
	ahead := cr.Ahead
	for {
		if count > 0 && n >= count {
			break
		}
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return &interruptedError{frames: n, err: err}
			}
			tracker.set(cr.Offset())
		}
		ci, data, lt, err := cr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tracker.set(cr.Offset())
			return err
		}
		n++
		if !analyze.SupportsLinkType(lt) && !unsupported[lt] {
			unsupported[lt] = true
			if linkErr == nil {
				linkErr = fmt.Errorf("unsupported link type %d (%s) at frame %d: its frames are counted as other", lt, lt, n)
			}
		}
		fr = frame{ci: ci, data: data, linkType: lt, num: n, ahead: ahead}
		fn(&fr)
	}
	tracker.set(cr.Offset())
	return linkErr
}

// analyzeAll analyzes the files, jobs at once, with fresh flow and
// connection budgets, point samplers and HTML collectors.
func (r *runner) analyzeAll(ctx context.Context, files []string, jobs int) ([]fileResult, []*points.Sampler, []*htmlreport.Collector) {
	r.progress = startProgress(r.cfg.progress, r.stderr)
	r.budget = analyze.NewBudget(r.cfg.maxFlows, r.cfg.maxConns)
	results := make([]fileResult, len(files))
	multi := len(files) > 1
	samplers := r.pointSamplers(files)
	collectors := r.htmlCollectors(len(files))
	traces := r.traceCollectors(files)
	sem := make(chan struct{}, jobs)
	cpu := make(chan struct{}, jobs) // -j: the analyzers running at once
	var wg sync.WaitGroup
	for i, name := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var smp *points.Sampler
			if samplers != nil {
				smp = samplers[i]
			}
			var tap func(*analyze.Packet)
			if col, tr := collectors[i], traces[i]; smp != nil || col != nil || tr != nil {
				tap = func(p *analyze.Packet) {
					smp.Add(p)
					col.Add(p)
					tr.Add(p)
				}
			}
			results[i] = r.analyzeFile(ctx, i, oneFile(name), multi, cpu, tap)
		}()
	}
	wg.Wait()
	r.progress.stop()
	return results, samplers, collectors
}

// errText is an error's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// fileName is how the reports' data name a capture file: as the
// operating system gave it, standard input "<stdin>". Each output writes
// it by its rule (package filename): quoted for people, valid UTF-8 in
// JSON, CSV and Parquet.
func fileName(name string) string {
	if name == "-" {
		return "<stdin>"
	}
	return name
}

// displayName is how a capture file is named to people: on stderr, in
// the text report's title and notes, in HTML's title (filename.Text).
func displayName(name string) string {
	return filename.Text(fileName(name))
}

// filter keeps the flows (and their findings) that --qp / --flow select,
// and the findings --severity and --kind keep.
func (r *runner) filter(rep *analyze.Report) *analyze.Report {
	if r.cfg.qp < 0 && r.cfg.flow == nil {
		if !r.cfg.filtersFindings() {
			return rep
		}
		out := *rep
		out.Findings = r.filterFindings(rep.Findings, nil)
		return &out
	}
	out := *rep
	out.Flows = nil
	keep := map[analyze.FlowID]bool{}
	for _, f := range rep.Flows {
		if r.selects(f.Src, f.Dst, f.DestQP) {
			out.Flows = append(out.Flows, f)
			keep[f.ID()] = true
		}
	}
	out.Findings = nil
	for _, fd := range rep.Findings {
		if keep[fd.Flow] && r.cfg.keepsFinding(&fd) {
			out.Findings = append(out.Findings, fd)
		}
	}
	if out.Flows == nil {
		out.Flows = []analyze.Flow{}
	}
	if out.Findings == nil {
		out.Findings = []analyze.Finding{}
	}
	return &out
}

// selects applies --qp and --flow.
func (r *runner) selects(src, dst string, qp uint32) bool {
	if r.cfg.qp >= 0 && int64(qp) != r.cfg.qp {
		return false
	}
	if f := r.cfg.flow; f != nil && (f.src != src || f.dst != dst || f.qp != qp) {
		return false
	}
	return true
}
