package analyze

import (
	"errors"
	"fmt"
	"slices"
	"sort"

	"github.com/roce-dissect/roce-dissect/analyze/internal/pfc"
	"github.com/roce-dissect/roce-dissect/analyze/internal/toolcut"
)

// ErrNotDisjoint is the answer of a Sharded's Finish and FinishStream
// when its shards' host pairs shared state that the sequential analysis
// joins (a CM CommID used between two host pairs, a frame its shard's
// decoding put in another host pair, …) and the capture could not be read
// again (Sharded.Reread): only the sequential analysis is exact, and
// Finish's report is the shards' best.
var ErrNotDisjoint = errors.New("shards not disjoint")

// combineShards builds the report of a capture from the reports of its
// shards (Analyzers with Options.shard, fed disjoint sets of host pairs
// with feedShard, their reports from Finish), given the Options the
// shards had. The result is the report one Analyzer fed every frame
// would have made, byte for byte, unless an error says otherwise:
// ErrNotDisjoint (analyze the capture with one Analyzer), which also
// says when the shards tracked other flows or connections than it under
// the caps (capsExact: shards not sharing the budgets, or racing for
// their last flows, which Sharded prevents: checkBudgets). With an error
// the report returned is the best the shards give (flows beyond the cap
// counted as dropped).
func combineShards(parts []*Report, opts Options) (*Report, error) {
	c, err := newCombiner(parts, opts)
	if c == nil {
		return nil, err
	}
	c.dropCapped()
	if len(parts) == 1 {
		// The only shard's flows are in creation order, and all tracked:
		// combined where they are, not copied.
		c.out.Flows = parts[0].Flows
		for i := range c.out.Flows {
			c.flow(c.flows[i], &c.out.Flows[i])
		}
	} else {
		c.out.Flows = make([]Flow, len(c.flows))
		for i, fr := range c.flows {
			c.out.Flows[i] = parts[fr.s].Flows[fr.i]
			c.flow(fr, &c.out.Flows[i])
		}
	}
	c.listFindings()
	opts.Pieces.Localize(c.out)
	return c.out, errors.Join(c.errs...)
}

// flowRef is a shard's flow: its shard and index.
type flowRef struct{ s, i int32 }

// flowOrder returns the shards' flows in creation order, and with the
// shards' records of it (Options.shard) their creation frames, in that
// order; the only shard's flows are listed in that order, and it records
// none.
func flowOrder(parts []*Report) ([]flowRef, []uint64) {
	n := 0
	for _, p := range parts {
		n += p.shard.flows
	}
	refs := make([]flowRef, 0, n)
	for s, p := range parts {
		for i := range p.shard.flows {
			refs = append(refs, flowRef{int32(s), int32(i)})
		}
	}
	if !parts[0].shard.feed.replay {
		return refs, nil
	}
	created := make([]uint64, 0, n)
	for _, p := range parts {
		created = append(created, p.shard.feed.created...)
	}
	sort.Stable(byCreation{refs, created})
	return refs, created
}

// byCreation sorts flows by their creation frames (sort.Interface).
type byCreation struct {
	refs    []flowRef
	created []uint64
}

func (b byCreation) Len() int           { return len(b.refs) }
func (b byCreation) Less(i, j int) bool { return b.created[i] < b.created[j] }
func (b byCreation) Swap(i, j int) {
	b.refs[i], b.refs[j] = b.refs[j], b.refs[i]
	b.created[i], b.created[j] = b.created[j], b.created[i]
}

// combiner combines the reports of shards (combineShards) in three
// steps, so that a stream of the combined report (combineShardStreams)
// can write the capture and connections, then each flow, then the
// findings: newCombiner (the capture, the connections and the flows'
// order), flow (one flow), listFindings.
type combiner struct {
	parts      []*Report
	opts       Options
	errs       []error
	flows      []flowRef // in creation order: those tracked
	capDropped []flowRef // beyond the flow cap
	remap      []connRemap
	out        *Report
	end        Analyzer // the capture's end findings
	added      uint64   // findings found, listed or not
	timeline   *pfc.Timeline
}

