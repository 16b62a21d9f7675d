package analyze

import (
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
	idx      int // index in Analyzer.findings.list
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
		f.rare().causes.count(s.cause)
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
	c := a.conns.List[f.conn]
	if c.Frames.REQ == 0 || c.Frames.REP == 0 || c.Frames.REQ > p.Frame || c.Frames.REP > p.Frame {
		return // not set up inside this capture, before this request
	}
	send := c.Responder.SendPSN
	if f.dir.src == a.conns.reqAt[f.conn].src {
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
		if fd := a.finding(p, KindPSNBeforeStart, SeverityWarning, f); fd != nil {
			fd.startPSNs = [2]uint32{first, *send}
			*fd = fd.withConnection(c.ID)
		}
	case d > 0 && d <= maxSeamJump:
		t := &f.psn
		g := psnGap{from: *send, to: psnAdd(first, -1), frame: p.Frame}
		t.low = *send
		r := t.more()
		r.gaps = append([]psnGap{g}, r.gaps...)
		if l := f.loss.logOf(); len(l.jumps) < maxLossLog {
			l.jumps = append(l.jumps, gapEvent{from: g.from, to: g.to, frame: p.Frame, t: p.Time})
		}
	}
}

// noteIncomplete remembers an incomplete_message finding of the request
// stream just added, with its message's PSNs.
func (a *Analyzer) noteIncomplete(f *flowState, frame uint64, from, to uint32) {
	fs := a.findings.list
	if n := len(fs); n == 0 || fs[n-1].Kind != KindIncomplete || fs[n-1].Frame != frame {
		return // not listed (beyond MaxFindings)
	}
	if l := f.loss.logOf(); len(l.incomplete) < maxLossLog {
		l.incomplete = append(l.incomplete, incompleteRef{idx: len(fs) - 1, from: from, to: to})
	}
}
