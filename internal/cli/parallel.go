package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/capture"
)

// jobs is the number of cores -j allows (default: all).
func (r *runner) jobs() int {
	if r.cfg.jobs > 0 {
		return r.cfg.jobs
	}
	return runtime.GOMAXPROCS(0)
}

// analyzeFile analyzes one file: a seekable pcap or pcapng file cut into
// ranges of frames analyzed on up to jobs cores and merged (see
// docs/cli.md, "Parallel analysis"), anything else sequentially. The
// report is the same either way: when a range cannot be read as the
// index promised, the file is read again sequentially.
//
// tap, when not nil, sees every decoded packet in file order (capture
// points, the HTML report): such a file is read sequentially.
func (r *runner) analyzeFile(ctx context.Context, index int, name string, multi bool, cpu chan struct{}, tap func(*analyze.Packet)) fileResult {
	if ranges := r.ranges(name); tap == nil && len(ranges) > 1 {
		if res, ok := r.analyzeRanges(ctx, index, name, multi, ranges, cpu); ok {
			return res
		}
	}
	cpu <- struct{}{}
	defer func() { <-cpu }()
	a := analyze.New(r.options(name, multi))
	feed, done := r.exporter(index, 0, name, a, tap)
	err := r.each(ctx, name, feed)
	return fileResult{name: name, report: a.Finish(), err: errors.Join(err, done())}
}

// ranges cuts a file into ranges for an explicit -j N (N ≥ 2), or returns
// nil to read it sequentially: no -j, one job, stdin, gzip, a damaged
// file, -c. Without -j files are analyzed in parallel, each whole, as
// before: the merged report of ranges differs from the sequential one in
// the ways docs/parallel.md lists.
func (r *runner) ranges(name string) []capture.Range {
	n := r.cfg.jobs
	if n < 2 || name == "-" {
		return nil
	}
	ix, err := capture.IndexFile(name)
	if err != nil {
		return nil
	}
	if r.cfg.count > 0 && r.cfg.count < ix.Frames {
		return nil
	}
	return ix.Split(n, nil)
}

// errRangeRead says a range could not be read as indexed.
var errRangeRead = errors.New("range read")

// analyzeRanges analyzes each range with its own Analyzer, on up to jobs
// cores at once, and merges their reports in file order. It returns
// false when a range failed to read (the caller reads the file
// sequentially, to report the damage at the file's offsets).
func (r *runner) analyzeRanges(ctx context.Context, index int, name string, multi bool, ranges []capture.Range, cpu chan struct{}) (fileResult, bool) {
	reports := make([]*analyze.Report, len(ranges))
	errs := make([]error, len(ranges))
	var wg sync.WaitGroup
	for i, rg := range ranges {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cpu <- struct{}{}
			defer func() { <-cpu }()
			o := r.options(name, multi)
			o.FirstFrame = rg.FirstFrame
			a := analyze.New(o)
			feed, done := r.exporter(index, i, name, a, nil)
			errs[i] = r.eachInRange(ctx, rg, feed)
			if err := done(); err != nil && errs[i] == nil {
				errs[i] = err
			}
			reports[i] = a.Finish()
		}()
	}
	wg.Wait()
	var linkErr error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, errRangeRead):
			return fileResult{}, false
		case linkErr == nil:
			linkErr = err // the first range's: the first frame of an unsupported link type
		}
	}
	if err := ctx.Err(); err != nil {
		return fileResult{name: name, report: reports[0], err: err}, true
	}
	rep := reports[0]
	for _, o := range reports[1:] {
		if err := rep.Merge(o); err != nil {
			return fileResult{name: name, report: rep, err: err}, true
		}
	}
	return fileResult{name: name, report: rep, err: linkErr}, true
}

// eachInRange is each for one range of a file: it reads the range's
// frames, numbered as in the file, calling fn for each. A read error is
// errRangeRead; an unsupported link type is reported as each does.
func (r *runner) eachInRange(ctx context.Context, rg capture.Range, fn func(*frame)) error {
	cr, err := capture.OpenRange(rg)
	if err != nil {
		return fmt.Errorf("%w: %v", errRangeRead, err)
	}
	defer cr.Close()
	tracker := r.progress.add(rg.Len())
	unsupported := map[gplayers.LinkType]bool{}
	var linkErr error
	var fr frame // reused: fn gets it for the call only
	for n := uint64(0); n < rg.Frames; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			tracker.set(cr.Offset())
		}
		ci, data, lt, err := cr.Next()
		if err != nil {
			return fmt.Errorf("%w: %v", errRangeRead, err)
		}
		if !analyze.SupportsLinkType(lt) && !unsupported[lt] {
			unsupported[lt] = true
			if linkErr == nil {
				linkErr = fmt.Errorf("unsupported link type %d (%s) at frame %d: its frames are counted as other", lt, lt, rg.FirstFrame+n)
			}
		}
		fr = frame{ci: ci, data: data, linkType: lt}
		fn(&fr)
	}
	if _, _, _, err := cr.Next(); err != io.EOF {
		return fmt.Errorf("%w: more frames than indexed", errRangeRead)
	}
	tracker.set(cr.Offset())
	return linkErr
}
