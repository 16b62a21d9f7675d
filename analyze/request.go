package analyze

import (
	"fmt"
	"unsafe"

	"github.com/roce-dissect/roce-dissect/layers"
)

// request accounts a request packet (the requester's PSN space).
func (a *Analyzer) request(f *flowState, p *Packet, payload int) {
	bth := p.BTH
	op := bth.Opcode
	span, guessed := uint32(1), false
	if op.Operation() == layers.OperationRDMAReadRequest {
		span, guessed = a.readSpan(f, p)
	}
	if !a.tracksPSN(f, p) {
		f.psn.note(bth.PSN)
		a.reassemble(f, &f.reqMsg, p, payload, false, untracked)
		return
	}
	icrc, _ := bth.ICRCValue()
	key := reqKey{psn: bth.PSN, op: op, n: uint32(p.CarriedLength), icrc: icrc}
	if f.log == nil && !a.opts.NoMerge {
		f.log = new(headLog)
		f.log.head, f.log.msgs = f.log.inHead[:0], f.log.inMsgs[:0]
	}
	isDup := f.hasLast && f.lastKey == key
	f.lastKey, f.hasLast = key, true

	if m := f.psn.settleRead(bth.PSN); m > 0 && (f.cold == nil || f.cold.readMTU == 0) {
		f.rare().readMTU = int32(m)
	}
	wasSeen, prevHigh := f.psn.seen, f.psn.high
	obs, gap := f.psn.observe(bth.PSN, span, p.Frame)
	if !wasSeen {
		if f.log != nil {
			f.log.firstFrame = p.Frame
		}
		a.startGap(f, p)
	}
	a.requestEvidence(f, p, obs, isDup, gap, prevHigh)
	a.nicRequest(f, p, obs, isDup, span)
	if f.log != nil && len(f.log.head) < headLen {
		cause := f.loss.cause
		if obs != obsOld {
			cause = a.pendingCause(f)
		}
		f.log.head = append(f.log.head, headReq{psn: bth.PSN, obs: obs, cause: cause, key: key})
	}
	if guessed && (obs == obsInOrder || obs == obsGap) {
		f.psn.more().guess = readGuess{active: true, psn: bth.PSN, dmaLen: p.RETH.DMALength}
	}
	switch obs {
	case obsFill:
		f.rare().ooo++
		if fd := a.finding(p, KindOutOfOrder, SeverityWarning, f); fd != nil {
			fd.Detail = fmt.Sprintf("PSN %d arrived after PSN %d", bth.PSN, f.psn.high)
		}
		a.fillMessage(f, p, payload)
		return
	case obsOld:
		if isDup {
			f.rare().dups++
			if fd := a.finding(p, KindDuplicate, SeverityWarning, f); fd != nil {
				fd.Detail = fmt.Sprintf("PSN %d repeated byte for byte", bth.PSN)
			}
		} else {
			f.rare().retrans++
			if fd := a.finding(p, KindRetransmission, SeverityWarning, f); fd != nil {
				fd.Detail = fmt.Sprintf("PSN %d seen before (%s)", bth.PSN, bth.OpcodeName())
			}
		}
		return
	}
	if bth.AckReq || op.Position() == layers.PositionLast || op.Position() == layers.PositionOnly || op.Position() == layers.PositionNone {
		f.pending.push(pendingReq{psn: psnAdd(bth.PSN, int64(span)-1), t: p.Time.UnixNano()})
	}
	a.reassemble(f, &f.reqMsg, p, payload, isWriteOp(op), tracked)
}

// multicastQP is the DestQP of multicast UD packets.
const multicastQP = 0xFFFFFF

