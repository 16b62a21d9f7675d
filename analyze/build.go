package analyze

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Report returns the report of everything fed so far. It may be called
// more than once; the Analyzer can go on being fed.
func (a *Analyzer) Report() *Report { return a.report(false) }

// Finish returns the report of everything fed, like Report, and frees the
// flow table while it builds the report, so that memory peaks at about the
// larger of the two rather than at their sum (with a million flows, each
// is hundreds of megabytes). The Analyzer must not be used afterwards.
func (a *Analyzer) Finish() *Report {
	a.flows, a.hostMTU, a.byHosts = nil, nil, nil
	a.flowCache = [flowCacheLen]cachedFlow{}
	if len(a.flowList) >= releaseEvery && a.opts.OnRelease != nil {
		a.opts.OnRelease() // before the reports are allocated: the map's memory is free
	}
	return a.report(true)
}

// releaseEvery is how many flows Finish turns into reports between two
// garbage collections, which hand the memory of the flows released to the
// reports that follow.
const releaseEvery = 1 << 15

func (a *Analyzer) report(release bool) *Report {
	r := &Report{
		Capture:         a.capture,
		Connections:     append([]Connection{}, a.conns.list...),
		Flows:           make([]Flow, 0, len(a.flowList)),
		Findings:        append([]Finding{}, a.findings...),
		FindingsDropped: a.dropped,
		cmOrphans:       append([]cmOrphan(nil), a.conns.orphans...),
	}
	r.Capture.MalformedFrames = append([]Malformed{}, a.capture.MalformedFrames...)
	if a.capture.Frames > 0 {
		first, last := a.first, a.last
		r.Capture.FirstTime, r.Capture.LastTime = &first, &last
		r.Capture.DurationSeconds = last.Sub(first).Seconds()
	}
	// Flows of only CNPs take their transport from other flows: name them
	// all before Finish starts releasing flows.
	cnpTransport := a.untypedTransports()
	evidence := make([]lossEvidence, len(a.flowList)) // reads the peer flows: before any is released
	nics := make([]*NIC, len(a.flowList))
	var nicFindings []Finding
	sh := a.shardReport(r)
	for i, f := range a.flowList {
		evidence[i] = a.evidenceOf(f)
		var fs []Finding
		nics[i], fs = a.nicReport(f)
		if sh != nil {
			sh.flows[i].nic = fs // the combiner interleaves the shards' flows
			continue
		}
		nicFindings = append(nicFindings, fs...)
	}
	for _, fd := range nicFindings {
		if len(r.Findings) >= a.opts.MaxFindings {
			r.FindingsDropped++
			continue
		}
		r.Findings = append(r.Findings, fd)
	}
	for i, f := range a.flowList {
		fr := a.flowReport(f, release)
		if !f.hasTransport {
			fr.Transport = cnpTransport[f.index]
		}
		end := sh.endOf(i)
		cls := a.attribute(r, f, &fr, evidence[i], end)
		fr.NIC = nics[i]
		r.Flows = append(r.Flows, fr)
		if release {
			a.flowList[i] = nil
			if (i+1)%releaseEvery == 0 && a.opts.OnRelease != nil {
				a.opts.OnRelease()
			}
		}
		for _, pm := range f.reqMsg.pending {
			if end == nil && len(r.Findings) >= a.opts.MaxFindings {
				r.FindingsDropped++
				continue
			}
			fd := Finding{Frame: pm.frame, Kind: KindIncomplete, Severity: SeverityWarning, Flow: f.name(), File: a.opts.File,
				Detail: fmt.Sprintf("message of PSNs %d–%d never completed: PSNs inside it are missing (%d bytes seen)", pm.from, pm.to, pm.bytes)}
			if !pm.noStart && cls.onlyNotCaptured(pm.from, pm.to) {
				fd.Severity, fd.Detail = SeverityInfo, fd.Detail+notCapturedNote
			}
			if end != nil {
				*end = append(*end, fd)
				continue
			}
			r.Findings = append(r.Findings, fd)
		}
	}
	r.Capture.FlowsDropped = a.dropSketch.estimate()
	if sh != nil {
		return r // the combiner adds the cut finding and sorts
	}
	if f, ok := a.cutFinding(); ok {
		r.addFinding(f, a.opts.MaxFindings)
	}
	for _, f := range a.cmFindings() {
		r.addFinding(f, a.opts.MaxFindings)
	}
	sortFindings(r.Findings)
	return r
}

