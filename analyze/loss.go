package analyze

import (
	"fmt"
	"sort"
	"time"

	"github.com/roce-dissect/roce-dissect/layers"
)

// Loss attribution. A request PSN missing from an RC flow is either
//   - not captured: a later response of the responder (ACK, NAK, READ
//     response, atomic ACK) shows it received the PSN, and it was never
//     resent: the capture tool missed it;
//   - lost: the responder NAKed it (PSN sequence error) or the requester
//     resent it: it was lost before the responder;
//   - unknown: no evidence either way (no responses, UC, UD).
//
// The evidence comes after the jump over the missing PSNs, so the hot path
// only records the jumps, the NAKs and the resends, and the report
// classifies them (see docs/analysis.md, "Loss attribution").

// Kinds of findings of loss attribution.
const (
	// KindCaptureGap sums up per flow the PSNs the capture missed but the
	// responder acknowledged (capture-side drops, not network loss).
	KindCaptureGap = "capture_gap"
	// KindPSNBeforeStart is a first request PSN before the PSN the CM
	// handshake of its connection said its requests start at.
	KindPSNBeforeStart = "psn_before_start"
)

// RetransmitCauses splits the retransmissions of a flow by what preceded
// them: a NAK (PSN sequence error), an RNR NAK, or nothing (the
// requester's timer: a timeout).
type RetransmitCauses struct {
	NAK     uint64 `json:"nak"`
	RNR     uint64 `json:"rnr"`
	Timeout uint64 `json:"timeout"`
}

func (c *RetransmitCauses) add(o RetransmitCauses) {
	c.NAK += o.NAK
	c.RNR += o.RNR
	c.Timeout += o.Timeout
}

// Causes of a resend.
const (
	causeNone uint8 = iota
	causeNAK
	causeRNR
	causeTimeout
)

func (c *RetransmitCauses) count(cause uint8) {
	switch cause {
	case causeNAK:
		c.NAK++
	case causeRNR:
		c.RNR++
	default:
		c.Timeout++
	}
}

// gapEvent is a jump over missing PSNs, kept for the report to classify.
type gapEvent struct {
	from, to uint32
	frame    uint64
	t        time.Time
}

// psnRange is an inclusive range of PSNs.
type psnRange struct{ from, to uint32 }

// incompleteRef is an incomplete_message finding of the request stream
// and the PSNs of its message, which the report may find were only
// missed by the capture.
type incompleteRef struct {
	idx      int // index in Analyzer.findings
	from, to uint32
}

// maxLossLog bounds each list of a flow's loss log.
const maxLossLog = 256

// lossLog is the evidence of one flow, allocated at its first anomaly.
type lossLog struct {
	jumps      []gapEvent      // request flow: jumps over missing PSNs
	backs      []psnRange      // request flow: go-back episodes, first PSN resent to the highest PSN sent then
	incomplete []incompleteRef // request flow
	naks       []uint32        // response flow: PSNs of PSN sequence error NAKs
}

// lossState is the loss attribution state of one flow.
type lossState struct {
	log *lossLog
	// Response flow: the highest request PSN the responder showed it
	// received, and the last NAK or RNR NAK not yet followed by a resend.
	ackHigh  uint32
	nakPSN   uint32
	hasAck   bool
	nakCause uint8 // causeNAK or causeRNR; causeNone when used or none
	// Request flow: the resend episode in progress.
	cause    uint8 // cause of the episode; causeNone outside one
	prevBack bool  // the previous request went back (a fill or a resend)
	backFrom uint32
	causes   RetransmitCauses
}

func (s *lossState) logOf() *lossLog {
	if s.log == nil {
		s.log = &lossLog{}
	}
	return s.log
}

// covered records that the responder received every PSN up to psn.
func (s *lossState) covered(psn uint32) {
	if !s.hasAck || psnDiff(psn, s.ackHigh) > 0 {
		s.ackHigh, s.hasAck = psn, true
	}
}

// responseEvidence records what a response says about the requests it
// answers: its PSN (less one for a NAK) was received, a NAK asks for a
// resend.
func (a *Analyzer) responseEvidence(f *flowState, p *Packet) {
	psn := p.BTH.PSN
	if p.AETH == nil {
		f.loss.covered(psn) // READ response MIDDLE
		return
	}
	switch {
	case p.AETH.IsACK():
		f.loss.covered(psn)
	case p.AETH.IsRNRNAK():
		f.loss.covered(psnAdd(psn, -1))
		f.loss.nakPSN, f.loss.nakCause = psn, causeRNR
	case p.AETH.IsNAK():
		f.loss.covered(psnAdd(psn, -1))
		if p.AETH.NAKCode() == layers.NAKPSNSequenceError {
			f.loss.nakPSN, f.loss.nakCause = psn, causeNAK
			if l := f.loss.logOf(); len(l.naks) < maxLossLog {
				l.naks = append(l.naks, psn)
			}
		}
	}
}

