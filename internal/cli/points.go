package cli

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
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
// capture points of the same traffic (two or more, none of them read
// once: readOnce), nil otherwise.
func (r *runner) pointSamplers(files []string) []*points.Sampler {
	if len(files) < 2 || len(files) > points.MaxFiles || slices.ContainsFunc(files, readOnce) {
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
			if sameInput(name, f) {
				out[i] = &d
			}
		}
	}
	return out
}

// capturePoints matches the files as capture points of the same traffic.
// When no two files meet it returns nil reports (the files are
// consecutive, merged as before). Otherwise each group of files that are
// points of one traffic is read again, merged in time order on the first
// file's clock, into a combined report (each transmission counted once,
// at its first sighting); the groups' reports and those of the files in
// no group (reports, by file) are merged in file order.
func (r *runner) capturePoints(ctx context.Context, files []string, samplers []*points.Sampler, reports []*analyze.Report) (*analyze.Report, *points.Report, error) {
	est := points.EstimateClocks(samplers, r.clockOverrides(files))
	if len(est.Groups) == 0 {
		return nil, nil, nil
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = fileName(f)
	}
	pts := &points.Report{Files: make([]points.File, len(files)), Links: []points.Link{}}
	for i, o := range est.Offsets {
		pts.Files[i] = points.File{File: names[i], ClockOffsetNs: int64(o.Offset), OffsetErrorNs: int64(o.Error), Method: o.Method}
	}
	var parts []*analyze.Report
	groupOf := make([]int, len(files))
	for i := range groupOf {
		groupOf[i] = -1
	}
	for g, grp := range est.Groups {
		for _, i := range grp {
			groupOf[i] = g
		}
	}
	// Why files that share transmissions are not points of one traffic,
	// for the text report: those that are in no group together.
	r.apart = nil
	for _, p := range est.Apart {
		if groupOf[p.A] < 0 || groupOf[p.A] != groupOf[p.B] {
			r.apart = append(r.apart, p.Why(displayName(files[p.A]), displayName(files[p.B])))
		}
	}
	for i := range files {
		g := groupOf[i]
		if g < 0 {
			parts = append(parts, reports[i])
			continue
		}
		if est.Groups[g][0] != i {
			continue
		}
		rep, links, err := r.matchGroup(ctx, files, names, samplers, est, est.Groups[g])
		if err != nil {
			return nil, nil, err
		}
		rttAtRequester(rep, links, est.Groups[g], names, reports)
		parts = append(parts, rep)
		pts.Links = append(pts.Links, links...)
	}
	// Links of one flow in several groups stay in group order.
	slices.SortStableFunc(pts.Links, func(a, b points.Link) int {
		return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst), cmp.Compare(a.DestQP, b.DestQP))
	})
	merged := parts[0]
	if len(parts) > 1 {
		merged = &analyze.Report{Connections: []analyze.Connection{}, Flows: []analyze.Flow{}, Findings: []analyze.Finding{}}
		for _, p := range parts {
			if err := merged.Merge(p); err != nil {
				return nil, nil, err
			}
		}
	}
	return merged, pts, nil
}