// flowReport builds the report of a flow; with move, it takes the flow's
// slices instead of copying them (Finish: the flow is discarded).
func (a *Analyzer) flowReport(f *flowState, move bool) Flow {
	keep := func(v []Sample) []Sample {
		if move {
			return v
		}
		return append([]Sample{}, v...)
	}
	out := Flow{
		Src:             f.key.src.String(),
		Dst:             f.key.dst.String(),
		DestQP:          f.key.qp,
		Transport:       f.transport.String(),
		Packets:         f.packets,
		WireBytes:       f.wireBytes,
		PayloadBytes:    f.payloadBytes,
		FirstTime:       f.first,
		LastTime:        f.last,
		Messages:        f.msgs,
		Congestion:      f.congestion,
		ICRC:            f.icrc,
		IntervalSeconds: time.Duration(max(f.interval, int64(a.opts.Interval))).Seconds(),
		Series:          keep(f.series),
	}

	out.ICRC.OriginalSrcPorts = f.srcPorts.list()
	if f.conn >= 0 {
		id := a.conns.list[f.conn].ID
		out.Connection = &id
	}
	if f.resp != nil {
		out.Responses = *f.resp
		out.Responses.NAKCodes = copyMap(f.resp.NAKCodes)
		out.Responses.RNRTimers = copyMap(f.resp.RNRTimers)
	}
	out.Requests = Requests{
		Packets:       f.reqPackets,
		Missing:       f.psn.missing(),
		Gaps:          []Gap{},
		Retransmitted: f.retrans,
		Duplicates:    f.dups,
		OutOfOrder:    f.ooo,

		RetransmitCauses: f.loss.causes,
	}
	if f.psn.seen {
		first, high := f.psn.first, f.psn.high
		out.Requests.PSNFirst, out.Requests.PSNLast = &first, &high
		out.Requests.next, out.Requests.low = f.psn.next, f.psn.low
		if f.log != nil {
			out.Requests.head, out.Requests.headMsgs = f.log.head, f.log.msgs
			if !move {
				out.Requests.head = append([]headReq(nil), f.log.head...)
				out.Requests.headMsgs = append([]headMsg(nil), f.log.msgs...)
			}
			out.Requests.lastKey, out.Requests.hasLast = f.log.last, f.log.hasLast
		}
		for _, pm := range f.reqMsg.pending {
			if pm.noStart {
				out.Requests.pendingTo = append(out.Requests.pendingTo, pm.to)
			}
		}
		out.Requests.firstFrame = f.psn.firstFrame
	}
	for _, g := range f.psn.gaps {
		out.Requests.Gaps = append(out.Requests.Gaps, Gap{From: g.from, To: g.to, Count: g.count(), Frame: g.frame})
	}
	if f.rtt != nil {
		h := *f.rtt
		out.rtt = &h
		out.Responses.RTT = h.summary()
	}
	out.MTU.MaxPayload = int(f.maxPayload)
	if f.inferredMTU > 0 {
		m := int(f.inferredMTU)
		out.MTU.Inferred = &m
	}
	if f.conn >= 0 {
		if neg := a.conns.list[f.conn].pathMTU(); neg > 0 {
			out.MTU.Negotiated = &neg
		}
	}
	out.MTU.AboveNegotiated = f.aboveMTU
	out.reqOrphan, out.reqOpen = f.reqMsg.orphan, openOf(&f.reqMsg.cur)
	if f.respMsg != nil {
		out.respOrphan, out.respOpen = f.respMsg.orphan, openOf(&f.respMsg.cur)
	}
	if f.reqMsg.cur.open {
		out.Messages.Incomplete++
	}
	if f.respMsg != nil && f.respMsg.cur.open {
		out.Messages.Incomplete++
	}
	out.Messages.Incomplete += uint64(len(f.reqMsg.pending))
	setRates(&out)
	return out
}

// openOf describes a message still open at the end of the capture.
func openOf(m *message) seamMessage {
	if !m.open {
		return seamMessage{}
	}
	return seamMessage{valid: true, psn: m.next, start: m.start, bytes: m.bytes, broken: m.broken, isWrite: m.isWrite, hasDMA: m.hasDMA, dmaLen: m.dmaLen}
}

