package analyze

// ReportStream is the report of an Analyzer built one flow at a time, for
// a writer that writes each flow as it comes instead of holding the whole
// report (a million flows are gigabytes): Head, then Next until it
// reports no more flows, then End. Each flow's state is released once its
// report is built, so memory peaks at the flow table, not at the flow
// table plus the report.
type ReportStream struct {
	b    *reportBuild
	next int
	done bool
}

// FinishStream is Finish for a report written while it is built: the
// Report of Head and End has no flows (Flows is empty, and the report
// cannot be merged); Next gives them in the order Finish lists them. The
// Analyzer must not be used afterwards. Not for Options.Shard (use Finish
// and CombineShards).
func (a *Analyzer) FinishStream() *ReportStream {
	a.flows, a.hostMTU, a.byHosts = nil, nil, nil
	a.flowCache = [flowCacheLen]cachedFlow{}
	if len(a.flowList) >= releaseEvery && a.opts.OnRelease != nil {
		a.opts.OnRelease()
	}
	return &ReportStream{b: a.startReport(true, true)}
}

// Head returns the report's capture totals and connections, as Finish's
// report has them; Flows and Findings are nil until End.
func (s *ReportStream) Head() *Report { return s.b.r }

// Flows is how many flows Next gives in all.
func (s *ReportStream) Flows() int { return len(s.b.a.flowList) }

// Next returns the report of the next flow, false after the last.
func (s *ReportStream) Next() (Flow, bool) {
	if s.next >= len(s.b.a.flowList) {
		return Flow{}, false
	}
	s.next++
	return s.b.flow(s.next - 1), true
}

// End builds the flows Next has not given (discarding them) and returns
// the report with its findings: Finish's report without its flows.
func (s *ReportStream) End() *Report {
	if s.done {
		return s.b.r
	}
	for {
		if _, ok := s.Next(); !ok {
			break
		}
	}
	s.done = true
	r := s.b.end()
	r.Flows = []Flow{}
	return r
}

// notCapturedOf is the sum of the flows' Requests.MissingNotCaptured,
// which the report's capture shows before its flows: only flows with
// missing PSNs have any.
func (a *Analyzer) notCapturedOf(evidence []lossEvidence) uint64 {
	var n uint64
	var gaps []Gap
	for i, f := range a.flowList {
		if len(f.psn.gaps) == 0 {
			continue
		}
		gaps = gaps[:0]
		for _, g := range f.psn.gaps {
			gaps = append(gaps, Gap{From: g.from, To: g.to, Count: g.count(), Frame: g.frame})
		}
		var low uint32
		if f.psn.seen {
			low = f.psn.low
		}
		cls := classify(&evidence[i], gaps, low)
		n += cls.notCaptured
	}
	return n
}
