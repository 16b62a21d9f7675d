package synth

import "github.com/roce-dissect/roce-dissect/layers"

// Loss attribution of the truth, from what the generator wrote and why: a
// missing request PSN is lost when the responder NAKed it or the requester
// resent it (the generator tags its go-back-N resends), not captured when
// a later response covers it, else unknown. Unwrapped PSNs (psnSpace) of
// the request flow throughout.

// flowLoss is the loss evidence of one request flow.
type flowLoss struct {
	end        int64     // one past the highest PSN sent so far
	jumps      []jumpRec // jumps over PSNs not seen
	lost       intervals // NAKed or resent PSNs
	missing    intervals // PSNs never seen (set by finish)
	ackHi      int64     // highest PSN a response covers
	hasAck     bool
	inResend   bool // the previous request was a resend
	msgs       map[uint32]*msgRec
	lastMsg    *msgRec // message of the previous request
	startKnown bool    // the send PSN of the connection is known: where the first message begins
}

// jumpRec is a jump of the request PSNs over [from, to] at frame.
type jumpRec struct {
	from, to int64
	frame    int
}

// msgRec follows a request message for incomplete_message.
type msgRec struct {
	from, to  int64 // PSNs
	lastFrame int   // frame of its LAST, 0 if not written
	report    int   // frame of its incomplete_message finding, 0 if none
	noStart   bool  // the flow's first message, its FIRST not written first
}

// startFlow applies the connection's send PSN to a data flow's first
// request: the PSNs from it to the first request are missing.
func (t *tracker) startFlow(fs *flowState, p *pkt) {
	if p.cm != cmNone || p.c.kind == kindUD || p.fromB {
		return
	}
	t.reqFlow[p.c] = fs
	if t.sendPSN == nil {
		return
	}
	send, ok := t.sendPSN(p.c)
	d := serial24(p.psn - send)
	if !ok || d < 0 || d > 1<<16 {
		return
	}
	fs.loss.startKnown = true
	fs.req.at(send) // PSN offsets count from the send PSN
}

// jump records a jump over PSNs not seen before request u.
func (t *tracker) jump(fs *flowState, p *pkt, u int64, frame int) {
	l := &fs.loss
	if !fs.reqHiSet {
		l.end = 0
		if u > 0 {
			l.jumps = append(l.jumps, jumpRec{from: 0, to: u - 1, frame: frame})
		}
		return
	}
	if u > l.end {
		l.jumps = append(l.jumps, jumpRec{from: l.end, to: u - 1, frame: frame})
	}
	switch {
	case p.resend == resendNone:
		l.inResend = false
	case !l.inResend:
		// The first request of a go-back-N episode: it and every PSN
		// sent after it are sent again.
		l.inResend = true
		l.lost.add(u, l.end-1)
	}
}

// resent counts a retransmission by its cause.
func (t *tracker) resent(fs *flowState, p *pkt) {
	c := &fs.f.Requests.RetransmitCauses
	switch p.resend {
	case resendNAK:
		c.NAK++
	case resendRNR:
		c.RNR++
	default:
		c.Timeout++
	}
}

// covered records a response to the connection's request flow: the
// responder received every PSN up to its PSN (plus delta: −1 for a NAK).
func (t *tracker) covered(p *pkt, delta int64) {
	fs := t.reqFlow[p.c]
	if fs == nil || !fs.req.set {
		return
	}
	u := fs.req.at(p.psn) + delta
	if !fs.loss.hasAck || u > fs.loss.ackHi {
		fs.loss.ackHi, fs.loss.hasAck = u, true
	}
}

// naked records a PSN sequence error NAK: its PSN was lost.
func (t *tracker) naked(p *pkt) {
	fs := t.reqFlow[p.c]
	if fs == nil || !fs.req.set || p.aeth != synNAKSeq {
		return
	}
	u := fs.req.at(p.psn)
	fs.loss.lost.add(u, u)
}

// message follows the request messages: one whose LAST was not written is
// found incomplete at the next FIRST or ONLY request, one whose LAST was
// written but not all its PSNs at its LAST.
func (t *tracker) message(fs *flowState, p *pkt, u int64, frame int) {
	l := &fs.loss
	if !p.isMsg || p.cm != cmNone || p.fromB {
		return
	}
	pos := p.op.Position()
	if prev := l.lastMsg; prev != nil && prev.lastFrame == 0 && prev.report == 0 && (pos == layers.PositionFirst || pos == layers.PositionOnly) {
		if from := fs.req.at(p.msgPSN); from > prev.to {
			prev.report = frame
		}
	}
	if l.msgs == nil {
		l.msgs = make(map[uint32]*msgRec)
	}
	m := l.msgs[p.msgID]
	if m == nil {
		from := fs.req.at(p.msgPSN)
		m = &msgRec{from: from, to: from + int64(p.msgN) - 1}
		m.noStart = !l.startKnown && len(l.msgs) == 0 && pos != layers.PositionFirst && pos != layers.PositionOnly
		l.msgs[p.msgID] = m
	}
	if p.msgLast && m.lastFrame == 0 {
		m.lastFrame = frame
	}
	l.lastMsg = m
}

