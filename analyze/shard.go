package analyze

import (
	"cmp"
	"container/heap"
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// Sharding a capture by host pair.
//
// Every piece of Analyzer state that links two frames is keyed by the
// hosts at both ends of them: a flow and its reverse flow (ACKs, RTT,
// loss evidence, NIC timing), a CM connection and its data flows (the
// MADs go to QP1 between the same two hosts), the path MTU inferred per
// host pair, the flows of a direction searched for an ACK's requests or a
// CNP's sender, the datagram sources of a CNP flow. Frames of different
// (unordered) host pairs never meet, so an Analyzer fed only the frames of
// some host pairs, in capture order and numbered as in the capture,
// builds exactly their part of the sequential analysis. CombineShards
// then rebuilds what is capture-wide: the order of flows and connections
// (creation order), the findings list and its cap, the totals, the cut
// finding, the dropped-flow estimate.
//
// Three things can still tie host pairs together, and CombineShards
// checks each: a CM message whose CommID matches a connection of another
// host pair (CommIDs are random 32-bit numbers; a crafted capture can
// reuse them), a frame the shard's own decoding puts in another host
// pair than HostPairKey did, and the --max-flows cap (the flows tracked
// are the first MaxFlows by creation frame, capture-wide).

// shardFeed is what a shard's Analyzer records while it is fed.
type shardFeed struct {
	created   []uint64 // the frame that created each flow, by flow index
	at        []uint64 // the frame being fed when each finding was listed
	misplaced uint64   // frames of a host pair other than their key's
	firstMis  uint64

	// The hosts of the last frame checked, and their key.
	lastSrc, lastDst Addr
	lastKey          uint64
	hasLast          bool

	// Capture-wide decisions a shard makes with only its own frames,
	// replayed by CombineShards in frame order over all shards.
	cm       []cmEvent  // every CM message
	short    []shortRun // the RDMA frames shorter than their length fields (shardcut.go)
	whole    []wholeRec // each RDMA frame captured whole longer than all before it
	overflow bool       // more events than maxShardEvents: not replayable

	// The flows and connections the caps refused (capRefusals), for
	// CombineShards to find which the sequential analysis tracks.
	refusedFlows capRefusals
	refusedConns capRefusals
}

// maxShardEvents bounds each list of events a shard keeps for the replay;
// past it, CombineShards cannot check the shards and says so.
const maxShardEvents = 1 << 20

// cmEvent is a CM message: the flood check counts them against the
// connections (grew: a REQ with a new CommID, tracked or refused).
type cmEvent struct {
	frame uint64
	t     time.Time
	grew  bool
}

// wholeRec is an RDMA frame captured whole, longer than every one before
// it in the shard.
type wholeRec struct {
	frame  uint64
	capLen int
}

func (s *shardFeed) room(n int) bool {
	if n >= maxShardEvents {
		s.overflow = true
		return false
	}
	return true
}

// noteCM records a CM message (nil-safe).
func (s *shardFeed) noteCM(p *Packet) {
	if s != nil && s.room(len(s.cm)) {
		s.cm = append(s.cm, cmEvent{frame: p.Frame, t: p.Time})
	}
}

// noteConnGrew records that the CM message just noted was a REQ with a
// new CommID (nil-safe).
func (s *shardFeed) noteConnGrew() {
	if s != nil && len(s.cm) > 0 {
		s.cm[len(s.cm)-1].grew = true
	}
}

// noteWhole records an RDMA frame captured whole longer than all before.
func (s *shardFeed) noteWhole(frame uint64, capLen int) {
	if s.room(len(s.whole)) {
		s.whole = append(s.whole, wholeRec{frame, capLen})
	}
}

// noteRefusedFlow records a flow (by its key's hash) a cap refused at
// frame (nil-safe).
func (s *shardFeed) noteRefusedFlow(h, frame uint64) {
	if s != nil {
		s.refusedFlows.note(h, frame)
	}
}

// noteRefusedConn records a REQ with a new CommID a cap refused at frame
// (nil-safe).
func (s *shardFeed) noteRefusedConn(frame uint64) {
	if s != nil {
		s.refusedConns.note(frame, frame)
	}
}

// noteFinding records the frame fed when a finding was listed (nil-safe).
func (s *shardFeed) noteFinding(frame uint64) {
	if s != nil {
		s.at = append(s.at, frame)
	}
}

// shardInfo is what a shard's report keeps for CombineShards.
type shardInfo struct {
	at         []uint64 // per Report.Findings (listed while fed, in the order listed): the frame fed then
	fedDropped uint64   // findings found while fed but not listed
	flows      []shardFlow
	sketch     []uint64
	misplaced  uint64
	firstMis   uint64
	feed       *shardFeed // its CM, cut and whole-frame events
	cmStats    cmStats
	orphaned   uint64
}

// shardFlow is what a shard keeps of one flow besides its Flow: the
// findings Analyzer.report lists at the end, for the combiner to list in
// the same order within the capture's cap.
type shardFlow struct {
	// refsFull says its loss log kept no more incomplete messages: which
	// the sequential analysis kept depends on the findings it listed.
	refsFull bool
	x        *shardFlowFindings // nil while it has none (most flows)
}

// shardFlowFindings are the findings of a shard's flow the combiner
// lists in the capture's order.
type shardFlowFindings struct {
	nic  []Finding // its NIC findings
	loss []Finding // its loss findings (attribute)
	// marks are its incomplete_message findings listed while fed that
	// attribute makes information: indices into the findings list, then
	// (listFindings) into Report.Findings.
	marks []int
	end   []Finding // its incomplete messages still pending at the end
}

// more returns the flow's findings, allocating them.
func (sf *shardFlow) more() *shardFlowFindings {
	if sf.x == nil {
		sf.x = &shardFlowFindings{}
	}
	return sf.x
}

// shardReport attaches the shard information to r (nil when not a shard).
func (a *Analyzer) shardReport(r *Report) *shardInfo {
	if a.shard == nil {
		return nil
	}
	sh := &shardInfo{
		flows:     make([]shardFlow, len(a.flowList)),
		sketch:    append([]uint64(nil), a.dropSketch.bits...),
		misplaced: a.shard.misplaced,
		firstMis:  a.shard.firstMis,
		feed:      a.shard,
		cmStats:   a.conns.stats,
		orphaned:  a.conns.orphaned,
	}
	r.shard = sh
	return sh
}

// flow returns where flow i's end findings go (nil when not a shard).
func (sh *shardInfo) flow(i int) *shardFlow {
	if sh == nil {
		return nil
	}
	return &sh.flows[i]
}

// noteLoss keeps what attribute lists for the flow (its loss findings)
// and the incomplete messages it makes information.
func (sf *shardFlow) noteLoss(cls *lossClass, f *flowState, file string, fl *findingList) {
	if l := lossFindings(cls, f.flowID(), file); len(l) > 0 {
		sf.more().loss = l
	}
	if f.loss.log == nil {
		return
	}
	sf.refsFull = len(f.loss.log.incomplete) >= maxLossLog
	for _, ref := range f.loss.log.incomplete {
		if fl.list[ref.idx].Kind == KindIncomplete && cls.onlyNotCaptured(ref.from, ref.to) {
			x := sf.more()
			x.marks = append(x.marks, ref.idx)
		}
	}
}

// listFindings sets r's findings to those listed while the shard was fed,
// in the order listed (unsorted), with the frame fed when each was listed,
// and turns the flows' marks into indices of r.Findings.
func (sh *shardInfo) listFindings(r *Report, fl *findingList) {
	sh.mapMarks(sh.listFed(r, fl))
}

// listFed is the first half of listFindings, which a stream does before
// its flows: it lists the findings listed while fed and returns where
// each of fl's went in r.Findings (-1: not listed).
func (sh *shardInfo) listFed(r *Report, fl *findingList) []int {
	pos := make([]int, len(fl.list))
	r.Findings = make([]Finding, 0, fl.n)
	for i, fd := range fl.list {
		pos[i] = -1
		if fd.Severity == 0 { // replaced
			continue
		}
		pos[i] = len(r.Findings)
		r.Findings = append(r.Findings, fd)
		sh.at = append(sh.at, sh.feed.at[i])
	}
	r.FindingsDropped, sh.fedDropped = fl.dropped, fl.dropped
	return pos
}

// mapMarks turns the flows' marks into indices of the report's findings.
func (sh *shardInfo) mapMarks(pos []int) {
	for i := range sh.flows {
		if x := sh.flows[i].x; x != nil {
			for k, idx := range x.marks {
				x.marks[k] = pos[idx]
			}
		}
	}
}

// FeedShard analyzes one frame of a shard (Options.Shard): frame is its
// number in the capture, key the HostPairKey the frame was sharded by. A
// frame whose decoded hosts have another key is counted, and makes
// CombineShards report the shards as not disjoint.
func (a *Analyzer) FeedShard(frame, key uint64, ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte) *Packet {
	p := a.feed(frame, ci, linkType, data)
	s := a.shard
	if s == nil || !p.IsRDMA || p.Err != nil || p.BTH == nil {
		return p
	}
	if !s.hasLast || p.Src != s.lastSrc || p.Dst != s.lastDst {
		s.lastSrc, s.lastDst, s.lastKey, s.hasLast = p.Src, p.Dst, pairHash(addrHash(p.Src), addrHash(p.Dst)), true
	}
	if s.lastKey != key {
		if s.misplaced == 0 {
			s.firstMis = frame
		}
		s.misplaced++
	}
	return p
}

// ErrNotDisjoint says shard reports share state that the sequential
// analysis would have joined: only the sequential analysis is exact.
var ErrNotDisjoint = errors.New("shards not disjoint")

// FlowCapError says the shards did not track the flows (connections) the
// sequential analysis tracks under Options.MaxFlows (MaxConnections):
// more than the cap, or others than the first by creation, when shards
// sharing the run's budget raced for its last flows (shardcap.go). The
// sequential analysis tracks the flows created up to Frame (0: every
// flow) and the connections whose REQ is up to ConnFrame (0: every one),
// which a second run with Options.FlowFrameLimit = Frame and
// ConnFrameLimit = ConnFrame reproduces.
type FlowCapError struct {
	Frame, ConnFrame uint64
}

func (e *FlowCapError) Error() string {
	return fmt.Sprintf("more flows or connections than the caps: only flows created up to frame %d and connections requested up to frame %d (0: all) are tracked", e.Frame, e.ConnFrame)
}

// CombineShards builds the report of a capture from the reports of its
// shards (Analyzers with Options.Shard, fed disjoint sets of host pairs
// with FeedShard, their reports from Finish), given the Options the
// shards had. The result is the report one Analyzer fed every frame
// would have made, byte for byte, unless an error says otherwise: a
// FlowCapError (run the shards again with Options.FlowFrameLimit), or
// ErrNotDisjoint (analyze the capture sequentially). With an error the
// report returned is the best the shards give (flows beyond the cap
// counted as dropped).
func CombineShards(parts []*Report, opts Options) (*Report, error) {
	c, err := newCombiner(parts, opts)
	if c == nil {
		return nil, err
	}
	c.dropCapped()
	c.out.Flows = make([]Flow, 0, len(c.flows))
	for _, fr := range c.flows {
		c.out.Flows = append(c.out.Flows, c.flow(fr, parts[fr.s].Flows[fr.i]))
	}
	c.listFindings()
	opts.Pieces.Localize(c.out)
	return c.out, errors.Join(c.errs...)
}

// flowRef is a shard's flow: its creation frame, shard and index.
type flowRef struct {
	created uint64
	s, i    int32
}

// combiner combines the reports of shards (CombineShards) in three
// steps, so that a stream of the combined report (CombineShardStreams)
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
}