func newCombiner(parts []*Report, opts Options) (*combiner, error) {
	opts = opts.withDefaults()
	var errs []error
	if len(parts) == 0 {
		return nil, errors.New("analyze: no shard's report to combine")
	}
	for s, p := range parts {
		if p.shard == nil || len(parts) > 1 && !p.shard.feed.replay {
			return nil, fmt.Errorf("analyze: part %d is not a shard's report", s)
		}
	}
	// Shards are combined exactly when disjoint; the only shard is.
	if len(parts) > 1 {
		if err := checkDisjoint(parts); err != nil {
			errs = append(errs, err)
		}
	}
	cut, err := combineCut(parts)
	if err != nil {
		errs = append(errs, err)
	}

	// Flows in creation order; the first MaxFlows are those tracked.
	flows, created := flowOrder(parts)
	if created != nil { // the shards' records (the only shard's flows are the capture's)
		refused := make([]uint64, len(parts))
		for s, p := range parts {
			refused[s] = p.shard.feed.firstRefused
		}
		if err := capsExact("flows", created, refused, opts.MaxFlows); err != nil {
			errs = append(errs, err)
		}
	}
	var capDropped []flowRef
	if len(flows) > opts.MaxFlows { // the best the shards give
		flows, capDropped = flows[:opts.MaxFlows], flows[opts.MaxFlows:]
	}

	// CM connections in creation (REQ) order, then the inferred ones in
	// the order of their request flows (Analyzer.inferConnections),
	// renumbered.
	type connRef struct {
		req  uint64
		s, i int
	}
	nConns := 0
	for _, p := range parts {
		nConns += len(p.Connections)
	}
	conns := make([]connRef, 0, nConns)
	var inferred []connRef // req: the position of the request flow in flows
	for s, p := range parts {
		for i, c := range p.Connections {
			if c.State == StateInferred {
				inferred = append(inferred, connRef{uint64(c.flow), s, i})
				continue
			}
			conns = append(conns, connRef{c.Frames.REQ, s, i})
		}
	}
	sort.SliceStable(conns, func(i, j int) bool { return conns[i].req < conns[j].req })
	if len(inferred) > 0 {
		at := make(map[flowRef]uint64, len(flows))
		for k, fr := range flows {
			at[fr] = uint64(k)
		}
		for k := range inferred {
			pos, ok := at[flowRef{int32(inferred[k].s), int32(inferred[k].req)}]
			if !ok { // its flow beyond the flow cap
				pos = uint64(len(flows))
			}
			inferred[k].req = pos
		}
		sort.SliceStable(inferred, func(i, j int) bool { return inferred[i].req < inferred[j].req })
	}
	if len(parts) > 1 {
		reqs := make([]uint64, len(conns))
		for i, c := range conns {
			reqs[i] = c.req
		}
		refused := make([]uint64, len(parts))
		for s, p := range parts {
			refused[s] = p.shard.cmStats.first
		}
		if err := capsExact("connections", reqs, refused, opts.MaxConnections); err != nil {
			errs = append(errs, err)
		}
	}
	if len(conns) > opts.MaxConnections {
		conns = conns[:opts.MaxConnections] // the best the shards give
	}
	conns = append(conns, inferred...)
	remap := make([]connRemap, len(parts))
	for s, p := range parts {
		remap[s] = make(connRemap, len(p.Connections)+1)
	}
	out := &Report{Connections: make([]Connection, 0, len(conns)), merge: !slices.ContainsFunc(parts, func(p *Report) bool { return !p.merge })}
	for k, cr := range conns {
		c := parts[cr.s].Connections[cr.i]
		remap[cr.s].set(c.ID, k+1)
		c.ID, c.flow = k+1, 0 // flow: the shard's index, read above
		out.Connections = append(out.Connections, c)
	}

	// Which incomplete messages a flow's loss log kept depends on the
	// findings listed when it is full.
	var added uint64 // findings found, listed or not
	refsFull := false
	for _, p := range parts {
		added += uint64(len(p.Findings)) + p.shard.fedDropped
		refsFull = refsFull || p.shard.refsFull
	}
	if refsFull && added > uint64(opts.MaxFindings) && len(parts) > 1 {
		errs = append(errs, fmt.Errorf("%w: a flow has more incomplete messages than its loss log keeps, and the findings cap decides which it keeps", ErrNotDisjoint))
	}

	cb := &combiner{parts: parts, opts: opts, errs: errs, flows: flows, capDropped: capDropped, remap: remap, out: out, added: added}
	cb.capture(cut)
	for _, p := range parts {
		out.addPause(p)
	}
	cb.timeline = out.pause.Timeline()
	return cb, errors.Join(errs...)
}

