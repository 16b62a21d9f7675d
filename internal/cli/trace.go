package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/trace"
	"github.com/roce-dissect/roce-dissect/nccl"
	"github.com/roce-dissect/roce-dissect/points"
)

// checkTrace refuses a --trace FILE that is not a .json file: with its
// name forgotten, --trace a.pcap b.pcap would write the trace over the
// capture a.pcap.
func checkTrace(cfg *config) error {
	if cfg.trace == "" {
		return nil
	}
	if !strings.HasSuffix(cfg.trace, ".json") {
		return fmt.Errorf("%w: --trace wants a .json file", errUsage)
	}
	return nil // -P, -V, -x, and an input named as the trace: checkOutputs
}

// traceCollectors makes one trace collector per file for --trace (nil
// without it), for the taps and analyze.Options.OnMessage, and returns
// them.
func (r *runner) traceCollectors(files []string) []*trace.Collector {
	r.traces, r.traceFiles = nil, nil
	if r.cfg.trace == "" {
		return make([]*trace.Collector, len(files))
	}
	r.traces = make([]*trace.Collector, len(files))
	for i := range r.traces {
		r.traces[i] = trace.NewCollector(trace.DefaultLimits)
	}
	r.traceFiles = files
	return r.traces
}

// traceMessages is what analyze.Options.OnMessage calls for the file
// numbered index: its trace collector's Message, nil without --trace.
func (r *runner) traceMessages(index int) func(analyze.Message) {
	if index < 0 || index >= len(r.traces) || r.traces[index] == nil {
		return nil
	}
	return r.traces[index].Message
}

// writeTrace writes the --trace timeline of the (filtered, merged) report
// and of NCCL's collectives in res (nil for none) to w, the files of
// capture points (pts, nil for none) on its clock.
func (r *runner) writeTrace(w io.Writer, rep *analyze.Report, res *nccl.Result, pts *points.Report, pieces *analyze.Pieces) error {
	srcs := make([]trace.Source, len(r.traces))
	for i := range srcs {
		srcs[i] = trace.Source{Name: r.traceFiles[i], Collector: r.traces[i]}
		if len(srcs) == 1 {
			srcs[i].Files = pieces // several files read as one: their frames named by file
		}
		for _, pf := range ptsFiles(pts) {
			if pf.File == fileName(r.traceFiles[i]) {
				srcs[i].ClockOffset = time.Duration(pf.ClockOffsetNs)
			}
		}
	}
	return trace.Write(w, rep, srcs, res, trace.DefaultLimits)
}

// ptsFiles are the capture points' files, none for nil.
func ptsFiles(pts *points.Report) []points.File {
	if pts == nil {
		return nil
	}
	return pts.Files
}