// requestEvidence follows resends and jumps of a request flow; it returns
// the cause of a retransmission (obsOld that is not a duplicate).
func (a *Analyzer) requestEvidence(f *flowState, p *Packet, obs observation, isDup bool, gap psnGap, high uint32) {
	s := &f.loss
	psn := p.BTH.PSN
	switch obs {
	case obsInOrder, obsGap:
		s.prevBack, s.cause = false, causeNone
		if obs == obsGap {
			if l := s.logOf(); len(l.jumps) < maxLossLog {
				l.jumps = append(l.jumps, gapEvent{from: gap.from, to: gap.to, frame: p.Frame, t: p.Time})
			}
		}
	case obsFill:
		if !s.prevBack {
			s.prevBack, s.backFrom = true, psn
		}
	case obsOld:
		if isDup {
			return
		}
		if s.cause == causeNone {
			// A new resend episode: from the fill just before it, if any.
			from := psn
			if s.prevBack && psnDiff(s.backFrom, psn) < 0 {
				from = s.backFrom
			}
			s.cause = causeTimeout
			if r := a.peerFlow(f); r != nil && r.loss.nakCause != causeNone {
				s.cause, r.loss.nakCause = r.loss.nakCause, causeNone
			}
			if l := s.logOf(); len(l.backs) < maxLossLog {
				l.backs = append(l.backs, psnRange{from: from, to: high})
			}
		}
		s.prevBack = true
		s.causes.count(s.cause)
	}
}

// pendingCause is the cause a request would have if it were a resend: the
// NAK or RNR NAK its peer has not seen answered yet, else a timeout. Merge
// uses it for the first requests of a part that the part before shows are
// resends.
func (a *Analyzer) pendingCause(f *flowState) uint8 {
	if f.loss.cause != causeNone {
		return f.loss.cause
	}
	if r := a.peerFlow(f); r != nil && r.loss.nakCause != causeNone {
		return r.loss.nakCause
	}
	return causeTimeout
}

func (a *Analyzer) peerFlow(f *flowState) *flowState {
	if f.peer < 0 {
		return nil
	}
	return a.flowList[f.peer]
}

// startGap applies the connection's send PSN to a flow's first request:
// the PSNs from the send PSN up to it are missing; a first request before
// it is a finding.
func (a *Analyzer) startGap(f *flowState, p *Packet) {
	if f.conn < 0 {
		return
	}
	c := &a.conns.list[f.conn]
	if c.Frames.REQ == 0 || c.Frames.REP == 0 || c.Frames.REQ > p.Frame || c.Frames.REP > p.Frame {
		return // not set up inside this capture, before this request
	}
	send := c.Responder.SendPSN
	if f.key.src == a.conns.reqAt[f.conn].src {
		send = c.Requester.SendPSN
	}
	if send == nil {
		return
	}
	first := p.BTH.PSN
	d := psnDiff(first, *send)
	if d >= 0 && d <= maxSeamJump && !f.reqMsg.hasPrev {
		// The first message begins at the send PSN at the latest.
		f.reqMsg.prevEnd, f.reqMsg.hasPrev = psnAdd(*send, -1), true
	}
	switch {
	case d < 0:
		a.addFinding(p, KindPSNBeforeStart, SeverityWarning, f.name(), fmt.Sprintf("first request PSN %d is before PSN %d, where connection %d said this side's requests start", first, *send, c.ID))
	case d > 0 && d <= maxSeamJump:
		t := &f.psn
		g := psnGap{from: *send, to: psnAdd(first, -1), frame: p.Frame}
		t.low = *send
		t.gaps = append([]psnGap{g}, t.gaps...)
		if l := f.loss.logOf(); len(l.jumps) < maxLossLog {
			l.jumps = append(l.jumps, gapEvent{from: g.from, to: g.to, frame: p.Frame, t: p.Time})
		}
	}
}

// noteIncomplete remembers an incomplete_message finding of the request
// stream just added, with its message's PSNs.
func (a *Analyzer) noteIncomplete(f *flowState, frame uint64, from, to uint32) {
	if n := len(a.findings); n == 0 || a.findings[n-1].Kind != KindIncomplete || a.findings[n-1].Frame != frame {
		return // not listed (beyond MaxFindings)
	}
	if l := f.loss.logOf(); len(l.incomplete) < maxLossLog {
		l.incomplete = append(l.incomplete, incompleteRef{idx: len(a.findings) - 1, from: from, to: to})
	}
}