// checkDisjoint checks that the shards are disjoint (their frames in the
// host pairs they were sharded by, their CommIDs their own, their records
// complete): ErrNotDisjoint when the shards cannot be combined exactly.
func checkDisjoint(parts []*Report) error {
	var errs []error
	for _, p := range parts {
		if p.shard.misplaced > 0 {
			errs = append(errs, fmt.Errorf("%w: %d frames decode to another host pair than they were sharded by (the first: frame %d)", ErrNotDisjoint, p.shard.misplaced, p.shard.firstMis))
		}
		if p.shard.feed.overflow || p.shard.cut.Overflow() {
			errs = append(errs, fmt.Errorf("%w: more than %d CM messages, cut or whole frames in one shard to replay", ErrNotDisjoint, maxShardEvents))
		}
	}
	if err := commIDsDisjoint(parts); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// flow makes f, the shard's flow of fr, the combined report's.
func (cb *combiner) flow(fr flowRef, f *Flow) {
	if f.Connection != nil {
		if id := cb.remap[fr.s].id(*f.Connection); id == 0 {
			f.Connection = nil // beyond the connection cap (not exact: see capErr)
		} else if id != *f.Connection { // a new pointer: the part's flow may share the old
			renumbered := id // only this branch allocates (&id would move id to the heap for all)
			f.Connection = &renumbered
		}
	}
	applyPause(cb.timeline, f)
}

// listFindings lists the combined report's findings.
func (cb *combiner) listFindings() {
	parts, opts, remap, out, flows := cb.parts, cb.opts, cb.remap, cb.out, cb.flows
	// Findings: those listed while frames were fed, replayed in the order
	// they were listed (by the frame fed then) through the capture's cap;
	// then those made at the end, as Analyzer.report lists them; then the
	// sort. A shard lists every finding of its own that the capture lists
	// (the cap keeps, of each severity, the first ones found, and a shard
	// has fewer of each to compete), so the replay lists what one Analyzer
	// would have listed.
	type findRef struct {
		at   uint64
		s, i int
	}
	var feed []findRef
	added := cb.added
	pos := make([][]int, len(parts))
	for s, p := range parts {
		for i := range p.Findings {
			feed = append(feed, findRef{p.shard.at[i], s, i})
		}
		pos[s] = make([]int, len(p.Findings))
	}
	sort.SliceStable(feed, func(i, j int) bool { return feed[i].at < feed[j].at })
	// The list is made as long as the replay needs at once: grown by
	// append, the copies it leaves behind cost as much as the list.
	fl := findingList{max: opts.MaxFindings, list: make([]Finding, 0, min(len(feed), opts.MaxFindings))}
	for _, fr := range feed {
		pos[fr.s][fr.i] = -1
		if fd := fl.add(parts[fr.s].Findings[fr.i].Severity); fd != nil {
			pos[fr.s][fr.i] = len(fl.list) - 1
			*fd = renumberFinding(parts[fr.s].Findings[fr.i], remap[fr.s])
		}
	}
	for _, p := range parts {
		p.Findings = nil // replayed into fl (pos says where each went), so that they are not held twice
	}
	push := func(s int, fds []Finding) {
		for _, fd := range fds {
			added++
			fl.push(renumberFinding(fd, remap[s]))
		}
	}
	for _, fr := range flows {
		if x := parts[fr.s].shard.of(fr.i); x != nil {
			push(int(fr.s), x.nic)
		}
	}
	for _, fr := range flows {
		sf := parts[fr.s].shard.of(fr.i)
		if sf == nil {
			continue
		}
		push(int(fr.s), sf.loss.findings())
		for _, k := range sf.marks {
			if k < 0 {
				continue
			}
			if idx := pos[fr.s][k]; idx >= 0 && fl.list[idx].Kind == KindIncomplete {
				fl.list[idx].Detail += notCapturedNote
				fl.setSeverity(idx, SeverityInfo)
			}
		}
		push(int(fr.s), sf.end)
	}
	if fd, ok := cb.end.cutFinding(); ok {
		added++
		fl.push(fd)
	}
	for _, fd := range pauseFindings(out.pause, opts.File) {
		added++
		fl.push(fd)
	}
	for _, fd := range cb.end.cmFindings() {
		added++
		fl.push(fd)
	}
	out.Findings = fl.take()
	out.FindingsDropped = added - uint64(len(out.Findings))
	sortFindings(out.Findings)
}

// capture adds up the combined report's capture.
func (cb *combiner) capture(cut *toolcut.Stage) {
	parts, opts, out := cb.parts, cb.opts, cb.out
	c := &out.Capture
	var sk sketch
	var cms cmStats
	var orphansKept uint64
	var malformed []Malformed
	for _, p := range parts {
		pc := &p.Capture
		c.Frames += pc.Frames
		c.RoCEPackets += pc.RoCEPackets
		c.OtherPackets += pc.OtherPackets
		c.others.merge(&pc.others)
		c.Malformed += pc.Malformed
		c.Bytes += pc.Bytes
		c.PacketsOfDroppedFlows += pc.PacketsOfDroppedFlows
		c.NotCaptured += pc.NotCaptured
		c.ICRCPortRewritten += pc.ICRCPortRewritten
		c.OriginalLengthsClamped += pc.OriginalLengthsClamped
		c.CutFrames += pc.CutFrames
		c.ConnectionsDropped += pc.ConnectionsDropped
		c.addWraps(pc)
		st := p.shard.cmStats
		cms.messages += st.messages
		cms.ignored += st.ignored
		if st.first != 0 && (cms.first == 0 || st.first < cms.first) {
			cms.first, cms.firstAt = st.first, st.firstAt
		}
		orphansKept += uint64(len(p.cmOrphans))
		malformed = append(malformed, pc.MalformedFrames...)
		if pc.FirstTime != nil && (c.FirstTime == nil || pc.FirstTime.Before(*c.FirstTime)) {
			t := *pc.FirstTime
			c.FirstTime = &t
		}
		if pc.LastTime != nil && (c.LastTime == nil || pc.LastTime.After(*c.LastTime)) {
			t := *pc.LastTime
			c.LastTime = &t
		}
		if p.shard.sketch != nil {
			if sk.bits == nil {
				sk.bits = make([]uint64, sketchBits/64)
			}
			for i, w := range p.shard.sketch {
				sk.bits[i] |= w
			}
		}
		out.cmOrphans = append(out.cmOrphans, p.cmOrphans...)
	}
	c.others.list(c)
	if c.FirstTime != nil {
		c.DurationSeconds = c.LastTime.Sub(*c.FirstTime).Seconds()
	}
	sort.SliceStable(malformed, func(i, j int) bool { return malformed[i].Frame < malformed[j].Frame })
	c.MalformedFrames = malformed[:min(len(malformed), opts.MaxFindings):min(len(malformed), opts.MaxFindings)]
	if c.MalformedFrames == nil {
		c.MalformedFrames = []Malformed{}
	}
	sort.SliceStable(out.cmOrphans, func(i, j int) bool { return out.cmOrphans[i].frame < out.cmOrphans[j].frame })
	if maxOrphans := min(maxCMOrphans, opts.MaxConnections); len(out.cmOrphans) > maxOrphans {
		out.cmOrphans = out.cmOrphans[:maxOrphans]
	}
	// Orphans the shards kept but the capture's cap does not: ignored.
	cms.ignored += orphansKept - uint64(len(out.cmOrphans))
	c.FlowsDropped = sk.estimate()
	cms.floodAt, cms.floodT = replayFlood(parts)
	cb.end = Analyzer{opts: opts, capture: Capture{ConnectionsDropped: c.ConnectionsDropped}, cut: cut}
	cb.end.conns.list, cb.end.conns.stats = make([]*Connection, len(out.Connections)), cms
	for i := range out.Connections {
		cb.end.conns.list[i] = &out.Connections[i]
	}
}

// dropCapped counts the flows beyond the flow cap as dropped (only when
// the cap was exceeded: an estimate; reads their Flows).
func (cb *combiner) dropCapped() {
	c := &cb.out.Capture
	for _, fr := range cb.capDropped {
		f := &cb.parts[fr.s].Flows[fr.i]
		c.FlowsDropped++
		c.PacketsOfDroppedFlows += f.Packets
		c.NotCaptured -= f.Requests.MissingNotCaptured
	}
}