// matchGroup reads the files of one group (indices into files) again,
// merged in time order on the reference clock (ties: the file given
// first), and returns their combined report and links.
func (r *runner) matchGroup(ctx context.Context, files, allNames []string, samplers []*points.Sampler, est points.Estimate, group []int) (*analyze.Report, []points.Link, error) {
	names := make([]string, len(group))
	offsets := make([]points.Offset, len(group))
	spans := make([][2]time.Time, len(group))
	for k, i := range group {
		names[k], offsets[k] = allNames[i], est.Offsets[i]
		if first, last, ok := samplers[i].Span(); ok {
			spans[k] = [2]time.Time{first, last}
		}
	}
	m := points.New(points.Options{Files: names, Offsets: offsets, Spans: spans})

	type pointReader struct {
		cr   *capture.Reader
		a    *analyze.Analyzer
		ci   gopacket.CaptureInfo
		data []byte
		lt   gplayers.LinkType
		t    int64 // reference clock
		n    uint64
		ok   bool
	}
	srcs := make([]*pointReader, len(group))
	next := func(s *pointReader, i int) {
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
	// The points' Analyzers, which decode each file's packets for the
	// matcher, share a budget of their own; the combined report has the
	// caps of the run's one report. Neither draws on the first pass's
	// budgets, which the files' own reports spent.
	pointBudget := analyze.NewBudget(r.cfg.maxFlows, r.cfg.maxConns)
	for k, i := range group {
		cr, _, err := r.open(files[i])
		if err != nil {
			return nil, nil, err
		}
		defer cr.Close()
		srcs[k] = &pointReader{cr: cr, a: pointBudget.New(r.options(oneFile(files[i]), true))}
		next(srcs[k], k)
	}
	opts := r.options(oneFile(""), false)
	opts.NoMerge = false // the groups' reports are merged
	combined := analyze.New(opts)
	var origins findingOrigins
	heads := make([]head, len(srcs))
	for i, s := range srcs {
		heads[i] = head{t: s.t, capLen: s.ci.CaptureLength, ok: s.ok}
	}
	merged := newMerge(heads)
	for k := uint64(0); ; k++ {
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, nil, err
			}
		}
		bi := merged.earliest()
		if bi < 0 {
			break
		}
		s := srcs[bi]
		p := s.a.Feed(s.ci, s.lt, s.data)
		if m.Add(bi, p) {
			ci := s.ci
			ci.Timestamp = ci.Timestamp.Add(-m.Offset(bi))
			if pc := combined.Feed(ci, s.lt, s.data); pc.Findings > 0 {
				origins.note(combined, pc.Frame, bi, p.Frame)
			}
		} else if m.AddedCE() {
			// A mark the network added past the points that saw the
			// packet first: the combined report counts it, at this file.
			combined.MarkCE(p, names[bi], s.ci.Timestamp.Add(-m.Offset(bi)))
		}
		next(s, bi)
		merged.advance(head{t: s.t, capLen: s.ci.CaptureLength, ok: s.ok})
	}
	rep := combined.Finish()
	fed, marks := rep.Findings[:0], []analyze.Finding(nil) // fed: in place
	for _, f := range rep.Findings {
		if f.File != "" { // MarkCE's: named already
			marks = append(marks, f)
			continue
		}
		if o, ok := origins.of(f.Frame); ok {
			f.File, f.Frame = names[o.file], o.frame
		}
		fed = append(fed, f)
	}
	rep.Findings = mergeByTime(fed, marks)
	return rep, m.Finish().Links, nil
}

// mergeByTime merges two lists of findings, each in the order the
// combined report found them, into one in time order, each list's order
// kept: the marks a later sighting showed (Analyzer.MarkCE, listed by
// file and frame) go among the findings of the packets fed where their
// sightings came.
func mergeByTime(a, b []analyze.Finding) []analyze.Finding {
	if len(b) == 0 {
		return a
	}
	out := make([]analyze.Finding, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if b[0].Time.Before(a[0].Time) {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// rttAtRequester gives each flow of rep, the report of the capture
// points group (indexes into names and reports, the files' own reports),
// the RTT of the point nearest its requester (where its requests are
// seen first: a From of its links that is no To; without links, the one
// point of the group that saw it), as that point's own report measured
// it (Flow.TakeRTT). The combined report, fed each transmission where it
// was seen first, would time a request at the requester's point against
// its ACK at the responder's: a time between two places, no round trip.
func rttAtRequester(rep *analyze.Report, links []points.Link, group []int, names []string, reports []*analyze.Report) {
	downstream := map[analyze.FlowID]map[string]bool{}
	upstream := map[analyze.FlowID][]string{}
	for _, l := range links {
		id := analyze.FlowID{Src: l.Src, Dst: l.Dst, DestQP: l.DestQP}
		if downstream[id] == nil {
			downstream[id] = map[string]bool{}
		}
		downstream[id][l.To] = true
		upstream[id] = append(upstream[id], l.From)
	}
	byName := make(map[string]int, len(group))
	for _, i := range group {
		byName[names[i]] = i
	}
	index := map[int]map[analyze.FlowID]*analyze.Flow{} // a report's flows, made when first asked
	flowIn := func(i int, id analyze.FlowID) *analyze.Flow {
		if reports[i] == nil {
			return nil
		}
		if index[i] == nil {
			index[i] = make(map[analyze.FlowID]*analyze.Flow, len(reports[i].Flows))
			for k := range reports[i].Flows {
				index[i][reports[i].Flows[k].ID()] = &reports[i].Flows[k]
			}
		}
		return index[i][id]
	}
	for k := range rep.Flows {
		f := &rep.Flows[k]
		id := f.ID()
		at, linked := -1, len(upstream[id]) > 0
		for _, from := range upstream[id] {
			if !downstream[id][from] {
				at = byName[from]
				break
			}
		}
		if !linked { // seen at one point of the group, or unmatched at several
			for _, i := range group {
				if flowIn(i, id) != nil {
					if at >= 0 {
						at = -1 // no point is known to be nearest
						break
					}
					at = i
				}
			}
		}
		if at < 0 {
			f.TakeRTT(&analyze.Flow{}, "")
			continue
		}
		own := flowIn(at, id)
		if own == nil {
			own = &analyze.Flow{}
		}
		where := ""
		if linked {
			where = names[at]
		}
		f.TakeRTT(own, where)
	}
}