func newCombiner(parts []*Report, opts Options) (*combiner, error) {
	opts = opts.withDefaults()
	var errs []error
	for s, p := range parts {
		if p.shard == nil {
			return nil, fmt.Errorf("analyze: part %d is not a shard's report", s)
		}
		if p.shard.misplaced > 0 {
			errs = append(errs, fmt.Errorf("%w: %d frames decode to another host pair than they were sharded by (the first: frame %d)", ErrNotDisjoint, p.shard.misplaced, p.shard.firstMis))
		}
		if p.shard.feed.overflow {
			errs = append(errs, fmt.Errorf("%w: more than %d CM messages, cut or whole frames in one shard to replay", ErrNotDisjoint, maxShardEvents))
		}
	}
	if err := commIDsDisjoint(parts); err != nil {
		errs = append(errs, err)
	}
	cut, err := replayCut(parts)
	if err != nil {
		errs = append(errs, err)
	}

	// Flows in creation order; the first MaxFlows are those tracked.
	n := 0
	for _, p := range parts {
		n += len(p.shard.flows)
	}
	flows := make([]flowRef, 0, n)
	for s, p := range parts {
		for i := range p.shard.flows {
			flows = append(flows, flowRef{p.shard.feed.created[i], int32(s), int32(i)})
		}
	}
	slices.SortFunc(flows, func(a, b flowRef) int { return cmp.Compare(a.created, b.created) })
	created := make([]uint64, len(flows))
	for i, fr := range flows {
		created[i] = fr.created
	}
	refused := make([]*capRefusals, len(parts))
	for s, p := range parts {
		refused[s] = &p.shard.feed.refusedFlows
	}
	var capErr FlowCapError
	exactFlows, frame, err := capDecision(created, refused, opts.MaxFlows)
	if err != nil {
		errs = append(errs, err)
	}
	capErr.Frame = frame
	var capDropped []flowRef
	if len(flows) > opts.MaxFlows { // the best without a second pass
		flows, capDropped = flows[:opts.MaxFlows], flows[opts.MaxFlows:]
	}

	// Connections in creation (REQ) order, renumbered.
	type connRef struct {
		req  uint64
		s, i int
	}
	nConns := 0
	for _, p := range parts {
		nConns += len(p.Connections)
	}
	conns := make([]connRef, 0, nConns)
	for s, p := range parts {
		for i, c := range p.Connections {
			conns = append(conns, connRef{c.Frames.REQ, s, i})
		}
	}
	sort.SliceStable(conns, func(i, j int) bool { return conns[i].req < conns[j].req })
	reqs := make([]uint64, len(conns))
	for i, c := range conns {
		reqs[i] = c.req
	}
	for s, p := range parts {
		refused[s] = &p.shard.feed.refusedConns
	}
	exactConns, connFrame, err := capDecision(reqs, refused, opts.MaxConnections)
	if err != nil {
		errs = append(errs, err)
	}
	capErr.ConnFrame = connFrame
	if len(conns) > opts.MaxConnections {
		conns = conns[:opts.MaxConnections] // the best without a second pass
	}
	if !exactFlows || !exactConns {
		errs = append(errs, &capErr)
	}
	remap := make([]connRemap, len(parts))
	for s, p := range parts {
		remap[s] = make(connRemap, len(p.Connections)+1)
	}
	out := &Report{Connections: make([]Connection, 0, len(conns)), merge: !slices.ContainsFunc(parts, func(p *Report) bool { return !p.merge })}
	for k, cr := range conns {
		c := parts[cr.s].Connections[cr.i]
		remap[cr.s].set(c.ID, k+1)
		c.ID = k + 1
		out.Connections = append(out.Connections, c)
	}

	// Which incomplete messages a flow's loss log kept depends on the
	// findings listed when it is full.
	var added uint64 // findings found, listed or not
	refsFull := false
	for _, p := range parts {
		added += uint64(len(p.Findings)) + p.shard.fedDropped
		for _, f := range p.shard.flows {
			refsFull = refsFull || f.refsFull
		}
	}
	if refsFull && added > uint64(opts.MaxFindings) {
		errs = append(errs, fmt.Errorf("%w: a flow has more incomplete messages than its loss log keeps, and the findings cap decides which it keeps", ErrNotDisjoint))
	}

	cb := &combiner{parts: parts, opts: opts, errs: errs, flows: flows, capDropped: capDropped, remap: remap, out: out, added: added}
	cb.capture(cut)
	return cb, errors.Join(errs...)
}