// attribute classifies the missing PSNs of a flow and adds the findings
// of its jumps and incomplete messages.
func (t *tracker) attribute(fs *flowState) {
	v := lossView{l: &fs.loss, rc: fs.f.Transport == "RC" || fs.f.Transport == "DC"}
	r := &fs.f.Requests
	lost, notCaptured := v.countMissing()
	r.MissingLost += lost
	r.MissingNotCaptured += notCaptured
	t.truth.Capture.NotCaptured += r.MissingNotCaptured
	capFrame := t.jumpFindings(v)
	if r.MissingNotCaptured > 0 && capFrame > 0 {
		t.finding("capture_gap", "info", capFrame)
	}
	t.messageFindings(fs, v)
}

// lossView answers attribute's questions about the PSNs of a request
// flow.
type lossView struct {
	l  *flowLoss
	rc bool // an acknowledged transport (RC, DC): NAKs, resends and ACKs count
}

// lost reports whether PSN x was NAKed or resent.
func (v lossView) lost(x int64) bool { return v.rc && v.l.lost.contains(x) }

// covered reports whether a response covers PSN x.
func (v lossView) covered(x int64) bool { return v.rc && v.l.hasAck && x <= v.l.ackHi }

// missing reports whether PSN x was never seen.
func (v lossView) missing(x int64) bool { return v.l.missing.contains(x) }

// countMissing returns how many missing PSNs were lost and how many
// others a response covers (not captured).
func (v lossView) countMissing() (lost, notCaptured int64) {
	for _, iv := range v.l.missing {
		for x := iv[0]; x <= iv[1]; x++ {
			switch {
			case v.lost(x):
				lost++
			case v.covered(x):
				notCaptured++
			}
		}
	}
	return lost, notCaptured
}

// jumpFindings adds a psn_gap finding for each jump over lost PSNs (an
// error) and over PSNs missing for no known reason (a warning). It
// returns the frame of the first jump over PSNs a response covers, 0 if
// none.
func (t *tracker) jumpFindings(v lossView) int {
	capFrame := 0
	for _, j := range v.l.jumps {
		nLost, nCap, nUnknown := v.classifyJump(j)
		if nLost > 0 {
			t.finding("psn_gap", "error", j.frame)
		}
		if nUnknown > 0 {
			t.finding("psn_gap", "warning", j.frame)
		}
		if nCap > 0 && capFrame == 0 {
			capFrame = j.frame
		}
	}
	return capFrame
}

// classifyJump counts the PSNs of jump j that were lost, those missing
// that a response covers, and those missing for no known reason.
func (v lossView) classifyJump(j jumpRec) (nLost, nCap, nUnknown int) {
	for x := j.from; x <= j.to; x++ {
		switch {
		case v.lost(x):
			nLost++
		case !v.missing(x):
		case v.covered(x):
			nCap++
		default:
			nUnknown++
		}
	}
	return nLost, nCap, nUnknown
}

// messageFindings adds an incomplete_message finding for each message
// found incomplete at a later message, or whose LAST was written but not
// all its PSNs.
func (t *tracker) messageFindings(fs *flowState, v lossView) {
	for _, m := range v.l.msgs {
		frame := m.report
		if frame == 0 && m.lastFrame > 0 && !fs.doneReq.contains(m.from) {
			frame = m.lastFrame
		}
		if frame == 0 {
			continue
		}
		t.finding("incomplete_message", v.messageSeverity(m), frame)
	}
}

// messageSeverity returns "info" when every PSN of m the capture jumped
// over is one the responder acknowledged and nobody resent, else
// "warning"; also a warning when the capture jumped over none of it, or
// when m is the flow's first message, begun without its FIRST, and found
// incomplete only at its LAST.
func (v lossView) messageSeverity(m *msgRec) string {
	sev, jumped := "info", false
	for x := m.from; x <= m.to; x++ {
		if !inJump(v.l.jumps, x) {
			continue
		}
		jumped = true
		if v.lost(x) || v.missing(x) && !v.covered(x) {
			sev = "warning"
		}
	}
	if !jumped || m.noStart && m.report == 0 {
		sev = "warning"
	}
	return sev
}

// inJump reports whether PSN x is in one of the jumps js.
func inJump(js []jumpRec, x int64) bool {
	for _, j := range js {
		if x >= j.from && x <= j.to {
			return true
		}
	}
	return false
}