// lossEvidence is what the report keeps of a request flow's evidence, for
// classification and for Merge.
type lossEvidence struct {
	rc     bool // RC: responses tell what the responder received
	jumps  []gapEvent
	backs  []psnRange
	naks   []uint32
	ack    uint32
	hasAck bool
	// openNAK is the cause of a NAK or RNR NAK no resend followed yet at
	// the end of the part: the next part's first resends answer it.
	openNAK uint8
	// episode is the cause of the resend episode the part ended in.
	episode uint8
}

// acknowledged says whether a transport's responder acknowledges every
// request (ACK, NAK, READ response), so that a response covers the PSNs
// before it: RC and XRC, and DC, which is RC-like between a DCI and a DCT.
func acknowledged(t layers.Transport) bool {
	return t == layers.TransportRC || t == layers.TransportXRC || t == layers.TransportDC
}

// evidenceOf gathers a request flow's evidence and its peer's.
func (a *Analyzer) evidenceOf(f *flowState) lossEvidence {
	ev := lossEvidence{rc: f.hasTransport && acknowledged(f.transport), episode: f.loss.cause}
	if f.loss.log != nil {
		ev.jumps = append([]gapEvent(nil), f.loss.log.jumps...)
		ev.backs = append([]psnRange(nil), f.loss.log.backs...)
	}
	if r := a.peerFlow(f); r != nil {
		ev.ack, ev.hasAck, ev.openNAK = r.loss.ackHigh, r.loss.hasAck, r.loss.nakCause
		if r.loss.log != nil {
			ev.naks = append([]uint32(nil), r.loss.log.naks...)
		}
	}
	return ev
}

// merge adds the evidence of the next part.
func (e *lossEvidence) merge(o *lossEvidence) {
	e.rc = e.rc || o.rc
	e.jumps = append(e.jumps, o.jumps...)
	e.backs = append(e.backs, o.backs...)
	e.naks = append(e.naks, o.naks...)
	e.openNAK, e.episode = o.openNAK, o.episode
	if o.hasAck && (!e.hasAck || psnDiff(o.ack, e.ack) > 0) {
		e.ack, e.hasAck = o.ack, true
	}
}

// span is a half-open range of PSN offsets [lo, hi).
type span struct{ lo, hi int64 }

// spanSet is a sorted list of disjoint spans.
type spanSet []span

func normalize(s []span) spanSet {
	sort.Slice(s, func(i, j int) bool { return s[i].lo < s[j].lo })
	var out spanSet
	for _, x := range s {
		if x.hi <= x.lo {
			continue
		}
		if n := len(out); n > 0 && x.lo <= out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, x.hi)
			continue
		}
		out = append(out, x)
	}
	return out
}

func (s spanSet) intersect(o spanSet) spanSet {
	var out spanSet
	i, j := 0, 0
	for i < len(s) && j < len(o) {
		lo, hi := max(s[i].lo, o[j].lo), min(s[i].hi, o[j].hi)
		if lo < hi {
			out = append(out, span{lo, hi})
		}
		if s[i].hi < o[j].hi {
			i++
		} else {
			j++
		}
	}
	return out
}

func (s spanSet) minus(o spanSet) spanSet {
	var out spanSet
	for _, x := range s {
		cur := x.lo
		for _, y := range o {
			if y.hi <= cur || y.lo >= x.hi {
				continue
			}
			if y.lo > cur {
				out = append(out, span{cur, y.lo})
			}
			cur = max(cur, y.hi)
		}
		if cur < x.hi {
			out = append(out, span{cur, x.hi})
		}
	}
	return out
}

func (s spanSet) size() uint64 {
	var n uint64
	for _, x := range s {
		n += uint64(x.hi - x.lo)
	}
	return n
}

// lossClass is the classification of a flow's missing PSNs.
type lossClass struct {
	notCaptured, lost uint64 // of the PSNs still missing
	jumps             []jumpClass
	lostSet, covered  spanSet
	missing, jumped   spanSet
	off               func(uint32) int64
}

// jumpClass splits the PSNs of one jump.
type jumpClass struct {
	ev                         gapEvent
	lost, unknown, notCaptured uint64
}

// classify splits a flow's missing PSNs (gaps, still missing) and its
// jumps by the evidence.
func classify(ev *lossEvidence, gaps []Gap, base uint32) lossClass {
	off := func(p uint32) int64 { return int64(psnDiff(p, base)) }
	rng := func(from, to uint32) span { return span{off(from), off(to) + 1} }
	var miss, jumped, lost []span
	for _, g := range gaps {
		miss = append(miss, rng(g.From, g.To))
	}
	for _, j := range ev.jumps {
		jumped = append(jumped, rng(j.from, j.to))
	}
	c := lossClass{missing: normalize(miss), jumped: normalize(jumped), off: off}
	if ev.rc {
		for _, b := range ev.backs {
			lost = append(lost, rng(b.from, b.to))
		}
		for _, n := range ev.naks {
			lost = append(lost, rng(n, n))
		}
		c.lostSet = normalize(lost)
		if ev.hasAck {
			c.covered = spanSet{{lo: -1 << 40, hi: off(ev.ack) + 1}}
		}
	}
	c.lost = c.missing.intersect(c.lostSet).size()
	c.notCaptured = c.missing.minus(c.lostSet).intersect(c.covered).size()
	for _, j := range ev.jumps {
		js := spanSet{rng(j.from, j.to)}
		still := js.intersect(c.missing).minus(c.lostSet)
		jc := jumpClass{ev: j, lost: js.intersect(c.lostSet).size()}
		jc.notCaptured = still.intersect(c.covered).size()
		jc.unknown = still.size() - jc.notCaptured
		c.jumps = append(c.jumps, jc)
	}
	return c
}