// flow is the combined report's flow of fr, f its shard's.
func (cb *combiner) flow(fr flowRef, f Flow) Flow {
	if f.Connection != nil {
		if id := cb.remap[fr.s].id(*f.Connection); id != 0 {
			f.Connection = &id
		} else {
			f.Connection = nil // beyond the connection cap (not exact: see capErr)
		}
	}
	return f
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
	fl := findingList{max: opts.MaxFindings}
	for _, fr := range feed {
		pos[fr.s][fr.i] = -1
		if fd := fl.add(parts[fr.s].Findings[fr.i].Severity); fd != nil {
			pos[fr.s][fr.i] = len(fl.list) - 1
			*fd = renumberFinding(parts[fr.s].Findings[fr.i], remap[fr.s])
		}
	}
	push := func(s int, fds []Finding) {
		for _, fd := range fds {
			added++
			fl.push(renumberFinding(fd, remap[s]))
		}
	}
	for _, fr := range flows {
		if x := parts[fr.s].shard.flows[fr.i].x; x != nil {
			push(int(fr.s), x.nic)
		}
	}
	for _, fr := range flows {
		sf := parts[fr.s].shard.flows[fr.i].x
		if sf == nil {
			continue
		}
		push(int(fr.s), sf.loss)
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
	for _, fd := range cb.end.cmFindings() {
		added++
		fl.push(fd)
	}
	out.Findings = fl.listed()
	out.FindingsDropped = added - uint64(len(out.Findings))
	sortFindings(out.Findings)
}

// capture adds up the combined report's capture.
func (cb *combiner) capture(cut cutState) {
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
		c.Malformed += pc.Malformed
		c.Bytes += pc.Bytes
		c.PacketsOfDroppedFlows += pc.PacketsOfDroppedFlows
		c.NotCaptured += pc.NotCaptured
		c.ICRCPortRewritten += pc.ICRCPortRewritten
		c.OriginalLengthsClamped += pc.OriginalLengthsClamped
		c.CutFrames += pc.CutFrames
		c.ConnectionsDropped += pc.ConnectionsDropped
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
	cb.end = Analyzer{opts: opts, capture: Capture{CutFrames: c.CutFrames, ConnectionsDropped: c.ConnectionsDropped}, cut: cut}
	cb.end.conns.list, cb.end.conns.stats = out.Connections, cms
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

// commIDsDisjoint checks that no CommID a shard's CM messages used is
// also one of another shard's: the sequential analysis pairs CM messages
// by CommID across every host pair.
func commIDsDisjoint(parts []*Report) error {
	// Every CommID a shard used, in the order the shards and their
	// connections and orphans come: sorted by CommID, a CommID's first
	// user owns it, and the first use by another shard in that order is
	// the clash reported.
	type use struct {
		id    uint32
		shard int32
		at    int32
	}
	n := 0
	for _, p := range parts {
		n += 2*len(p.Connections) + 2*len(p.cmOrphans)
	}
	uses := make([]use, 0, n)
	claim := func(id uint32, s int) {
		uses = append(uses, use{id, int32(s), int32(len(uses))})
	}
	for s, p := range parts {
		if p.shard.orphaned > uint64(len(p.cmOrphans)) {
			return fmt.Errorf("%w: %d CM messages without their REQ in one shard, more than are kept to check", ErrNotDisjoint, p.shard.orphaned)
		}
		for _, c := range p.Connections {
			claim(c.LocalCommID, s)
			if c.Frames.REP != 0 {
				claim(c.RemoteCommID, s)
			}
		}
		for _, o := range p.cmOrphans {
			switch o.kind {
			case cmREP:
				claim(o.remoteComm, s)
			case cmREJ:
				claim(o.remoteComm, s)
				claim(o.localComm, s)
			default:
				claim(o.localComm, s)
			}
		}
	}
	slices.SortFunc(uses, func(a, b use) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.at, b.at)) })
	clash := use{at: -1}
	for i := 0; i < len(uses); {
		j := i + 1
		for ; j < len(uses) && uses[j].id == uses[i].id; j++ {
			if uses[j].shard != uses[i].shard && (clash.at < 0 || uses[j].at < clash.at) {
				clash = uses[j]
				break
			}
		}
		for j < len(uses) && uses[j].id == uses[i].id {
			j++
		}
		i = j
	}
	if clash.at >= 0 {
		return fmt.Errorf("%w: CM CommID 0x%08x is used between two different host pairs", ErrNotDisjoint, clash.id)
	}
	return nil
}

