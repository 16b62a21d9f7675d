package cli

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"io"
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/nccl"
	"github.com/roce-dissect/roce-dissect/report"
)

// streams says whether the report of one file is written while it is
// built (streamReport): text, JSON or CSV without --export, --plot or
// --html, which read the whole report; -o parquet's tables without --plot
// or --html.
func (r *runner) streams() bool {
	switch r.cfg.output {
	case "text", "json", "csv":
	case "parquet": // --export only: its tables written while built (streamExport)
		return r.cfg.plot == "" && r.cfg.html == ""
	default:
		return false
	}
	return r.cfg.export == "" && r.cfg.plot == "" && r.cfg.html == ""
}

// streamReport writes the report of one file as its flows are built, each
// flow written (JSON, CSV) or summarised (text) and released before the
// next is built, so that the report is never held whole: the same bytes
// as the report of Finish (docs/robustness.md, "Scale: many flows").
func (r *runner) streamReport(res fileResult, status int) int {
	var err error
	switch r.cfg.output {
	case "json":
		err = r.streamJSON(r.stdout, res, ncclResult([]fileResult{res}, nil))
	case "csv":
		err = r.streamCSV(r.stdout, res.stream)
	case "parquet":
		err = r.streamExport(res)
	default:
		r.streamText(res)
	}
	if err != nil {
		r.outputError(err)
		return ExitDamaged
	}
	return status
}

// nextFlow writes into f the next flow --qp / --flow select, and marks
// it in keep (not nil: those selected) for their findings; false after the
// last.
func (r *runner) nextFlow(s *analyze.ReportStream, keep map[analyze.FlowID]bool, f *analyze.Flow) bool {
	for s.Next(f) {
		if r.selects(f.Src, f.Dst, f.DestQP) {
			if keep != nil {
				keep[f.ID()] = true
			}
			return true
		}
		s.Reuse(f)
	}
	return false
}

// streamCSV is writeFlowsCSV of a stream.
func (r *runner) streamCSV(w io.Writer, s *analyze.ReportStream) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(report.FlowCSVHeader()); err != nil {
		return err
	}
	var f analyze.Flow
	var row []string
	for r.nextFlow(s, nil, &f) {
		row = report.AppendFlowCSVRow(row[:0], &f)
		_ = cw.Write(row)
		s.Reuse(&f)
	}
	s.End()
	cw.Flush()
	return cw.Error()
}

// streamJSON is writeJSON of a stream: the same bytes, by the same
// writer (report.WriteJSONDocument).
func (r *runner) streamJSON(w io.Writer, fr fileResult, res *nccl.Result) error {
	s := fr.stream
	head := s.Head()
	keep := r.keepFlows()
	var hosts report.HostTally // the flows, added up as they are written
	next := func(f *analyze.Flow) bool {
		ok := r.nextFlow(s, keep, f)
		if ok {
			hosts.Add(f)
		}
		return ok
	}
	d := &report.JSONDocument{Capture: &head.Capture, Connections: report.Elements(head.Connections), NCCL: func() *nccl.Result { return res },
		Hosts: func() *report.Hosts { return hosts.Hosts(fileName(fr.name)) }}
	if workers := r.jobs(); workers > 1 {
		d.WriteFlows = func(bw *bufio.Writer) (int, error) {
			return writeFlowsJSON(bw, workers, next)
		}
	} else {
		d.Flows = func(yield func(any) bool) {
			var f analyze.Flow // one flow at a time, encoded before the next: no copy on the heap per flow
			for next(&f) && yield(&f) {
				s.Reuse(&f)
			}
		}
	}
	// The findings and the number dropped are known once the flows are
	// written (s.End), which the document asks for only then.
	d.Findings = func(yield func(any) bool) {
		report.Elements(r.filterFindings(s.End().Findings, keep))(yield)
	}
	d.FindingsDropped = func() uint64 { return s.End().FindingsDropped }
	if len(head.Pause) > 0 {
		d.Pause = report.Elements(head.Pause)
	}
	return report.WriteJSONDocument(w, d)
}

// keepFlows is the set of flows --qp / --flow select, filled as they are
// written; nil without them.
func (r *runner) keepFlows() map[analyze.FlowID]bool {
	if r.cfg.qp < 0 && r.cfg.flow == nil {
		return nil
	}
	return map[analyze.FlowID]bool{}
}

// filterFindings keeps the findings of the flows in keep (all with nil)
// that --severity and --kind keep, as filter does.
func (r *runner) filterFindings(fs []analyze.Finding, keep map[analyze.FlowID]bool) []analyze.Finding {
	if keep == nil && !r.cfg.filtersFindings() {
		return fs
	}
	out := []analyze.Finding{}
	for _, fd := range fs {
		if (keep == nil || keep[fd.Flow]) && r.cfg.keepsFinding(&fd) {
			out = append(out, fd)
		}
	}
	return out
}