// joinSeam joins a message open at the end of one part with the orphan
// that completes it at the start of the next: both parts counted it as
// incomplete; together it is one complete message.
func joinSeam(m *Messages, open, orphan seamMessage) {
	if !open.valid || !orphan.valid || !orphan.complete || open.broken || orphan.broken || open.psn != orphan.psn {
		return
	}
	size := open.bytes + orphan.bytes
	m.Incomplete -= 2
	if m.Count == 0 || size < m.MinSize {
		m.MinSize = size
	}
	if size > m.MaxSize {
		m.MaxSize = size
	}
	m.Count++
	m.Bytes += size
	if open.isWrite && open.hasDMA && uint64(open.dmaLen) != size {
		m.DMALengthMismatches++
	}
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

// setRates computes the throughput over the flow's duration.
func setRates(f *Flow) {
	f.ThroughputBps, f.WireBps = nil, nil
	d := f.LastTime.Sub(f.FirstTime)
	if f.Packets < 2 || d <= 0 {
		return
	}
	tp := float64(f.PayloadBytes) * 8 / d.Seconds()
	wp := float64(f.WireBytes) * 8 / d.Seconds()
	f.ThroughputBps, f.WireBps = &tp, &wp
}

// sortFindings orders findings by file, then frame.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].File != fs[j].File {
			return fs[i].File < fs[j].File
		}
		return fs[i].Frame < fs[j].Frame
	})
}

