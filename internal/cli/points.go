package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/capture"
	"github.com/roce-dissect/roce-dissect/points"
)

// clockOffsetFlag parses --clock-offset FILE=DURATION.
type clockOffsetFlag struct{ m *map[string]time.Duration }

func (c clockOffsetFlag) String() string { return "" }

func (c clockOffsetFlag) Set(v string) error {
	i := strings.LastIndexByte(v, '=')
	if i <= 0 {
		return fmt.Errorf("want FILE=DURATION, got %q", v)
	}
	d, err := time.ParseDuration(v[i+1:])
	if err != nil {
		return fmt.Errorf("bad duration in %q: %v", v, err)
	}
	if *c.m == nil {
		*c.m = map[string]time.Duration{}
	}
	(*c.m)[v[:i]] = d
	return nil
}

// pointSamplers returns one sampler per file when several files may be
// capture points of the same traffic (two or more, none of them stdin,
// which cannot be read twice), nil otherwise.
func (r *runner) pointSamplers(files []string) []*points.Sampler {
	if len(files) < 2 || len(files) > points.MaxFiles || slices.Contains(files, "-") {
		return nil
	}
	s := make([]*points.Sampler, len(files))
	for i := range s {
		s[i] = points.NewSampler(0)
	}
	return s
}

// clockOverrides returns the --clock-offset of each file (nil: estimate).
func (r *runner) clockOverrides(files []string) []*time.Duration {
	out := make([]*time.Duration, len(files))
	for i, f := range files {
		for name, d := range r.cfg.clockOffsets {
			if name == f || filepath.Clean(name) == filepath.Clean(f) {
				out[i] = &d
			}
		}
	}
	return out
}

// capturePoints matches the files as capture points of the same traffic.
// When no two files share a transmission it returns nil reports (the
// files are consecutive, merged as before). Otherwise it reads the files
// again, merged in time order on the first file's clock, and returns the
// combined report (each transmission counted once, at its first sighting)
// and the points report.
func (r *runner) capturePoints(ctx context.Context, files []string, samplers []*points.Sampler) (*analyze.Report, *points.Report, error) {
	offsets, meet := points.EstimateOffsets(samplers, r.clockOverrides(files))
	if !meet {
		return nil, nil, nil
	}
	spans := make([][2]time.Time, len(files))
	for i, s := range samplers {
		if first, last, ok := s.Span(); ok {
			spans[i] = [2]time.Time{first, last}
		}
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = displayName(f)
	}
	m := points.New(points.Options{Files: names, Offsets: offsets, Spans: spans})

	type source struct {
		cr   *capture.Reader
		a    *analyze.Analyzer
		ci   gopacket.CaptureInfo
		data []byte
		lt   gplayers.LinkType
		t    int64 // reference clock
		n    uint64
		ok   bool
	}
	srcs := make([]*source, len(files))
	next := func(s *source, i int) {
		s.ok = false
		if r.cfg.count > 0 && s.n >= r.cfg.count {
			return
		}
		ci, data, lt, err := s.cr.Next()
		if err != nil { // io.EOF, or damage reported by the first pass
			return
		}
		s.n++
		s.ci, s.data, s.lt, s.ok = ci, data, lt, true
		s.t = ci.Timestamp.UnixNano() - int64(m.Offset(i))
	}
	for i, name := range files {
		cr, _, err := r.open(name)
		if err != nil {
			return nil, nil, err
		}
		defer cr.Close()
		srcs[i] = &source{cr: cr, a: analyze.New(r.options(name, true))}
		next(srcs[i], i)
	}
	combined := analyze.New(r.options("", false))
	type origin struct {
		file  int
		frame uint64
	}
	remap := map[uint64]origin{} // combined frame → file and frame, for findings
	for k := uint64(0); ; k++ {
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		bi := -1
		for i, s := range srcs {
			if s.ok && (bi < 0 || s.t < srcs[bi].t) {
				bi = i
			}
		}
		if bi < 0 {
			break
		}
		s := srcs[bi]
		p := s.a.Feed(s.ci, s.lt, s.data)
		if m.Add(bi, p) {
			ci := s.ci
			ci.Timestamp = ci.Timestamp.Add(-m.Offset(bi))
			if pc := combined.Feed(ci, s.lt, s.data); pc.Findings > 0 {
				remap[pc.Frame] = origin{bi, p.Frame}
			}
		}
		next(s, bi)
	}
	rep := combined.Finish()
	for i := range rep.Findings {
		if o, ok := remap[rep.Findings[i].Frame]; ok {
			rep.Findings[i].File, rep.Findings[i].Frame = names[o.file], o.frame
		}
	}
	return rep, m.Finish(), nil
}