// keptFlow is a flow the streamed text report keeps: listed in its table
// (a problem, or among the most payload), or in its NIC section.
type keptFlow struct {
	n    int // the flow's place among all the flows
	flow analyze.Flow
	// problem and nic: kept whatever the other flows are; top: one of
	// the report.TextFlowLimit flows with the most payload so far.
	problem, nic, top bool
}

// streamText writes the text report of a stream, keeping of the flows
// only those it shows: every flow with a problem, the report.TextFlowLimit
// flows with the most payload (candidates while they come) and those of
// the NIC section. With --all-flows every flow is listed, so kept.
func (r *runner) streamText(res fileResult) {
	s := res.stream
	var kept []*keptFlow
	var top []*keptFlow // at most report.TextFlowLimit flows without a problem
	worst := -1         // worstTop(top) once top is full, -1 until found again
	all := r.cfg.allFlows
	keep := r.keepFlows()
	n, evicted := 0, 0
	var f analyze.Flow // each flow in turn; only those kept are copied
	var hosts report.HostTally
	for r.nextFlow(s, keep, &f) {
		hosts.Add(&f)
		problem, nic := all || report.FlowHasProblem(&f), false
		if f.NIC != nil {
			v, e := report.NICEvents(f.NIC)
			nic = v+e > 0
		}
		// a later flow beats a kept one on more payload only (the stable
		// order keeps the earlier on a tie); the worst is found again only
		// when it was replaced (a scan of the kept flows for each flow was
		// a large share of the text report of many flows)
		w := -1
		if !problem && len(top) == report.TextFlowLimit {
			if worst < 0 {
				worst = worstTop(top)
			}
			w = worst
		}
		isTop := !problem && (len(top) < report.TextFlowLimit || f.PayloadBytes > top[w].flow.PayloadBytes)
		if problem || nic || isTop { // only a flow kept is copied to the heap
			k := &keptFlow{n: n, flow: f, problem: problem, nic: nic, top: isTop}
			switch {
			case isTop && w >= 0:
				top[w].top = false
				evicted++
				top[w] = k
				worst = -1
			case isTop:
				top = append(top, k)
			}
			kept = append(kept, k)
		} else {
			s.Reuse(&f)
		}
		n++
		if evicted > report.TextFlowLimit && evicted > len(kept)/2 { // drop the candidates evicted
			kept = slices.DeleteFunc(kept, func(k *keptFlow) bool { return !k.problem && !k.nic && !k.top })
			evicted = 0
		}
	}
	kept = slices.DeleteFunc(kept, func(k *keptFlow) bool { return !k.problem && !k.nic && !k.top })
	end := s.End()
	rep := *end
	rep.Capture, rep.Connections = s.Head().Capture, s.Head().Connections
	rep.Flows = make([]analyze.Flow, len(kept))
	for i, k := range kept {
		rep.Flows[i] = k.flow
	}
	rep.Findings = r.filterFindings(rep.Findings, keep) // of the flows selected, kept or not
	listed := listedKept(kept, all || n <= report.TextFlowLimit)
	r.writeText(report.TextOptions{Title: res.title(), ReadErr: errText(res.err), Listed: listed, Unlisted: n - len(listed), Notes: r.mergedNotes(res), NCCL: ncclResult([]fileResult{res}, nil), Hosts: hosts.Hosts(fileName(res.name))}, &rep)
}

// listedKept returns the kept flows the text report's table lists: every
// one (all), else the report.TextFlowLimit with the most payload (the
// earlier on a tie) and every flow with a problem.
func listedKept(kept []*keptFlow, all bool) []int {
	var listed []int
	if all {
		for i := range kept {
			listed = append(listed, i)
		}
		return listed
	}
	byPayload := make([]int, 0, len(kept))
	for i, k := range kept {
		if k.problem || k.top {
			byPayload = append(byPayload, i)
		}
	}
	slices.SortStableFunc(byPayload, func(a, b int) int {
		return cmp.Compare(kept[b].flow.PayloadBytes, kept[a].flow.PayloadBytes)
	})
	in := make([]bool, len(kept))
	for _, i := range byPayload[:min(report.TextFlowLimit, len(byPayload))] {
		in[i] = true
	}
	for i, k := range kept {
		if in[i] || k.problem {
			listed = append(listed, i)
		}
	}
	return listed
}

// worstTop is the index of the candidate the next flow would replace:
// the least payload, the latest on a tie.
func worstTop(top []*keptFlow) int {
	w := 0
	for i, k := range top {
		if p, pw := k.flow.PayloadBytes, top[w].flow.PayloadBytes; p < pw || p == pw && k.n > top[w].n {
			w = i
		}
	}
	return w
}