// SeverityRank orders severities, worst first (error 0, warning 1, info 2).
func SeverityRank(s string) int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Merge adds the report of another capture (or of the next part of the
// same capture) to r. Flows with the same source, destination and QP are
// combined: counters add up, the PSN stream continues (a jump at the seam
// is a gap), the series and RTT histograms add up. Connections are
// appended, renumbered. Frame numbers stay those of each file.
func (r *Report) Merge(o *Report) {
	c := &r.Capture
	oc := &o.Capture
	c.Frames += oc.Frames
	c.RoCEPackets += oc.RoCEPackets
	c.OtherPackets += oc.OtherPackets
	c.Malformed += oc.Malformed
	c.MalformedFrames = append(c.MalformedFrames, oc.MalformedFrames...)
	c.Bytes += oc.Bytes
	c.FlowsDropped += oc.FlowsDropped
	c.PacketsOfDroppedFlows += oc.PacketsOfDroppedFlows
	c.ICRCPortRewritten += oc.ICRCPortRewritten
	c.OriginalLengthsClamped += oc.OriginalLengthsClamped
	c.CutFrames += oc.CutFrames
	c.ConnectionsDropped += oc.ConnectionsDropped
	if oc.FirstTime != nil && (c.FirstTime == nil || oc.FirstTime.Before(*c.FirstTime)) {
		t := *oc.FirstTime
		c.FirstTime = &t
	}
	if oc.LastTime != nil && (c.LastTime == nil || oc.LastTime.After(*c.LastTime)) {
		t := *oc.LastTime
		c.LastTime = &t
	}
	if c.FirstTime != nil && c.LastTime != nil {
		c.DurationSeconds = c.LastTime.Sub(*c.FirstTime).Seconds()
	}

	base := len(r.Connections)
	type connID struct {
		comm uint32
		ip   string
		qpn  uint32
	}
	idOf := func(c *Connection) connID {
		id := connID{comm: c.LocalCommID, ip: c.Requester.IP}
		if c.Requester.QPN != nil {
			id.qpn = *c.Requester.QPN
		}
		return id
	}
	connByID := make(map[connID]int)
	for i := range r.Connections {
		connByID[idOf(&r.Connections[i])] = i
	}
	applyCMOrphans(r.Connections, o.cmOrphans) // apply sets the send PSNs
	remap := make(map[int]int)
	for _, cn := range o.Connections {
		if i, ok := connByID[idOf(&cn)]; ok {
			mergeConn(&r.Connections[i], &cn)
			remap[cn.ID] = r.Connections[i].ID
			continue
		}
		old := cn.ID
		cn.ID = base + 1
		base++
		r.Connections = append(r.Connections, cn)
		remap[old] = cn.ID
	}

	idx := make(map[flowIDKey]int, len(r.Flows))
	for i, f := range r.Flows {
		idx[flowID(&f)] = i
	}
	for _, of := range o.Flows {
		if of.Connection != nil {
			id := remap[*of.Connection]
			of.Connection = &id
		}
		if i, ok := idx[flowID(&of)]; ok {
			mergeFlow(&r.Flows[i], &of)
			continue
		}
		idx[flowID(&of)] = len(r.Flows)
		r.Flows = append(r.Flows, of)
	}
	c.NotCaptured = 0
	for i := range r.Flows {
		c.NotCaptured += r.Flows[i].Requests.MissingNotCaptured
	}
	r.Findings = append(r.Findings, o.Findings...)
	sortFindings(r.Findings)
	r.FindingsDropped += o.FindingsDropped
}

type flowIDKey struct {
	src, dst string
	qp       uint32
}

func flowID(f *Flow) flowIDKey { return flowIDKey{f.Src, f.Dst, f.DestQP} }

func mergeConn(a, b *Connection) {
	if a.Responder.QPN == nil {
		a.Responder = b.Responder
		a.RemoteCommID = b.RemoteCommID
	}
	if b.State != StateRequested {
		a.State = b.State
		if b.RejectReason != "" {
			a.RejectReason = b.RejectReason
		}
	}
	fr := &a.Frames
	if fr.REP == 0 {
		fr.REP = b.Frames.REP
	}
	if fr.RTU == 0 {
		fr.RTU = b.Frames.RTU
	}
	if fr.REJ == 0 {
		fr.REJ = b.Frames.REJ
	}
	if fr.DREQ == 0 {
		fr.DREQ = b.Frames.DREQ
	}
	if fr.DREP == 0 {
		fr.DREP = b.Frames.DREP
	}
	a.setSendPSNs()
}

func mergeFlow(a, b *Flow) {
	if transportRank(b.Transport) > transportRank(a.Transport) {
		a.Transport = b.Transport
	}
	if a.Connection == nil {
		a.Connection = b.Connection
	}
	a.Packets += b.Packets
	a.WireBytes += b.WireBytes
	a.PayloadBytes += b.PayloadBytes
	if b.FirstTime.Before(a.FirstTime) {
		a.FirstTime = b.FirstTime
	}
	if b.LastTime.After(a.LastTime) {
		a.LastTime = b.LastTime
	}
	if a.Requests.PSNFirst != nil && b.Requests.PSNFirst != nil {
		reclassifyHead(a, b)
	}
	ev, causes := a.Requests.ev, a.Requests.RetransmitCauses
	ev.merge(&b.Requests.ev)
	causes.add(b.Requests.RetransmitCauses)
	mergeRequests(&a.Requests, &b.Requests)
	a.Requests.ev, a.Requests.RetransmitCauses = ev, causes
	cls := classify(&ev, a.Requests.Gaps, a.Requests.low)
	a.Requests.MissingNotCaptured, a.Requests.MissingLost = cls.notCaptured, cls.lost
	mergeResponses(&a.Responses, &b.Responses)
	m, n := &a.Messages, &b.Messages
	if n.Count > 0 && (m.Count == 0 || n.MinSize < m.MinSize) {
		m.MinSize = n.MinSize
	}
	if n.MaxSize > m.MaxSize {
		m.MaxSize = n.MaxSize
	}
	m.Count += n.Count
	m.Bytes += n.Bytes
	m.Incomplete += n.Incomplete
	m.DMALengthMismatches += n.DMALengthMismatches
	joinSeam(m, a.reqOpen, b.reqOrphan)
	joinSeam(m, a.respOpen, b.respOrphan)
	a.reqOpen, a.respOpen = b.reqOpen, b.respOpen
	if a.MTU.Inferred == nil {
		a.MTU.Inferred = b.MTU.Inferred
	}
	if a.MTU.Negotiated == nil {
		a.MTU.Negotiated = b.MTU.Negotiated
	}
	if b.MTU.MaxPayload > a.MTU.MaxPayload {
		a.MTU.MaxPayload = b.MTU.MaxPayload
	}
	a.MTU.AboveNegotiated += b.MTU.AboveNegotiated
	a.Congestion.ECNCE += b.Congestion.ECNCE
	a.Congestion.FECN += b.Congestion.FECN
	a.Congestion.BECN += b.Congestion.BECN
	a.Congestion.CNPs += b.Congestion.CNPs
	a.ICRC.OK += b.ICRC.OK
	a.ICRC.Bad += b.ICRC.Bad
	a.ICRC.Unverifiable += b.ICRC.Unverifiable
	a.ICRC.PortRewritten += b.ICRC.PortRewritten
	a.ICRC.OriginalSrcPorts = mergePorts(a.ICRC.OriginalSrcPorts, b.ICRC.OriginalSrcPorts)
	// Series of different intervals (one part coarsened) meet at the
	// coarser one, and stay within maxSeries.
	iv := max(int64(math.Round(a.IntervalSeconds*1e9)), int64(math.Round(b.IntervalSeconds*1e9)))
	a.Series = mergeSeries(coarsen(nil, a.Series, iv), coarsen(nil, b.Series, iv))
	for len(a.Series) > maxSeries {
		iv *= 2
		a.Series = coarsen(a.Series[:0], a.Series, iv)
	}
	a.IntervalSeconds = time.Duration(iv).Seconds()
	if b.rtt != nil {
		if a.rtt == nil {
			a.rtt = &rttHist{}
		}
		a.rtt.merge(b.rtt)
		a.Responses.RTT = a.rtt.summary()
	}
	a.NIC = mergeNIC(a.NIC, b.NIC)
	setRates(a)
}

func mergeRequests(a, b *Requests) {
	a.Retransmitted += b.Retransmitted
	a.Duplicates += b.Duplicates
	a.OutOfOrder += b.OutOfOrder
	a.Packets += b.Packets
	if b.PSNFirst == nil {
		a.Missing = clampMissing(a.Missing + b.Missing)
		return
	}
	if a.PSNFirst == nil {
		pk, rt, dp, oo := a.Packets, a.Retransmitted, a.Duplicates, a.OutOfOrder
		*a = *b
		a.Packets, a.Retransmitted, a.Duplicates, a.OutOfOrder = pk, rt, dp, oo
		return
	}
	// Two captures of unrelated runs can share a flow key: a second part
	// whose PSNs are nowhere near the first part's is another stream, not
	// a continuation (no gap at the seam).
	if d := psnDiff(b.low, a.next); d > maxSeamJump || d < -maxSeamJump {
		a.Gaps = append(a.Gaps, b.Gaps...)
		a.Missing = clampMissing(a.Missing + b.Missing)
		if psnDiff(*b.PSNLast, *a.PSNLast) > 0 {
			last := *b.PSNLast
			a.PSNLast = &last
		}
		a.next = b.next
		return
	}
	// PSNs are missing when neither part saw them, between the first PSN
	// and the end of the later part: a jump at the seam is a gap, and PSNs
	// one part missed but the other saw are not.
	base := a.low
	if psnDiff(b.low, base) < 0 {
		base = b.low
	}
	off := func(p uint32) int64 { return int64(psnDiff(p, base)) }
	untracked := subSat(a.Missing, gapSum(a.Gaps)) + subSat(b.Missing, gapSum(b.Gaps))
	seen := append(seenSpans(a, off), seenSpans(b, off)...)
	end := max(off(a.next), off(b.next))
	var gaps []Gap
	cur := int64(0)
	for _, sp := range mergeSpans(seen) {
		if sp[0] > cur {
			gaps = append(gaps, gapBetween(cur, sp[0], base, a, b))
		}
		cur = max(cur, sp[1])
	}
	if end > cur {
		gaps = append(gaps, gapBetween(cur, end, base, a, b))
	}
	a.Gaps = gaps
	if a.Gaps == nil {
		a.Gaps = []Gap{}
	}
	a.Missing = clampMissing(untracked + gapSum(gaps))
	if psnDiff(*b.PSNLast, *a.PSNLast) > 0 {
		last := *b.PSNLast
		a.PSNLast = &last
	}
	if off(b.next) > off(a.next) {
		a.next = b.next
	}
	a.low = base
}

// reclassifyHead corrects the second part's first requests with what the
// first part saw: a request of a PSN the first part saw (a go-back-N
// resend right after the seam) is a retransmission, or a duplicate when it
// repeats the first part's last request byte for byte, and the messages
// and incomplete messages made of such requests are not news.
func reclassifyHead(a, b *Flow) {
	ar, br := &a.Requests, &b.Requests
	base := ar.low
	off := func(p uint32) int64 { return int64(psnDiff(p, base)) }
	spans := seenSpans(ar, off)
	inA := func(p uint32) bool {
		o := off(p)
		for _, sp := range spans {
			if o >= sp[0] && o < sp[1] {
				return true
			}
		}
		return false
	}
	cause := causeNone
	for i, e := range br.head {
		if !inA(e.psn) {
			break
		}
		if i == 0 {
			// The part before saw this PSN: the part begins inside a
			// resend episode, back to this PSN.
			br.ev.backs = append(br.ev.backs, psnRange{from: e.psn, to: *ar.PSNLast})
		}
		switch e.obs {
		case obsInOrder, obsGap:
		case obsFill:
			br.OutOfOrder--
		default:
			continue // already a retransmission or duplicate
		}
		if i == 0 && ar.hasLast && ar.lastKey == e.key {
			br.Duplicates++
			continue
		}
		br.Retransmitted++
		if cause == causeNone {
			cause = e.cause
			switch {
			case ar.ev.episode != causeNone:
				cause = ar.ev.episode // the resend began before the seam
			case ar.ev.openNAK != causeNone:
				cause = ar.ev.openNAK // the NAK came before the seam
			}
		}
		br.RetransmitCauses.count(cause)
	}
	for _, m := range br.headMsgs {
		if inA(m.from) && inA(m.to) {
			b.Messages.Count--
			b.Messages.Bytes -= m.bytes
		}
	}
	for _, to := range br.pendingTo {
		if inA(to) {
			b.Messages.Incomplete--
		}
	}
	// A message still open at the end of the first part that the second
	// part's resend completed is not incomplete.
	if o := a.reqOpen; o.valid && !o.broken {
		for _, m := range br.headMsgs {
			if psnDiff(m.from, o.start) <= 0 && psnDiff(m.to, o.psn) >= 0 {
				a.Messages.Incomplete--
				a.reqOpen = seamMessage{}
				break
			}
		}
	}
}

// maxSeamJump is the largest PSN distance between two parts that Merge
// still reads as one stream continuing.
const maxSeamJump = 1 << 16

func gapSum(gs []Gap) uint64 {
	var n uint64
	for _, g := range gs {
		n += uint64(g.Count)
	}
	return n
}

// seenSpans returns the PSN spans a part saw, as [from, to) offsets: from
// its first PSN to the one it expected next, less its gaps.
func seenSpans(r *Requests, off func(uint32) int64) [][2]int64 {
	var out [][2]int64
	cur := off(r.low)
	for _, g := range r.Gaps {
		if from := off(g.From); from > cur {
			out = append(out, [2]int64{cur, from})
		}
		cur = off(g.To) + 1
	}
	if end := off(r.next); end > cur {
		out = append(out, [2]int64{cur, end})
	}
	return out
}

// mergeSpans sorts spans and joins those that overlap or touch.
func mergeSpans(sp [][2]int64) [][2]int64 {
	sort.Slice(sp, func(i, j int) bool { return sp[i][0] < sp[j][0] })
	var out [][2]int64
	for _, s := range sp {
		if n := len(out); n > 0 && s[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}

// gapBetween makes the gap [from, to) (offsets from base), with the frame
// of the gap of either part that begins it, else the first frame of the
// second part (a jump at the seam).
func gapBetween(from, to int64, base uint32, a, b *Requests) Gap {
	g := Gap{From: psnAdd(base, from), To: psnAdd(base, to-1), Count: uint32(to - from), Frame: b.firstFrame}
	for _, parts := range [][]Gap{a.Gaps, b.Gaps} {
		for _, og := range parts {
			if psnDiff(g.From, og.From) >= 0 && psnDiff(g.From, og.To) <= 0 {
				g.Frame = og.Frame
				return g
			}
		}
	}
	return g
}

func mergeResponses(a, b *Responses) {
	a.Packets += b.Packets
	a.ACKs += b.ACKs
	a.NAKs += b.NAKs
	a.RNRNAKs += b.RNRNAKs
	a.ReadResponses += b.ReadResponses
	a.AtomicACKs += b.AtomicACKs
	a.NAKCodes = addMap(a.NAKCodes, b.NAKCodes)
	a.RNRTimers = addMap(a.RNRTimers, b.RNRTimers)
}

func addMap(a, b map[string]uint64) map[string]uint64 {
	if len(b) == 0 {
		return a
	}
	if a == nil {
		a = make(map[string]uint64, len(b))
	}
	for k, v := range b {
		a[k] += v
	}
	return a
}

// mergeSeries adds two series ordered by start time.
func mergeSeries(a, b []Sample) []Sample {
	out := make([]Sample, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i].Start.Before(b[j].Start)):
			out = append(out, a[i])
			i++
		case i >= len(a) || b[j].Start.Before(a[i].Start):
			out = append(out, b[j])
			j++
		default:
			s := a[i]
			s.Packets += b[j].Packets
			s.PayloadBytes += b[j].PayloadBytes
			s.WireBytes += b[j].WireBytes
			out = append(out, s)
			i++
			j++
		}
	}
	return out
}
