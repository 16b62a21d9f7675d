package analyze

import (
	"fmt"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/layers"
)

// message follows one message being reassembled.
type message struct {
	// Fields are ordered to leave no padding but the end, which the
	// msgStream's small fields fill.
	bytes   uint64
	frame   uint64
	start   uint32
	next    uint32 // PSN expected next
	dmaLen  uint32
	open    bool
	broken  bool // a PSN inside it is missing (so far)
	noStart bool // its FIRST was not seen and where it began is unknown
	isWrite bool
	hasDMA  bool
}

// pendingMsg is a message whose LAST arrived while PSNs inside it were
// missing: it completes if out-of-order packets fill them.
type pendingMsg struct {
	noStart bool // its FIRST has not been seen: from is unknown
	// openEnd: its LAST has not been seen. The next message began while
	// PSNs after the ones seen of it were missing, so its LAST may be among
	// them; to is the PSN before that next message, which bounds it.
	openEnd bool
	// reported: it was found incomplete (a finding and a count) when the
	// next message began. It is still counted as a message if its LAST and
	// every PSN before it arrive out of order (a resend after a loss), and
	// then no longer as incomplete; the end of the capture reports it no
	// second time.
	reported bool
	from, to uint32
	bytes    uint64
	isWrite  bool
	hasDMA   bool
	dmaLen   uint32
	frame    uint64    // of its LAST
	at       time.Time // the time of that frame, as the capture gave it
}

// maxPending bounds the pending messages of one stream, and maxOpenEnd
// those of them whose LAST has not been seen.
const (
	maxPending = 64
	maxOpenEnd = 8
)

// msgStream reassembles the messages of one PSN stream.
type msgStream struct {
	cur     message
	prevEnd uint32 // PSN of the last packet of the previous message
	started bool   // a FIRST or ONLY was seen in this stream
	hasPrev bool
	rare    *msgRare // allocated by the first orphan or pending message
}

// msgRare is what a message stream holds only after a message began
// before the capture or lost a packet.
type msgRare struct {
	orphan  seamMessage
	pending []pendingMsg
}

// more returns the stream's rare part, allocating it.
func (st *msgStream) more() *msgRare {
	if st.rare == nil {
		st.rare = &msgRare{}
	}
	return st.rare
}

// orphan returns the message the stream began inside (valid: there is one).
func (st *msgStream) orphan() seamMessage {
	if st.rare == nil {
		return seamMessage{}
	}
	return st.rare.orphan
}

// pending returns the messages waiting for out-of-order packets.
func (st *msgStream) pending() []pendingMsg {
	if st.rare == nil {
		return nil
	}
	return st.rare.pending
}

// seamMessage is a message cut by the start or the end of the capture,
// kept so that Merge can join the two parts.
type seamMessage struct {
	valid    bool
	complete bool   // its LAST was seen (orphan at the start)
	psn      uint32 // first PSN seen (orphan) or PSN expected next (open at the end)
	start    uint32 // first PSN (open at the end)
	bytes    uint64
	broken   bool
	isWrite  bool
	hasDMA   bool
	dmaLen   uint32
}

// streamMode says how a message stream is followed.
type streamMode uint8

const (
	// untracked: a stream whose PSNs no tracker follows (READ responses,
	// requests whose PSNs mean nothing, see tracksPSN). A message with a
	// PSN missing inside it is incomplete at its LAST.
	untracked streamMode = iota
	// tracked: the flow's request stream, whose PSNs f.psn tracks. A
	// message whose LAST arrives with PSNs missing inside it waits for
	// out-of-order packets to fill them (fillMessage), and the messages
	// completed go to the head log for Merge.
	tracked
)