// writePoints writes the "Capture points" text section.
func (r *runner) writePoints(pts *points.Report) {
	if pts == nil {
		return
	}
	w, p := r.stdout, r.pal
	fmt.Fprintln(w)
	p.bold.Fprintln(w, "Capture points")
	for i, f := range pts.Files {
		errs := "error unknown"
		if f.OffsetErrorNs >= 0 {
			errs = "± " + time.Duration(f.OffsetErrorNs).String()
		}
		if f.Method == points.MethodReference || f.Method == points.MethodOverride {
			errs = "exact"
		}
		fmt.Fprintf(w, "  %d. %s: clock %+v (%s, %s)\n", i+1, f.File, time.Duration(f.ClockOffsetNs), errs, f.Method)
	}
	if len(pts.Links) == 0 {
		fmt.Fprintln(w, "  no flow seen at two points")
		return
	}
	header := []cell{{text: "FLOW", left: true}, {text: "FROM → TO", left: true}, {text: "MATCHED"}, {text: "LOST"}, {text: "NOT CAPTURED"}, {text: "CORRUPTED"}, {text: "REORDERED"}, {text: "DELAY MIN"}, {text: "MEDIAN"}, {text: "P99"}, {text: "MAX"}}
	p.table(w, "  ", header, len(pts.Links), func(i int, row []cell) []cell {
		l := &pts.Links[i]
		lost := cell{text: fmt.Sprint(l.Lost)}
		if l.Lost > 0 {
			lost.c = p.red
		}
		corr := cell{text: fmt.Sprint(l.Corrupted)}
		if l.Corrupted > 0 {
			corr.c = p.red
		}
		d := l.OneWayDelayNs
		return append(row,
			cell{text: linkFlow(l).String(), left: true},
			cell{text: l.From + " → " + l.To, left: true},
			cell{text: fmt.Sprint(l.Matched)}, lost, cell{text: fmt.Sprint(l.NotCaptured)}, corr, cell{text: fmt.Sprint(l.Reordered)},
			cell{text: time.Duration(d.Min).String()}, cell{text: time.Duration(d.Median).String()},
			cell{text: time.Duration(d.P99).String()}, cell{text: time.Duration(d.Max).String()})
	})
	for i := range pts.Links {
		writeLinkLosses(w, p, &pts.Links[i])
	}
}

// writeLinkLosses lists a link's lost and corrupted PSNs with their frames.
func writeLinkLosses(w io.Writer, p palette, l *points.Link) {
	for k, psn := range l.LostPSNs {
		p.red.Fprintf(w, "  lost between %s and %s: PSN %d (%s frame %d), %s\n", l.From, l.To, psn, l.From, l.LostFrames[k], linkFlow(l))
	}
	for k, psn := range l.CorruptedPSNs {
		p.red.Fprintf(w, "  corrupted between %s and %s: PSN %d (bad ICRC at %s frame %d), %s\n", l.From, l.To, psn, l.To, l.CorruptedFrames[k], linkFlow(l))
	}
	if n := uint64(len(l.LostPSNs)); l.Lost > n {
		fmt.Fprintf(w, "  … and %d more lost\n", l.Lost-n)
	}
}

// linkFlow names the flow of a link as findings do.
func linkFlow(l *points.Link) analyze.FlowID {
	return analyze.FlowID{Src: l.Src, Dst: l.Dst, DestQP: l.DestQP}
}
