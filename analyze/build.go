package analyze

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/pfc"
)

// Report returns the report of everything fed so far. It may be called
// more than once; the Analyzer can go on being fed.
func (a *Analyzer) Report() *Report { return a.combined(a.report(false)) }

// Finish returns the report of everything fed, like Report, and frees the
// flow table while it builds the report, so that memory peaks at about the
// larger of the two rather than at their sum (with a million flows, each
// is hundreds of megabytes). The Analyzer must not be used afterwards.
func (a *Analyzer) Finish() *Report {
	return a.combined(a.report(true))
}

// combined returns the report of the capture of which part is the
// Analyzer's part: part itself for a shard among others (Options.shard),
// which combineShards combines with theirs; else part combined alone,
// the one-shard case of combineShards, which is how every report is
// built. combineShards checks nothing across the shards of one part: it
// returns no error.
func (a *Analyzer) combined(part *Report) *Report {
	if a.opts.shard {
		return part
	}
	r, _ := combineShards([]*Report{part}, a.opts)
	return r
}

// report builds the Analyzer's part of the report (combined builds the
// report).
func (a *Analyzer) report(release bool) *Report {
	b := a.startReport(release, false)
	for i := range a.flowList {
		b.r.Flows = append(b.r.Flows, Flow{})
		b.flow(i, &b.r.Flows[len(b.r.Flows)-1], nil)
	}
	b.rel.last()
	return b.end()
}

// reportBuild is a report being built, flow by flow: what report keeps
// between its flows (a Report's head, its findings, what the flows read of
// each other before any is released).
type reportBuild struct {
	a            *Analyzer
	r            *Report
	acc          *Report // where the flows add to the capture's totals
	fl           findingList
	release      bool
	rel          *releaser // Options.OnRelease while the flows are released (nil: never; a combined stream calls it)
	cnpTransport map[int32]string
	evidence     []lossEvidence
	nics         []*NIC
	sh           *shardInfo
	fedPos       []int // a shard's stream: where listFed listed its findings
	// lazyNIC: a stream builds each flow's NIC object with the flow (its
	// findings first, with the others'), and keeps a flow whose peer is
	// not built yet, which the NIC object reads.
	lazyNIC   bool
	releaseAt []int32 // lazyNIC: the last flow that reads each flow (itself, or a flow whose peer it is)
	timeline  *pfc.Timeline
	inferred  []int // each flow's inferred connection's ID (inferConnections), nil for none
}