// reassemble follows FIRST/MIDDLE/LAST/ONLY packets of a message stream.
func (a *Analyzer) reassemble(f *flowState, st *msgStream, p *Packet, payload int, isWrite bool, mode streamMode) {
	bth := p.BTH
	m := &st.cur
	if payload < 0 {
		payload = 0
	}
	pos := bth.Opcode.Position()
	switch pos {
	case layers.PositionOnly:
		if m.open {
			a.incomplete(f, p, m.frame, m.bytes)
			a.noteOpen(f, p, st, m, bth.PSN)
			if mode == tracked {
				st.keepOpen(m, bth.PSN)
			}
		}
		*m = message{}
		st.started, st.prevEnd, st.hasPrev = true, bth.PSN, true
		a.completeMessage(f, p, p.Frame, uint64(payload), writeDMA(p, isWrite))
		if mode == tracked {
			f.logHeadMsg(bth.PSN, bth.PSN, uint64(payload))
		}
	case layers.PositionFirst:
		if m.open {
			a.incomplete(f, p, m.frame, m.bytes)
			a.noteOpen(f, p, st, m, bth.PSN)
			if mode == tracked {
				st.keepOpen(m, bth.PSN)
			}
		}
		*m = message{open: true, start: bth.PSN, bytes: uint64(payload), next: psnAdd(bth.PSN, 1), isWrite: isWrite, frame: p.Frame}
		st.started = true
		if p.RETH != nil {
			m.hasDMA, m.dmaLen = true, p.RETH.DMALength
		}
	case layers.PositionMiddle, layers.PositionLast:
		if !m.open {
			if !st.started && !st.orphan().valid {
				st.more().orphan = seamMessage{valid: true, psn: bth.PSN}
			}
			*m = message{open: true, next: bth.PSN, frame: p.Frame, isWrite: isWrite}
			if st.hasPrev {
				// It began after the previous message's end: its FIRST is
				// missing (or late).
				m.start, m.broken = psnAdd(st.prevEnd, 1), true
			} else {
				m.noStart, m.broken = true, true
			}
		}
		orphaned := !st.started && st.orphan().valid && !st.orphan().complete
		if bth.PSN != m.next {
			m.broken = true
			if orphaned {
				st.rare.orphan.broken = true
			}
		}
		m.bytes += uint64(payload)
		m.next = psnAdd(bth.PSN, 1)
		if orphaned {
			st.rare.orphan.bytes = m.bytes
			st.rare.orphan.complete = pos == layers.PositionLast
		}
		if pos == layers.PositionLast {
			st.prevEnd, st.hasPrev = bth.PSN, true
			a.endMessage(f, st, p, mode)
			*m = message{}
		}
	}
}

// endMessage completes a message at its LAST, or, in a tracked stream,
// keeps it pending while PSNs inside it are missing.
func (a *Analyzer) endMessage(f *flowState, st *msgStream, p *Packet, mode streamMode) {
	m := &st.cur
	switch {
	case !m.broken:
		a.completeMessage(f, p, m.frame, m.bytes, m.dmaCheck())
		if mode == tracked {
			f.logHeadMsg(m.start, p.BTH.PSN, m.bytes)
		}
	case mode == untracked:
		a.incomplete(f, p, m.frame, m.bytes)
	case m.noStart && len(st.pending()) < maxPending:
		// Its FIRST may still come out of order.
		r := st.more()
		r.pending = append(r.pending, pendingMsg{noStart: true, to: p.BTH.PSN, bytes: m.bytes, isWrite: m.isWrite, frame: p.Frame, at: p.Time})
	case m.noStart:
		a.incomplete(f, p, m.frame, m.bytes)
	case !f.psn.anyIn(m.start, p.BTH.PSN):
		// The holes were filled before the LAST came.
		a.completeMessage(f, p, m.frame, m.bytes, m.dmaCheck())
		f.logHeadMsg(m.start, p.BTH.PSN, m.bytes)
	case len(st.pending()) < maxPending:
		r := st.more()
		r.pending = append(r.pending, pendingMsg{from: m.start, to: p.BTH.PSN, bytes: m.bytes, isWrite: m.isWrite, hasDMA: m.hasDMA, dmaLen: m.dmaLen, frame: p.Frame, at: p.Time})
	default:
		a.incomplete(f, p, m.frame, m.bytes)
		a.noteIncomplete(f, p.Frame, m.start, p.BTH.PSN)
	}
}

// keepOpen keeps the open message m pending when the message beginning at
// psn skipped PSNs after the ones seen of m: its LAST may be among them and
// come out of order, which completes it (fillMessage).
// At most maxOpenEnd such messages wait, the oldest giving way, so that
// LASTs the tap missed leave room for the messages whose LAST came.
func (st *msgStream) keepOpen(m *message, psn uint32) {
	if m.noStart || psnDiff(psn, m.next) <= 0 {
		return
	}
	open := 0
	for i, pm := range st.pending() {
		if pm.openEnd {
			if open++; open == maxOpenEnd {
				st.rare.pending = slices.Delete(st.rare.pending, i, i+1) // already reported: nothing else to do
				break
			}
		}
	}
	if len(st.pending()) >= maxPending {
		return
	}
	r := st.more()
	r.pending = append(r.pending, pendingMsg{openEnd: true, reported: true, from: m.start, to: psnAdd(psn, -1), bytes: m.bytes,
		isWrite: m.isWrite, hasDMA: m.hasDMA, dmaLen: m.dmaLen, frame: m.frame})
}

