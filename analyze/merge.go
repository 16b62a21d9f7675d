package analyze

import (
	"errors"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/nic"
)

// ErrNotMergeable is Merge's answer to a report that lacks the state
// merging needs: the PSN spans, messages cut at the seams, RTT histograms
// and loss evidence an Analyzer keeps beside the public fields. A report
// read back from JSON has only the public fields; merging it would give
// wrong counts (missing PSNs, retransmissions, incomplete messages), so
// Merge refuses it. Merge reports as the Analyzers returned them.
var ErrNotMergeable = errors.New("analyze: report has no merge state (not made by an Analyzer, e.g. read from JSON): it cannot be merged")

// mergeable says whether Merge can take the report: one an Analyzer
// made, or one with nothing in it yet.
func (r *Report) mergeable() bool {
	return r.merge || (r.Capture.Frames == 0 && len(r.Flows) == 0 && len(r.Connections) == 0)
}

// Merge adds the report of another capture (or of the next part of the
// same capture) to r. Flows with the same source, destination and QP are
// combined: counters add up, the PSN stream continues (a jump at the seam
// is a gap), the series and RTT histograms add up. Connections are
// appended, renumbered. Frame numbers stay those of each file.
//
// Each report judged its frames shorter than their length fields (a
// tool's cut or a lie, see package internal/toolcut) by the frames before
// them in its own part; Merge does not judge them again. For the parts of
// one capture, Sharded judges them as the whole would.
//
// Merge returns ErrNotMergeable, and changes nothing, when either report
// lacks the merge state (see ErrNotMergeable); an empty Report literal
// can be merged into.
func (r *Report) Merge(o *Report) error {
	if !r.mergeable() || !o.mergeable() {
		return ErrNotMergeable
	}
	r.merge = true
	c := &r.Capture
	oc := &o.Capture
	c.Frames += oc.Frames
	c.RoCEPackets += oc.RoCEPackets
	c.OtherPackets += oc.OtherPackets
	c.others.merge(&oc.others)
	c.others.list(c)
	c.Malformed += oc.Malformed
	c.MalformedFrames = append(c.MalformedFrames, oc.MalformedFrames...)
	c.Bytes += oc.Bytes
	c.FlowsDropped += oc.FlowsDropped
	c.PacketsOfDroppedFlows += oc.PacketsOfDroppedFlows
	c.ICRCPortRewritten += oc.ICRCPortRewritten
	c.OriginalLengthsClamped += oc.OriginalLengthsClamped
	c.CutFrames += oc.CutFrames
	c.ConnectionsDropped += oc.ConnectionsDropped
	c.Interrupted = c.Interrupted || oc.Interrupted
	c.addWraps(oc)
	r.addPause(o)
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
		tun  FlowTunnel // two tenants may share the rest
	}
	idOf := func(c *Connection) connID {
		id := connID{comm: c.LocalCommID, ip: c.Requester.IP}
		if c.Requester.QPN != nil {
			id.qpn = *c.Requester.QPN
		}
		if c.Tunnel != nil {
			id.tun = *c.Tunnel
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

	idx := make(map[FlowID]int, len(r.Flows))
	for i, f := range r.Flows {
		idx[f.ID()] = i
	}
	for _, of := range o.Flows {
		of = of.detached()
		if of.Connection != nil {
			id := remap[*of.Connection]
			of.Connection = &id
		}
		if i, ok := idx[of.ID()]; ok {
			if rc := r.Flows[i].Connection; rc != nil && of.Connection != nil && r.inferred(*rc) {
				r.Flows[i].Connection = nil // the other part's: a CM connection, or the same inferred one
			}
			mergeFlow(&r.Flows[i], &of)
			continue
		}
		idx[of.ID()] = len(r.Flows)
		r.Flows = append(r.Flows, of)
	}
	c.NotCaptured = 0
	tl := r.pause.Timeline()
	for i := range r.Flows {
		c.NotCaptured += r.Flows[i].Requests.MissingNotCaptured
		applyPause(tl, &r.Flows[i])
	}
	for _, fd := range o.Findings {
		if fd.Connection != 0 {
			fd = fd.withConnection(remap[fd.Connection])
		}
		r.Findings = append(r.Findings, fd)
	}
	sortFindings(r.Findings)
	r.FindingsDropped += o.FindingsDropped
	r.settleInferred()
	return nil
}

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
	a.ActiveNs += b.ActiveNs
	a.activeBytes += b.activeBytes
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
	for _, sb := range n.SizeBuckets {
		m.SizeBuckets = addSizeBucket(m.SizeBuckets, sizeBucketOf(sb.Min), sb.Count)
	}
	a.Ops.add(&b.Ops)
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
		} else if a.Responses.RTTAt != b.Responses.RTTAt {
			a.Responses.RTTAt = "" // measured in more than one capture
		}
		if a.Responses.RTT == nil {
			a.Responses.RTTAt = b.Responses.RTTAt
		}
		a.rtt.Merge(b.rtt)
		a.Responses.RTT = rttSummary(a.rtt)
	}
	a.NIC = nic.Merge(a.NIC, b.NIC)
	setRates(a)
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
	m.SizeBuckets = addSizeBucket(m.SizeBuckets, sizeBucketOf(size), 1)
	if open.isWrite && open.hasDMA && uint64(open.dmaLen) != size {
		m.DMALengthMismatches++
	}
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

// detached returns a copy of f that shares nothing Merge changes in
// place (maps, slices it appends to, the RTT histogram, the NIC object
// and its figures): a merged report must leave the reports it took
// unchanged, as the command merges the same reports more than once
// (several files, then capture points).
func (f Flow) detached() Flow {
	f.Responses.NAKCodes = maps.Clone(f.Responses.NAKCodes)
	f.Responses.RNRTimers = maps.Clone(f.Responses.RNRTimers)
	f.Requests.Gaps = slices.Clone(f.Requests.Gaps)
	f.Requests.head = slices.Clone(f.Requests.head)
	f.Requests.headMsgs = slices.Clone(f.Requests.headMsgs)
	f.Requests.pendingTo = slices.Clone(f.Requests.pendingTo)
	f.ICRC.OriginalSrcPorts = slices.Clone(f.ICRC.OriginalSrcPorts)
	f.Series = slices.Clone(f.Series)
	f.Messages.SizeBuckets = slices.Clone(f.Messages.SizeBuckets)
	if f.Tunnel != nil {
		t := *f.Tunnel
		f.Tunnel = &t
	}
	if f.rtt != nil {
		h := f.rtt.Clone()
		f.rtt = &h
	}
	if f.NIC != nil {
		f.NIC = f.NIC.Clone()
	}
	return f
}

// TakeRTT gives f the round-trip times of g, the same flow as one capture
// among several (capture points) measured it, at the file named at
// (Responses.RTTAt): its summary and the samples a later Merge adds to.
// Without samples in g, f has none.
func (f *Flow) TakeRTT(g *Flow, at string) {
	f.rtt, f.Responses.RTT, f.Responses.RTTAt = nil, nil, ""
	if g.rtt == nil {
		return
	}
	h := g.rtt.Clone()
	f.rtt = &h
	f.Responses.RTT, f.Responses.RTTAt = rttSummary(&h), at
}