// startReport builds the head of the report (the capture, the
// connections) and what its flows need of each other. With stream, the
// capture's totals the flows add to are computed first and the flows are
// not listed in the report (FinishStream).
func (a *Analyzer) startReport(release, stream bool) *reportBuild {
	var rel *releaser
	if release {
		a.releaseTables()
		if len(a.flowList) >= releaseEvery {
			rel = newReleaser(a.opts.OnRelease, a.opts.heap)
			rel.call() // before the report is allocated: the tables' memory is free
		}
	}
	r := &Report{
		Capture:   a.capture,
		cmOrphans: append([]cmOrphan(nil), a.conns.orphans...),
		merge:     !stream && !a.opts.NoMerge,
	}
	a.wrapped.report(&r.Capture)
	r.Capture.CutFrames = a.cut.Facts().Frames
	if r.pause = a.pause.Snapshot(); r.pause != nil {
		r.Pause, r.Capture.LinkSpeedBps, r.Capture.PauseFramesUnlisted = r.pause.Stats(), a.opts.LinkSpeed, r.pause.Unlisted()
	}
	// The report holds copies of the connections. The flows of the last
	// report (release) read those, so that the Analyzer's are let go:
	// the Analyzer is fed no more, and nothing the report's owner does to
	// them changes a flow already built.
	r.Connections = make([]Connection, len(a.conns.list))
	for i, c := range a.conns.list {
		r.Connections[i] = *c
		if release {
			a.conns.list[i] = &r.Connections[i]
		}
	}
	inferred := a.inferConnections(r)
	if !stream {
		r.Flows = make([]Flow, 0, len(a.flowList))
	}
	b := &reportBuild{a: a, r: r, acc: r, release: release, rel: rel, timeline: r.pause.Timeline(), inferred: inferred}
	b.fl = a.findings // the findings of the report: those listed, and those only the end can tell
	if !release {
		b.fl = a.findings.clone()
	}
	r.Capture.MalformedFrames = append([]Malformed{}, a.capture.MalformedFrames...)
	if !a.first.IsZero() {
		first, last := a.first, a.last
		r.Capture.FirstTime, r.Capture.LastTime = &first, &last
		r.Capture.DurationSeconds = last.Sub(first).Seconds()
	}
	// Flows of only CNPs take their transport from other flows: name them
	// all before Finish starts releasing flows.
	b.cnpTransport = a.untypedTransports()
	b.evidence = make([]lossEvidence, len(a.flowList)) // reads the peer flows: before any is released
	if !stream {                                       // a stream builds each NIC object with its flow
		b.nics = make([]*NIC, len(a.flowList))
	}
	b.sh = a.shardReport(r)
	b.lazyNIC = stream
	if stream {
		b.releaseAt = make([]int32, len(a.flowList))
		for i, f := range a.flowList {
			b.releaseAt[i] = max(b.releaseAt[i], int32(i))
			if f.peer >= 0 {
				b.releaseAt[f.peer] = max(b.releaseAt[f.peer], int32(i))
			}
		}
	}
	for i, f := range a.flowList {
		b.evidence[i] = a.evidenceOf(f)
		var fs []Finding
		if b.lazyNIC {
			fs = a.nicFindings(f)
		} else {
			b.nics[i], fs = a.nicReport(f, nil)
		}
		if len(fs) > 0 {
			b.sh.more(i).nic = fs // the combiner lists them, in the capture's order of flows
		}
	}
	if stream { // what the combiner needs before the flows
		b.fedPos = b.sh.listFed(r, &b.fl)
		if release {
			a.findings = b.fl // listFed took the list a.findings shares
		}
		a.refsFullOf(b.sh)
		r.Capture.NotCaptured += a.notCapturedOf(b.evidence)
		r.Capture.FlowsDropped = a.dropSketch.estimate()
		b.acc = &Report{}
	}
	return b
}

// flow builds the report of the i-th flow (in order) into fr, releasing
// the flow when the report does. A stream's flow (lazyNIC) writes its NIC
// object into spare when not nil (ReportStream.Reuse); flow returns spare
// when it did not.
func (b *reportBuild) flow(i int, fr *Flow, spare *NIC) *NIC {
	a := b.a
	f := a.flowList[i]
	a.flowReport(f, b.release, fr)
	if b.inferred != nil && b.inferred[i] != 0 {
		id := b.inferred[i]
		fr.Connection = &id
	}
	applyPause(b.timeline, fr)
	if !f.hasTransport {
		fr.Transport = b.cnpTransport[f.index]
	}
	fed := fedFindings{list: b.fl.list}
	if b.fedPos != nil { // listFed took them
		fed = fedFindings{list: b.r.Findings, pos: b.fedPos}
	}
	cls := a.attribute(b.acc, fed, f, fr, b.evidence[i], b.sh, i)
	if b.lazyNIC {
		if fr.NIC, _ = a.nicReport(f, spare); fr.NIC != nil {
			spare = nil
		}
	} else {
		fr.NIC = b.nics[i]
	}
	if b.lazyNIC && b.release {
		if int(b.releaseAt[i]) <= i { // no flow left reads it
			a.flowList[i] = nil
		}
		if p := f.peer; p >= 0 && p < int32(i) && int(b.releaseAt[p]) <= i {
			a.flowList[p] = nil
		}
		b.evidence[i] = lossEvidence{}
	} else if b.release {
		a.flowList[i] = nil
		b.nics[i] = nil
		b.evidence[i] = lossEvidence{}
	}
	if (i+1)%releaseCheck == 0 { // b.rel is nil unless the flows are released
		b.rel.maybe()
	}
	for _, pm := range f.reqMsg.pending() {
		if pm.reported {
			continue
		}
		sev, detail := SeverityWarning, fmt.Sprintf("message of PSNs %d–%d never completed: PSNs inside it are missing (%d bytes seen)", pm.from, pm.to, pm.bytes)
		switch {
		case pm.noStart:
			// No message of the stream ended before it and its FIRST
			// never came: where it began is unknown, before the capture.
			sev, detail = SeverityInfo, fmt.Sprintf("message ending at PSN %d began before the flow's first captured packet (%d bytes seen): its FIRST is not in the capture (the capture began inside it, or missed the flow's first packets)", pm.to, pm.bytes)
		case cls.onlyNotCaptured(pm.from, pm.to):
			sev, detail = SeverityInfo, detail+notCapturedNote
		}
		x := b.sh.more(i) // the combiner lists it, within the capture's cap
		x.end = append(x.end, Finding{Frame: pm.frame, Time: pm.at, Kind: KindIncomplete, Severity: sev, Flow: f.flowID(), File: a.opts.File, Detail: detail})
	}
	return spare
}