// noteOpen remembers the PSNs of a request message left open by the
// packet at psn (its LAST is missing): from its FIRST up to psn.
func (a *Analyzer) noteOpen(f *flowState, p *Packet, st *msgStream, m *message, psn uint32) {
	if st == &f.reqMsg && !m.noStart {
		a.noteIncomplete(f, p.Frame, m.start, psnAdd(psn, -1))
	}
}

// fillMessage gives an out-of-order packet of the tracked request stream
// to the message it belongs to: the open one, or a pending one, which
// completes once no PSN inside it is missing.
func (a *Analyzer) fillMessage(f *flowState, p *Packet, payload int) {
	st := &f.reqMsg
	psn := p.BTH.PSN
	if payload < 0 {
		payload = 0
	}
	if p.BTH.Opcode.Position() == layers.PositionOnly {
		a.completeMessage(f, p, p.Frame, uint64(payload), writeDMA(p, isWriteOp(p.BTH.Opcode)))
		f.logHeadMsg(psn, psn, uint64(payload))
		return
	}
	m := &st.cur
	if m.open && !m.noStart && psnDiff(psn, m.start) >= 0 && psnDiff(psn, m.next) < 0 {
		m.bytes += uint64(payload)
		if p.RETH != nil {
			m.hasDMA, m.dmaLen = true, p.RETH.DMALength
		}
		return
	}
	if st.rare == nil {
		return
	}
	for i := range st.rare.pending {
		pm := &st.rare.pending[i]
		if pm.noStart {
			if p.BTH.Opcode.Position() != layers.PositionFirst || psnDiff(psn, pm.to) >= 0 {
				continue
			}
			pm.from, pm.noStart = psn, false // its FIRST, late
		}
		if psnDiff(psn, pm.from) < 0 || psnDiff(psn, pm.to) > 0 {
			continue
		}
		pm.bytes += uint64(payload)
		if p.RETH != nil {
			pm.hasDMA, pm.dmaLen = true, p.RETH.DMALength
		}
		if pm.openEnd && p.BTH.Opcode.Position() == layers.PositionLast {
			pm.to, pm.openEnd = psn, false // its LAST, late
		}
		if !pm.openEnd && !f.psn.anyIn(pm.from, pm.to) {
			done := *pm
			if done.reported {
				f.rare().incomplete--
			}
			st.rare.pending = append(st.rare.pending[:i], st.rare.pending[i+1:]...)
			a.completeMessage(f, p, done.first(), done.bytes, dmaCheck{done.isWrite && done.hasDMA, done.dmaLen})
			f.logHeadMsg(done.from, done.to, done.bytes)
		}
		return
	}
}

// isWriteOp reports an RDMA WRITE opcode.
func isWriteOp(op layers.Opcode) bool {
	return op.Operation() >= layers.OperationRDMAWriteFirst && op.Operation() <= layers.OperationRDMAWriteOnlyWithImmediate
}

// dmaCheck is the DMALength an RDMA WRITE's size must equal, when known.
type dmaCheck struct {
	on     bool
	dmaLen uint32
}

// writeDMA is the check for a one-packet message.
func writeDMA(p *Packet, isWrite bool) dmaCheck {
	if !isWrite || p.RETH == nil {
		return dmaCheck{}
	}
	return dmaCheck{true, p.RETH.DMALength}
}

// dmaCheck is the check for a reassembled message.
func (m *message) dmaCheck() dmaCheck { return dmaCheck{m.isWrite && m.hasDMA, m.dmaLen} }

func (a *Analyzer) incomplete(f *flowState, p *Packet, frame, bytes uint64) {
	f.rare().incomplete++
	if fd := a.finding(p, KindIncomplete, SeverityWarning, f); fd != nil {
		fd.Detail = fmt.Sprintf("message begun at %s is incomplete (%d bytes seen)", a.opts.Pieces.FrameName(frame), bytes)
	}
}

// completeMessage counts a message completed by p, whose first packet
// seen is frame first (0: unknown).
func (a *Analyzer) completeMessage(f *flowState, p *Packet, first, size uint64, dma dmaCheck) {
	if a.opts.OnMessage != nil {
		a.messageDone(f, p, first, size)
	}
	m := &f.msgs
	m.count++
	m.bytes += size
	if m.count == 1 || size < m.minSize {
		m.minSize = size
	}
	if size > m.maxSize {
		m.maxSize = size
	}
	f.mixState().addSize(size)
	if dma.on && uint64(dma.dmaLen) != size && !p.Truncated {
		f.rare().dmaMismatches++
		if fd := a.finding(p, KindDMALength, SeverityError, f); fd != nil {
			fd.Detail = fmt.Sprintf("RDMA WRITE of %d bytes, RETH DMALength %d", size, dma.dmaLen)
		}
	}
}
