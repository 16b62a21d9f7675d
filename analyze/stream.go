package analyze

import (
	"fmt"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
)

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
	// cb and parts: the stream of shards' streams combined
	// (combineShardStreams).
	cb    *combiner
	parts []*ReportStream
	// rel calls the combined stream's Options.OnRelease while the flows
	// of all shards are released (the shards call none).
	rel   *releaser
	spare *NIC // given back by Reuse, for Next to write a flow's NIC object into
}

// FinishStream is Finish for a report written while it is built: the
// Report of Head and End has no flows (Flows is empty, and the report
// cannot be merged); Next gives them in the order Finish lists them. The
// Analyzer must not be used afterwards.
func (a *Analyzer) FinishStream() *ReportStream {
	part := &ReportStream{b: a.startReport(true, true)} // combineShardStreams calls OnRelease again once the combiner is built
	// A Sharded's shard gives the stream of its part, which its Sharded
	// combines with the others'; else the part's stream is combined
	// alone, as Finish does.
	if a.opts.shard {
		return part
	}
	s, _ := combineShardStreams([]*ReportStream{part}, a.opts) // one part: no error (Analyzer.combined)
	return s
}

// Head returns the report's capture totals and connections, as Finish's
// report has them; Flows and Findings are nil until End.
func (s *ReportStream) Head() *Report {
	var r *Report
	if s.cb != nil {
		r = s.cb.out
	} else {
		r = s.b.r
	}
	s.pieces().Localize(r)
	return r
}

// pieces are the files the stream's capture was read from, whose frame
// references its reports name (none for a shard's part, whose references
// the combiner localizes).
func (s *ReportStream) pieces() *Pieces {
	if s.cb != nil {
		return s.cb.opts.Pieces
	}
	return nil
}

// Flows is how many flows Next gives in all.
func (s *ReportStream) Flows() int {
	if s.cb != nil {
		return len(s.cb.flows)
	}
	return len(s.b.a.flowList)
}

// Next writes the report of the next flow into f and returns true; it
// returns false after the last. The whole of f is written: one Flow may
// take every flow in turn (a Flow is 840 bytes: returned by value, it was
// copied five times on its way to the output). The objects f points to
// are new ones, the flow's own, but for a NIC object given back by Reuse.
func (s *ReportStream) Next(f *Flow) bool {
	ok, spare := s.nextFlow(f, s.spare)
	s.spare = spare
	return ok
}

// Reuse gives back the NIC object of f, a flow Next wrote that the caller
// is done with and keeps no copy of: Next writes a later flow's NIC object
// into it rather than allocate another, so that a stream of many flows
// leaves less garbage. f.NIC is nil after.
func (s *ReportStream) Reuse(f *Flow) {
	if f.NIC != nil {
		s.spare, f.NIC = f.NIC, nil
	}
}

// nextFlow is Next, with the NIC object spare to write the flow's NIC
// object into; it returns spare when the flow had none.
func (s *ReportStream) nextFlow(f *Flow, spare *NIC) (bool, *NIC) {
	if s.cb != nil {
		if s.next >= len(s.cb.flows) {
			s.rel.last()
			return false, spare
		}
		fr := s.cb.flows[s.next]
		s.next++
		if s.next%releaseCheck == 0 {
			s.rel.maybe()
		}
		ok, spare := s.parts[fr.s].nextFlow(f, spare)
		if !ok { // combineShardStreams checked the order: never
			return false, spare
		}
		s.cb.flow(fr, f)
		s.cb.opts.Pieces.LocalizeFlow(f)
		return true, spare
	}
	if s.next >= len(s.b.a.flowList) {
		return false, spare
	}
	s.next++
	return true, s.b.flow(s.next-1, f, spare) // a part's: the combined stream localizes it
}

// End builds the flows Next has not given (discarding them) and returns
// the report with its findings: Finish's report without its flows.
func (s *ReportStream) End() *Report {
	if s.done {
		return s.Head()
	}
	var f Flow
	for s.Next(&f) {
		s.Reuse(&f)
	}
	s.done = true
	if s.cb != nil {
		for _, p := range s.parts {
			p.End()
		}
		s.cb.listFindings()
		s.cb.out.Flows = []Flow{}
		s.pieces().Localize(s.cb.out)
		return s.cb.out
	}
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
		if len(f.psn.gaps()) == 0 {
			continue
		}
		gaps = gaps[:0]
		for _, g := range f.psn.gaps() {
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

// refsFullOf sets sh.refsFull, which noteLoss sets as it builds the
// flows, before: the combiner checks it before the flows.
func (a *Analyzer) refsFullOf(sh *shardInfo) {
	for _, f := range a.flowList {
		sh.refsFull = sh.refsFull || f.loss.log != nil && len(f.loss.log.incomplete) >= maxLossLog
	}
}

// report builds the rest of the stream into the report Finish gives (of
// a stream whose Next has not been called), for when the report cannot
// be written as it is built after all (combineShardStreams' errors).
func (s *ReportStream) report() *Report {
	var flows []Flow
	for {
		flows = append(flows, Flow{})
		if !s.Next(&flows[len(flows)-1]) {
			flows = flows[:len(flows)-1]
			break
		}
	}
	r := s.End()
	r.Flows = flows
	if r.Flows == nil {
		r.Flows = []Flow{}
	}
	r.merge = !s.pieces().multi() // a localized report cannot be merged
	return r
}

// combineShardStreams is combineShards for the streams of the shards
// (FinishStream of Analyzers with Options.shard): the stream it returns
// gives the report combineShards gives, flow by flow, building each
// shard's flows as it gives them. When combineShards would return an
// error, or the shards' flows do not come in the order they are combined,
// it returns no stream but an error (the parts' Next not called: use
// their report and combineShards).
func combineShardStreams(parts []*ReportStream, opts Options) (*ReportStream, error) {
	heads := make([]*Report, len(parts))
	for s, p := range parts {
		if p.b == nil || p.b.fedPos == nil || p.next > 0 {
			return nil, fmt.Errorf("analyze: part %d is not a shard's stream", s)
		}
		heads[s] = p.Head()
	}
	cb, err := newCombiner(heads, opts)
	if err != nil {
		return nil, err
	}
	flows := 0
	for _, p := range parts {
		flows += len(p.b.a.flowList)
	}
	var rel *releaser // Options.OnRelease for the flows of all shards, called by the combined stream
	if flows >= releaseEvery {
		rel = newReleaser(opts.OnRelease, opts.heap)
	}
	for _, p := range parts { // the heap not to pass: the largest when a shard's report began
		rel.inherit(p.b.rel)
		p.b.rel = nil
	}
	rel.call() // once for all shards, their flow tables released (FinishStream)
	next := make([]int, len(parts))
	for _, fr := range cb.flows {
		if int(fr.i) != next[fr.s] {
			return nil, fmt.Errorf("analyze: shard %d's flow %d is combined before its flow %d", fr.s, fr.i, next[fr.s])
		}
		next[fr.s]++
	}
	for _, h := range heads {
		h.shard.feed.cm = conn.Log{} // replayed (newCombiner): the stream combines them no more
	}
	return &ReportStream{cb: cb, parts: parts, rel: rel}, nil
}