// end lists the findings listed while the Analyzer was fed, once every
// flow is built: the combiner lists the rest (the flows', the cut, the
// pause and the CM findings), within the capture's cap, and sorts them.
func (b *reportBuild) end() *Report {
	r := b.r
	r.Capture.FlowsDropped = b.a.dropSketch.estimate()
	if b.fedPos != nil { // a stream listed them before its flows
		b.sh.mapMarks(b.fedPos)
		return r
	}
	b.sh.listFindings(r, &b.fl)
	if b.release {
		b.a.findings = b.fl // listFed took the list a.findings shares
	}
	return r
}

// flowValues holds the values a flow's report points to: one allocation
// for all of them.
type flowValues struct {
	conn                       int
	psnFirst, psnLast          uint32
	mtuInferred, mtuNegotiated int
}

// flowReport builds the report of a flow into out (all of it); with move,
// it takes the flow's slices instead of copying them (Finish: the flow is
// discarded).
func (a *Analyzer) flowReport(f *flowState, move bool, out *Flow) {
	keep := func(v []Sample) []Sample {
		if move {
			return v
		}
		return append([]Sample{}, v...)
	}
	cold := f.coldOf()
	// Cleared, then set: a composite literal was built aside and copied
	// into out (a Flow is 840 bytes).
	*out = Flow{}
	out.Src, out.Dst, _ = f.dir.names()
	out.Tunnel = f.dir.tun.report()
	out.DestQP, out.prio, out.Transport = f.qp, f.prio, f.transport.String()
	out.Packets, out.WireBytes, out.PayloadBytes = f.packets, f.wireBytes, f.payloadBytes
	out.ActiveNs, out.activeBytes = f.activeNs, f.activeBytes
	out.FirstTime, out.LastTime = a.firstTime(f), a.lastTime(f)
	out.Messages = Messages{Count: f.msgs.count, Bytes: f.msgs.bytes, MinSize: f.msgs.minSize, MaxSize: f.msgs.maxSize, Incomplete: cold.incomplete, DMALengthMismatches: cold.dmaMismatches}
	out.Ops, out.Messages.SizeBuckets = f.mix.report()
	out.Congestion = cold.congestion
	out.ICRC = ICRCCounts{OK: f.icrcOK, Bad: cold.icrcBad, Unverifiable: f.icrcUnverifiable()}
	out.IntervalSeconds = a.opts.Interval.Seconds()
	if !move {
		out.Series = []Sample{}
	}
	if s := f.series; s != nil {
		out.IntervalSeconds = time.Duration(max(s.interval, int64(a.opts.Interval))).Seconds()
		out.Series = keep(s.samples)
	}
	if cold.srcPorts != nil {
		out.ICRC.PortRewritten = cold.srcPorts.rewritten
	}
	out.ICRC.OriginalSrcPorts = cold.srcPorts.list()
	var vals *flowValues
	if f.conn >= 0 || f.psn.seen || f.inferredMTU > 0 {
		vals = &flowValues{}
	}
	if f.conn >= 0 {
		vals.conn = a.conns.list[f.conn].ID
		out.Connection = &vals.conn
	}
	if f.resp != nil {
		out.Responses = *f.resp
		out.Responses.NAKCodes = copyMap(f.resp.NAKCodes)
		out.Responses.RNRTimers = copyMap(f.resp.RNRTimers)
	}
	out.Requests = Requests{
		Packets:       f.requestPackets(),
		Missing:       f.psn.missing(),
		Gaps:          []Gap{},
		Retransmitted: cold.retrans,
		Duplicates:    cold.dups,
		OutOfOrder:    cold.ooo,

		RetransmitCauses: cold.causes,
	}
	if f.psn.seen {
		vals.psnFirst, vals.psnLast = f.psn.first, f.psn.high
		out.Requests.PSNFirst, out.Requests.PSNLast = &vals.psnFirst, &vals.psnLast
		out.Requests.next, out.Requests.low = f.psn.next, f.psn.low
		if f.log != nil {
			out.Requests.head, out.Requests.headMsgs = f.log.lists(move)
		}
		out.Requests.lastKey, out.Requests.hasLast = f.lastKey, f.hasLast
		for _, pm := range f.reqMsg.pending() {
			if pm.noStart {
				out.Requests.pendingTo = append(out.Requests.pendingTo, pm.to)
			}
		}
		if f.log != nil {
			out.Requests.firstFrame = f.log.firstFrame
		}
	}
	for _, g := range f.psn.gaps() {
		out.Requests.Gaps = append(out.Requests.Gaps, Gap{From: g.from, To: g.to, Count: g.count(), Frame: g.frame})
	}
	if f.rtt != nil {
		h := f.rtt.Clone()
		out.rtt = &h
		out.Responses.RTT = rttSummary(&h)
	}
	out.MTU.MaxPayload = int(f.maxPayload)
	if f.inferredMTU > 0 {
		vals.mtuInferred = int(f.inferredMTU)
		out.MTU.Inferred = &vals.mtuInferred
	}
	if f.conn >= 0 {
		if vals.mtuNegotiated = a.conns.list[f.conn].pathMTU(); vals.mtuNegotiated > 0 {
			out.MTU.Negotiated = &vals.mtuNegotiated
		}
	}
	out.MTU.AboveNegotiated = cold.aboveMTU
	out.reqOrphan, out.reqOpen = f.reqMsg.orphan(), openOf(&f.reqMsg.cur)
	if cold.respMsg != nil {
		out.respOrphan, out.respOpen = cold.respMsg.orphan(), openOf(&cold.respMsg.cur)
	}
	if f.reqMsg.cur.open {
		out.Messages.Incomplete++
	}
	if cold.respMsg != nil && cold.respMsg.cur.open {
		out.Messages.Incomplete++
	}
	for _, pm := range f.reqMsg.pending() {
		if !pm.reported { // a reported one is counted in cold.incomplete
			out.Messages.Incomplete++
		}
	}
	setRates(out)
}

// openOf describes a message still open at the end of the capture.
func openOf(m *message) seamMessage {
	if !m.open {
		return seamMessage{}
	}
	return seamMessage{valid: true, psn: m.next, start: m.start, bytes: m.bytes, broken: m.broken, isWrite: m.isWrite, hasDMA: m.hasDMA, dmaLen: m.dmaLen}
}

func copyMap(m map[string]uint64) map[string]uint64 {
	if m == nil {
		return nil
	}
	out := make(map[string]uint64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// setRates computes the throughput over the flow's duration, and over
// the time it was sending.
func setRates(f *Flow) {
	f.ThroughputBps, f.WireBps, f.ActiveThroughputBps = nil, nil, nil
	if f.ActiveNs > 0 {
		ap := float64(f.activeBytes) * 8 / (float64(f.ActiveNs) / 1e9)
		f.ActiveThroughputBps = &ap
	}
	d := f.LastTime.Sub(f.FirstTime)
	if f.Packets < 2 || d <= 0 {
		return
	}
	tp := float64(f.PayloadBytes) * 8 / d.Seconds()
	wp := float64(f.WireBytes) * 8 / d.Seconds()
	f.ThroughputBps, f.WireBps = &tp, &wp
}
