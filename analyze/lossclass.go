package analyze

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/roce-dissect/roce-dissect/layers"
)

// lossEvidence is what the report keeps of a request flow's evidence, for
// classification and for Merge.
type lossEvidence struct {
	ack    uint32
	rc     bool // RC: responses tell what the responder received
	hasAck bool
	// openNAK is the cause of a NAK or RNR NAK no resend followed yet at
	// the end of the part: the next part's first resends answer it.
	openNAK uint8
	// episode is the cause of the resend episode the part ended in.
	episode uint8
	// logs is nil while the flow has no jump, resend or NAK (most flows:
	// a report of many flows keeps 16 bytes each, not 80). Copies of the
	// evidence share it: it is replaced, never changed.
	logs *evidenceLogs
}

// evidenceLogs are a flow's PSN jumps, resends back and NAKed PSNs.
type evidenceLogs struct {
	jumps []gapEvent
	backs []psnRange
	naks  []uint32
}

// log returns the evidence's logs (empty when none).
func (e *lossEvidence) log() evidenceLogs {
	if e.logs == nil {
		return evidenceLogs{}
	}
	return *e.logs
}

// withLogs replaces the evidence's logs with l (nil when l is empty).
func (e *lossEvidence) withLogs(l evidenceLogs) {
	e.logs = nil
	if len(l.jumps)+len(l.backs)+len(l.naks) > 0 {
		e.logs = new(evidenceLogs) // allocated only here: most flows have none
		*e.logs = l
	}
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
	var l evidenceLogs
	if f.loss.log != nil {
		l.jumps = append([]gapEvent(nil), f.loss.log.jumps...)
		l.backs = append([]psnRange(nil), f.loss.log.backs...)
	}
	if r := a.peerFlow(f); r != nil {
		ev.ack, ev.hasAck, ev.openNAK = r.loss.ackHigh, r.loss.hasAck, r.loss.nakCause
		if r.loss.log != nil {
			l.naks = append([]uint32(nil), r.loss.log.naks...)
		}
	}
	ev.withLogs(l)
	return ev
}

// merge adds the evidence of the next part.
func (e *lossEvidence) merge(o *lossEvidence) {
	e.rc = e.rc || o.rc
	l, ol := e.log(), o.log()
	e.withLogs(evidenceLogs{ // new arrays: the old logs may be shared
		jumps: append(slices.Clip(l.jumps), ol.jumps...),
		backs: append(slices.Clip(l.backs), ol.backs...),
		naks:  append(slices.Clip(l.naks), ol.naks...),
	})
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
	if len(s) == 0 {
		return nil // most flows: no gap, no jump, no resend, and nothing to sort
	}
	slices.SortFunc(s, func(x, y span) int { return cmp.Compare(x.lo, y.lo) })
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
	base              uint32 // the PSN whose offset is 0 (offset)
}

// offset is PSN p's distance from the flow's lowest PSN, base: the PSN
// sets count on a line, not on the 24-bit circle.
func (c *lossClass) offset(p uint32) int64 { return int64(psnDiff(p, c.base)) }

// jumpClass splits the PSNs of one jump.
type jumpClass struct {
	ev                         gapEvent
	lost, unknown, notCaptured uint64
}

// classify splits a flow's missing PSNs (gaps, still missing) and its
// jumps by the evidence.
func classify(ev *lossEvidence, gaps []Gap, base uint32) lossClass {
	c := lossClass{base: base}
	rng := func(from, to uint32) span { return span{c.offset(from), c.offset(to) + 1} }
	var miss, jumped, lost []span
	for _, g := range gaps {
		miss = append(miss, rng(g.From, g.To))
	}
	logs := ev.log()
	for _, j := range logs.jumps {
		jumped = append(jumped, rng(j.from, j.to))
	}
	c.missing, c.jumped = normalize(miss), normalize(jumped)
	if ev.rc {
		for _, b := range logs.backs {
			lost = append(lost, rng(b.from, b.to))
		}
		for _, n := range logs.naks {
			lost = append(lost, rng(n, n))
		}
		c.lostSet = normalize(lost)
		if ev.hasAck {
			c.covered = spanSet{{lo: -1 << 40, hi: c.offset(ev.ack) + 1}}
		}
	}
	c.lost = c.missing.intersect(c.lostSet).size()
	c.notCaptured = c.missing.minus(c.lostSet).intersect(c.covered).size()
	for _, j := range logs.jumps {
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
	r := spanSet{{c.offset(from), c.offset(to) + 1}}
	x := r.intersect(c.jumped)
	if x.size() == 0 || x.intersect(c.lostSet).size() > 0 {
		return false
	}
	return x.intersect(c.missing).minus(c.covered).size() == 0
}

// lossFindings returns the findings of a flow's jumps: psn_gap, an error
// for PSNs lost and a warning for PSNs of unknown fate, at the frame of
// the jump; and one capture_gap info for the PSNs the capture missed.
func lossFindings(c *lossClass, flow FlowID, file string) []Finding {
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

// hasFindings says whether lossFindings returns any for c.
func (c *lossClass) hasFindings() bool {
	for _, j := range c.jumps {
		if j.lost > 0 || j.unknown > 0 || j.notCaptured > 0 && c.notCaptured > 0 {
			return true
		}
	}
	return false
}

// notCapturedNote ends the detail of an incomplete_message finding whose
// missing PSNs the capture missed but the responder received: the message
// is whole on the wire, so the finding is only information.
const notCapturedNote = "; only PSNs the capture missed are missing (the responder acknowledged them)"

// attribute classifies a flow's missing PSNs for its report: the counts,
// capture.not_captured, the findings of its jumps, and the severity of its
// incomplete messages. It returns the classification.
//
// sh receives the loss findings of flow i and the incomplete messages to
// make information, for the combiner to apply.
func (a *Analyzer) attribute(r *Report, fed fedFindings, f *flowState, fr *Flow, ev lossEvidence, sh *shardInfo, i int) lossClass {
	fr.Requests.ev = ev
	cls := classify(&ev, fr.Requests.Gaps, fr.Requests.low)
	fr.Requests.MissingNotCaptured, fr.Requests.MissingLost = cls.notCaptured, cls.lost
	r.Capture.NotCaptured += cls.notCaptured
	sh.noteLoss(i, &cls, f, a.opts.File, fed)
	return cls
}

func psnCount(n uint64) string {
	if n == 1 {
		return "1 request PSN"
	}
	return fmt.Sprintf("%d request PSNs", n)
}