// connRemap maps a shard's connection IDs (1…) to the combined report's;
// 0 for none (beyond the connection cap).
type connRemap []int

// set maps the shard's connection id to the combined report's to.
func (m *connRemap) set(id, to int) {
	if id <= 0 {
		return
	}
	if id >= len(*m) {
		*m = append(*m, make([]int, id+1-len(*m))...)
	}
	(*m)[id] = to
}

// id returns the combined report's ID of the shard's connection id, 0
// for none.
func (m connRemap) id(id int) int {
	if id <= 0 || id >= len(m) {
		return 0
	}
	return m[id]
}

// renumberFinding rewrites the connection ID a finding names (a shard's)
// to the combined report's.
func renumberFinding(fd Finding, remap connRemap) Finding {
	if fd.Connection == 0 {
		return fd
	}
	return fd.withConnection(remap.id(fd.Connection))
}

// replayFlood replays the CM messages of all shards in frame order and
// returns the frame (and time) at which they first outnumber what the
// connections explain, as cmFlood decides (0: never).
func replayFlood(parts []*Report) (uint64, time.Time) {
	// Each shard's messages are in frame order: merged as they come
	// through a heap of the shards' next messages, with no list of them
	// all.
	var next cmHeads
	for s, p := range parts {
		if len(p.shard.feed.cm) > 0 {
			next = append(next, cmHead{s: s, frame: p.shard.feed.cm[0].frame})
		}
	}
	heap.Init(&next)
	var messages, conns uint64
	for len(next) > 0 {
		h := &next[0]
		cm := parts[h.s].shard.feed.cm
		e := &cm[h.i]
		messages++
		if messages > cmMessagesPerConnection*conns+cmFloodSlack {
			return e.frame, e.t
		}
		if e.grew {
			conns++
		}
		if h.i++; h.i < len(cm) {
			h.frame = cm[h.i].frame
			heap.Fix(&next, 0)
		} else {
			heap.Pop(&next)
		}
	}
	return 0, time.Time{}
}

// cmHead is a shard's next CM message in replayFlood: the shard, the
// message's index in its list and its frame.
type cmHead struct {
	s, i  int
	frame uint64
}

// cmHeads is a min-heap of cmHead by frame (container/heap).
type cmHeads []cmHead

func (h cmHeads) Len() int           { return len(h) }
func (h cmHeads) Less(i, j int) bool { return h[i].frame < h[j].frame }
func (h cmHeads) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cmHeads) Push(x any)        { *h = append(*h, x.(cmHead)) }
func (h *cmHeads) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