// tracksPSN says whether a request joins the flow's PSN stream. The
// management QPs (0 and 1) get MADs from every port of the subnet, each
// with its own PSNs; a multicast flow sees only the groups captured of a
// sender's PSN sequence; and a datagram flow may hear several source QPs:
// only the first source QP of a datagram flow is followed.
func (a *Analyzer) tracksPSN(f *flowState, p *Packet) bool {
	if p.BTH.DestQP <= 1 || p.BTH.DestQP == multicastQP {
		return false
	}
	if p.DETH == nil {
		return true
	}
	if !f.hasDatagramSrc {
		f.datagramSrc, f.hasDatagramSrc = p.DETH.SrcQP, true
	}
	return p.DETH.SrcQP == f.datagramSrc
}

// readSpan returns how many PSNs an RDMA READ request reserves, and
// whether the path MTU that decides it is unknown (the span is then a
// guess, settled by the next request's PSN).
func (a *Analyzer) readSpan(f *flowState, p *Packet) (uint32, bool) {
	if p.RETH == nil || p.RETH.DMALength == 0 {
		return 1, false
	}
	pmtu := a.pmtuFor(f)
	if pmtu == 0 || !a.checkDMALength(f, p) {
		return 1, true
	}
	return spanOf(p.RETH.DMALength, pmtu), false
}

// spanOf is ceil(dmaLen / pmtu), at least 1 and at most maxReadSpan.
func spanOf(dmaLen uint32, pmtu int) uint32 {
	return min(maxReadSpan, max(1, uint32((uint64(dmaLen)+uint64(pmtu)-1)/uint64(pmtu))))
}

// reqKey identifies a request packet byte for byte closely enough to tell
// an exact duplicate.
type reqKey struct {
	psn  uint32
	n    uint32 // frame length
	icrc uint32
	op   layers.Opcode
}

// headLen bounds the head log: the first requests of a flow and the
// messages they completed, kept so that Merge can reclassify a part's
// first packets against the part before it (a go-back-N resend after the
// seam is a retransmission of the whole capture, not news).
const headLen = 64

// headReq is one of the first requests of a flow.
type headReq struct {
	psn   uint32
	obs   observation
	cause uint8 // its retransmission cause, or the one it would have as a resend
	key   reqKey
}

// headLog holds a flow's first requests and the messages they completed,
// for Merge (not kept with Options.NoMerge).
type headLog struct {
	head       []headReq
	msgs       []headMsg
	firstFrame uint64 // frame of the first request
	// The first requests and message are kept here: a flow of few
	// requests allocates no list (and a one-packet flow's log costs no
	// more than with lists of one).
	inHead [2]headReq
	inMsgs [1]headMsg
}

// lists returns the log's requests and messages for a flow's report: the
// log's own lists when the flow is discarded (move), copies otherwise and
// of a list still in the log's inline array, which would keep the log
// alive with the report.
func (l *headLog) lists(move bool) ([]headReq, []headMsg) {
	head, msgs := l.head, l.msgs
	if !move || unsafe.SliceData(head) == &l.inHead[0] {
		head = append([]headReq(nil), head...)
	}
	if !move || unsafe.SliceData(msgs) == &l.inMsgs[0] {
		msgs = append([]headMsg(nil), msgs...)
	}
	return head, msgs
}

// headMsg is a message completed while the head log was open.
type headMsg struct {
	from, to uint32
	bytes    uint64
}

// logHeadMsg records a request message completed while the head log is
// open.
func (f *flowState) logHeadMsg(from, to uint32, bytes uint64) {
	if f.log != nil && len(f.log.head) < headLen && len(f.log.msgs) < headLen {
		f.log.msgs = append(f.log.msgs, headMsg{from: from, to: to, bytes: bytes})
	}
}

// gapDetail describes a PSN jump.
func gapDetail(psn uint32, g psnGap) string {
	if g.count() == 1 {
		return fmt.Sprintf("PSN jumped to %d: PSN %d missing", psn, g.from)
	}
	return fmt.Sprintf("PSN jumped to %d: %d PSNs missing (%d–%d)", psn, g.count(), g.from, g.to)
}