// onlyNotCaptured reports whether the PSNs the capture jumped over in
// [from, to] are all PSNs the responder acknowledged and nobody resent
// (and there is at least one).
func (c *lossClass) onlyNotCaptured(from, to uint32) bool {
	r := spanSet{{c.off(from), c.off(to) + 1}}
	x := r.intersect(c.jumped)
	if x.size() == 0 || x.intersect(c.lostSet).size() > 0 {
		return false
	}
	return x.intersect(c.missing).minus(c.covered).size() == 0
}

// lossFindings returns the findings of a flow's jumps: psn_gap, an error
// for PSNs lost and a warning for PSNs of unknown fate, at the frame of
// the jump; and one capture_gap info for the PSNs the capture missed.
func lossFindings(c *lossClass, flow, file string) []Finding {
	var out []Finding
	var first *jumpClass
	for i := range c.jumps {
		j := &c.jumps[i]
		g := psnGap{from: j.ev.from, to: j.ev.to}
		detail := gapDetail(psnAdd(j.ev.to, 1), g)
		part := func(n uint64, what string) string {
			if n == uint64(g.count()) {
				return detail + ": " + what
			}
			return fmt.Sprintf("%s; %d of them %s", detail, n, what)
		}
		if j.lost > 0 {
			out = append(out, Finding{Frame: j.ev.frame, Time: j.ev.t, Kind: KindPSNGap, Severity: SeverityError, Flow: flow, File: file,
				Detail: part(j.lost, "lost before the responder (NAKed or resent)")})
		}
		if j.unknown > 0 {
			out = append(out, Finding{Frame: j.ev.frame, Time: j.ev.t, Kind: KindPSNGap, Severity: SeverityWarning, Flow: flow, File: file,
				Detail: part(j.unknown, "fate unknown (no response shows whether the responder got them)")})
		}
		if j.notCaptured > 0 && first == nil {
			first = j
		}
	}
	if c.notCaptured > 0 && first != nil {
		out = append(out, Finding{Frame: first.ev.frame, Time: first.ev.t, Kind: KindCaptureGap, Severity: SeverityInfo, Flow: flow, File: file,
			Detail: fmt.Sprintf("%s missing from the capture acknowledged by the responder and never resent: capture-side drops, not network loss", psnCount(c.notCaptured))})
	}
	return out
}

// notCapturedNote ends the detail of an incomplete_message finding whose
// missing PSNs the capture missed but the responder received: the message
// is whole on the wire, so the finding is only information.
const notCapturedNote = "; only PSNs the capture missed are missing (the responder acknowledged them)"

// attribute classifies a flow's missing PSNs for its report: the counts,
// capture.not_captured, the findings of its jumps, and the severity of its
// incomplete messages. It returns the classification.
//
// end, when not nil (a shard's report), receives the loss findings
// instead of r.Findings.
func (a *Analyzer) attribute(r *Report, f *flowState, fr *Flow, ev lossEvidence, end *[]Finding) *lossClass {
	fr.Requests.ev = ev
	cls := classify(&ev, fr.Requests.Gaps, fr.Requests.low)
	fr.Requests.MissingNotCaptured, fr.Requests.MissingLost = cls.notCaptured, cls.lost
	r.Capture.NotCaptured += cls.notCaptured
	for _, fd := range lossFindings(&cls, f.name(), a.opts.File) {
		if end != nil {
			*end = append(*end, fd)
			continue
		}
		if len(r.Findings) >= a.opts.MaxFindings {
			r.FindingsDropped++
			continue
		}
		r.Findings = append(r.Findings, fd)
	}
	if f.loss.log != nil {
		for _, ref := range f.loss.log.incomplete {
			if fd := &r.Findings[ref.idx]; fd.Kind == KindIncomplete && cls.onlyNotCaptured(ref.from, ref.to) {
				fd.Severity, fd.Detail = SeverityInfo, fd.Detail+notCapturedNote
			}
		}
	}
	return &cls
}

func psnCount(n uint64) string {
	if n == 1 {
		return "1 request PSN"
	}
	return fmt.Sprintf("%d request PSNs", n)
}
