package analyze

import (
	"fmt"
	"sort"
	"time"

	"github.com/gopacket/gopacket"

	"github.com/roce-dissect/roce-dissect/layers"
)

// flowKey identifies a flow: network source, network destination and
// destination QP.
type flowKey struct {
	src, dst Addr
	qp       uint32
}

// mapKey is flowKey packed into plain bytes, which hash faster than
// netip.Addr's handle.
type mapKey struct {
	src, dst [16]byte
	lids     [2]uint16
	qp       uint32
	kinds    uint8
}

func addrKind(a Addr) uint8 {
	switch {
	case a.IsLID:
		return 1
	case a.IP.Is4():
		return 2
	}
	return 0
}

func (k flowKey) packed() mapKey {
	return mapKey{src: k.src.IP.As16(), dst: k.dst.IP.As16(), lids: [2]uint16{k.src.LID, k.dst.LID}, qp: k.qp, kinds: addrKind(k.src)<<2 | addrKind(k.dst)}
}

// flowCache is a direct-mapped cache in front of the flow map: most
// packets find their flow without hashing.
const flowCacheLen = 256

type cachedFlow struct {
	key mapKey
	idx int32
	ok  bool
}

// hostPair keys the path MTU inferred between two hosts (either direction).
type hostPair struct{ a, b Addr }

func pairOf(x, y Addr) hostPair {
	if addrLess(x, y) {
		return hostPair{x, y}
	}
	return hostPair{y, x}
}

// addrLess orders addresses without allocating.
func addrLess(x, y Addr) bool {
	if x.IsLID != y.IsLID {
		return x.IsLID
	}
	if x.IsLID {
		return x.LID < y.LID
	}
	return x.IP.Less(y.IP)
}

// message follows one message being reassembled.
type message struct {
	open    bool
	broken  bool // a PSN inside it is missing (so far)
	noStart bool // its FIRST was not seen and where it began is unknown
	start   uint32
	next    uint32 // PSN expected next
	bytes   uint64
	dmaLen  uint32
	isWrite bool
	hasDMA  bool
	frame   uint64
}

// pendingMsg is a message whose LAST arrived while PSNs inside it were
// missing: it completes if out-of-order packets fill them.
type pendingMsg struct {
	noStart  bool // its FIRST has not been seen: from is unknown
	from, to uint32
	bytes    uint64
	isWrite  bool
	hasDMA   bool
	dmaLen   uint32
	frame    uint64 // of its LAST
}

// maxPending bounds the pending messages of one stream.
const maxPending = 64

// msgStream reassembles the messages of one PSN stream.
type msgStream struct {
	cur     message
	started bool // a FIRST or ONLY was seen in this stream
	orphan  seamMessage
	prevEnd uint32 // PSN of the last packet of the previous message
	hasPrev bool
	pending []pendingMsg
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

// reqKey identifies a request packet byte for byte closely enough to tell
// an exact duplicate.
type reqKey struct {
	psn  uint32
	op   layers.Opcode
	n    int
	icrc uint32
}

// headLog holds a flow's first requests and the messages they completed.
type headLog struct {
	head    []headReq
	msgs    []headMsg
	last    reqKey // the last request, to tell an exact duplicate
	hasLast bool
}

// headMsg is a message completed while the head log was open.
type headMsg struct {
	from, to uint32
	bytes    uint64
}

// pendingReq is a request waiting for its ACK, for the RTT.
type pendingReq struct {
	psn uint32
	t   int64
}

const pendingLen = 64

// flowState is the running state of one flow.
type flowState struct {
	// Fields are ordered to leave no padding: a flowState is what the
	// flow table holds per flow (see docs/robustness.md on memory).
	key          flowKey
	transport    layers.Transport
	hasTransport bool
	mtuReported  bool

	packets, wireBytes, payloadBytes uint64
	first, last                      time.Time

	reqPackets uint64
	// datagramSrc is the source QP whose PSNs a UD/RD flow follows.
	datagramSrc    uint32
	hasDatagramSrc bool
	psn            psnTracker
	retrans        uint64
	dups           uint64
	ooo            uint64

	resp *Responses // allocated by the first response

	reqMsg  msgStream
	respMsg *msgStream // READ responses, allocated by the first one
	log     *headLog   // the first requests, for Merge
	msgs    Messages

	inferredMTU int32
	readMTU     int32 // path MTU the PSN jumps of READ requests showed
	maxPayload  int32
	aboveMTU    uint64

	congestion Congestion
	icrc       ICRCCounts
	loss       lossState     // loss attribution (loss.go)
	srcPorts   *portRecovery // source ports recovered from ICRCs, allocated by the first
	nic        *nicState     // NIC behaviour (nic.go), allocated by the first request

	// pending is a ring of the last pendingLen requests awaiting an ACK,
	// grown as requests come (most flows never fill it: its memory is
	// paid by the flows that use it).
	pending   []pendingReq
	pendHead  int
	pendN     int
	peer      int32 // reverse flow, -1 if unknown
	pairTries uint8 // searches for the request flow of this flow's ACKs
	index     int32
	rtt       *rttHist

	conn int // connection index, -1 if none

	series   []Sample
	interval int64 // ns: Options.Interval, doubled while the series is too long
}

// flowFor returns the state of the packet's flow, creating it; nil when
// the flow table is full.
func (a *Analyzer) flowFor(p *Packet) *flowState {
	k := flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP}
	mk := k.packed()
	slot := &a.flowCache[(mk.qp^uint32(mk.src[15])^uint32(mk.dst[15])<<4)%flowCacheLen]
	if slot.ok && slot.key == mk {
		return a.flowList[slot.idx]
	}
	if i, ok := a.flows[mk]; ok {
		*slot = cachedFlow{key: mk, idx: i, ok: true}
		return a.flowList[i]
	}
	if len(a.flowList) >= a.opts.MaxFlows || a.opts.FlowFrameLimit > 0 && p.Frame > a.opts.FlowFrameLimit || !a.opts.FlowBudget.take() {
		a.dropSketch.add(k)
		return nil
	}
	f := &flowState{key: k, index: int32(len(a.flowList)), peer: -1, conn: -1}
	a.flows[mk] = f.index
	hk := hostsOf(k.src, k.dst)
	a.byHosts[hk] = append(a.byHosts[hk], f.index)
	a.flowList = append(a.flowList, f)
	if a.shard != nil {
		a.shard.created = append(a.shard.created, p.Frame)
	}
	a.linkConnection(f)
	return f
}

func (f *flowState) name() string {
	return fmt.Sprintf("%s → %s QP 0x%06x", f.key.src, f.key.dst, f.key.qp)
}

// analyzeIB accounts one decoded IB packet.
func (a *Analyzer) analyzeIB(p *Packet, ci gopacket.CaptureInfo, ibLen int, kind layers.NetworkKind, netHdr, udpHdr []byte) {
	bth := p.BTH
	if bth == nil {
		return
	}
	op := bth.Opcode
	if ibLen >= 0 && op.Known() {
		p.PayloadLen = ibLen - layers.BTHLen - bth.HeaderLen() - int(bth.PadCnt) - layers.ICRCLen
		if p.PayloadLen < 0 {
			p.PayloadLen = 0
		}
	}
	if !a.opts.NoICRC {
		p.ICRC = layers.CheckICRC(kind, netHdr, udpHdr, bth)
		if p.LRH != nil {
			r := p.LRH.CheckVCRC()
			p.VCRC = &r
		}
	}
	if p.MAD != nil && p.DETH != nil { // only datagrams carry MADs (madcheck.go)
		a.handleMAD(p)
	}
	f := a.flowFor(p)
	if p.ICRC.Status == layers.ICRCBad && p.Encap == EncapRoCEv2 {
		a.recoverSrcPort(f, p, udpHdr)
	}
	if f == nil {
		a.capture.PacketsOfDroppedFlows++
		return
	}
	if f.packets == 0 {
		f.first = p.Time
	}
	f.packets++
	f.wireBytes += uint64(p.Length)
	if p.Time.After(f.last) {
		f.last = p.Time
	}
	payload := p.PayloadLen
	if payload > 0 {
		f.payloadBytes += uint64(payload)
	}
	a.addSample(f, p.Time, payload, p.Length)

	switch p.ICRC.Status {
	case layers.ICRCOK:
		f.icrc.OK++
	case layers.ICRCBad:
		f.icrc.Bad++
		a.addFinding(p, KindBadICRC, SeverityError, f.name(), fmt.Sprintf("ICRC %s on the wire, %s expected (%s PSN %d)", layers.ICRCWire(p.ICRC.Value), layers.ICRCWire(p.ICRC.Expected), bth.OpcodeName(), bth.PSN))
	default:
		f.icrc.Unverifiable++
	}
	if p.VCRC != nil && p.VCRC.Status == layers.ICRCBad {
		a.addFinding(p, KindBadICRC, SeverityError, f.name(), fmt.Sprintf("VCRC %s on the wire, %s expected", layers.VCRCWire(p.VCRC.Value), layers.VCRCWire(p.VCRC.Expected)))
	}

	if p.ECN == 3 {
		f.congestion.ECNCE++
		a.addFinding(p, KindECNCE, SeverityInfo, f.name(), fmt.Sprintf("ECN CE mark on %s PSN %d", bth.OpcodeName(), bth.PSN))
	}
	if bth.FECN {
		f.congestion.FECN++
	}
	if bth.BECN {
		f.congestion.BECN++
	}

	if !op.Known() {
		a.addFinding(p, KindUnknownOpcode, SeverityWarning, f.name(), fmt.Sprintf("opcode 0x%02x is not in the IBTA table", uint8(op)))
		return
	}
	if !f.hasTransport && !op.IsCNP() {
		f.transport, f.hasTransport = bth.Transport(), true
	}
	switch {
	case op.IsCNP():
		f.congestion.CNPs++
		a.addFinding(p, KindCNP, SeverityInfo, f.name(), "congestion notification packet")
		a.nicCNP(f, p)
	case op.IsRequest():
		a.request(f, p, payload)
	case op.IsResponse():
		a.response(f, p, payload)
	}
	if payload > int(f.maxPayload) {
		f.maxPayload = int32(payload)
	}
	a.checkMTU(f, p, payload)
}

// pmtuFor returns the path MTU known for a flow: its own inferred one,
// the negotiated one of its connection, or one inferred between the same
// two hosts; 0 when unknown.
func (a *Analyzer) pmtuFor(f *flowState) int {
	if f.inferredMTU > 0 {
		return int(f.inferredMTU)
	}
	if f.readMTU > 0 {
		return int(f.readMTU)
	}
	if f.conn >= 0 {
		if m := a.conns.list[f.conn].pathMTU(); m > 0 {
			return m
		}
	}
	return a.hostMTU[pairOf(f.key.src, f.key.dst)]
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

// request accounts a request packet (the requester's PSN space).
func (a *Analyzer) request(f *flowState, p *Packet, payload int) {
	bth := p.BTH
	op := bth.Opcode
	f.reqPackets++
	span, guessed := uint32(1), false
	if op.Operation() == layers.OperationRDMAReadRequest {
		span, guessed = a.readSpan(f, p)
	}
	if !a.tracksPSN(f, p) {
		f.psn.note(bth.PSN)
		a.reassemble(f, &f.reqMsg, p, payload, false, nil)
		return
	}
	icrc, _ := bth.ICRCValue()
	key := reqKey{psn: bth.PSN, op: op, n: p.Length, icrc: icrc}
	if f.log == nil {
		f.log = &headLog{}
	}
	isDup := f.log.hasLast && f.log.last == key
	f.log.last, f.log.hasLast = key, true

	if m := f.psn.settleRead(bth.PSN); m > 0 && f.readMTU == 0 {
		f.readMTU = int32(m)
	}
	wasSeen, prevHigh := f.psn.seen, f.psn.high
	obs, gap := f.psn.observe(bth.PSN, span, p.Frame)
	if !wasSeen {
		a.startGap(f, p)
	}
	a.requestEvidence(f, p, obs, isDup, gap, prevHigh)
	a.nicRequest(f, p, obs, isDup, span)
	if len(f.log.head) < headLen {
		cause := f.loss.cause
		if obs != obsOld {
			cause = a.pendingCause(f)
		}
		f.log.head = append(f.log.head, headReq{psn: bth.PSN, obs: obs, cause: cause, key: key})
	}
	if guessed && (obs == obsInOrder || obs == obsGap) {
		f.psn.guess = readGuess{active: true, psn: bth.PSN, dmaLen: p.RETH.DMALength}
	}
	switch obs {
	case obsFill:
		f.ooo++
		a.addFinding(p, KindOutOfOrder, SeverityWarning, f.name(), fmt.Sprintf("PSN %d arrived after PSN %d", bth.PSN, f.psn.high))
		a.fillMessage(f, &f.reqMsg, p, payload, &f.psn)
		return
	case obsOld:
		if isDup {
			f.dups++
			a.addFinding(p, KindDuplicate, SeverityWarning, f.name(), fmt.Sprintf("PSN %d repeated byte for byte", bth.PSN))
		} else {
			f.retrans++
			a.addFinding(p, KindRetransmission, SeverityWarning, f.name(), fmt.Sprintf("PSN %d seen before (%s)", bth.PSN, bth.OpcodeName()))
		}
		return
	}
	if bth.AckReq || op.Position() == layers.PositionLast || op.Position() == layers.PositionOnly || op.Position() == layers.PositionNone {
		if len(f.pending) < pendingLen {
			f.pending = append(f.pending, pendingReq{}) // pendHead == len(f.pending) until the ring is full
		}
		f.pending[f.pendHead] = pendingReq{psn: psnAdd(bth.PSN, int64(span)-1), t: p.Time.UnixNano()}
		f.pendHead = (f.pendHead + 1) % pendingLen
		if f.pendN < pendingLen {
			f.pendN++
		}
	}
	a.reassemble(f, &f.reqMsg, p, payload, isWriteOp(op), &f.psn)
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

// reassemble follows FIRST/MIDDLE/LAST/ONLY packets of a message stream.
// holes, when not nil, is the stream's PSN tracker: a message whose LAST
// arrives with PSNs missing inside it waits for out-of-order packets to
// fill them.
func (a *Analyzer) reassemble(f *flowState, st *msgStream, p *Packet, payload int, isWrite bool, holes *psnTracker) {
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
		}
		*m = message{}
		st.started, st.prevEnd, st.hasPrev = true, bth.PSN, true
		a.completeMessage(f, p, uint64(payload), writeDMA(p, isWrite))
		if holes != nil {
			f.logHeadMsg(bth.PSN, bth.PSN, uint64(payload))
		}
	case layers.PositionFirst:
		if m.open {
			a.incomplete(f, p, m.frame, m.bytes)
			a.noteOpen(f, p, st, m, bth.PSN)
		}
		*m = message{open: true, start: bth.PSN, bytes: uint64(payload), next: psnAdd(bth.PSN, 1), isWrite: isWrite, frame: p.Frame}
		st.started = true
		if p.RETH != nil {
			m.hasDMA, m.dmaLen = true, p.RETH.DMALength
		}
	case layers.PositionMiddle, layers.PositionLast:
		if !m.open {
			if !st.started && !st.orphan.valid {
				st.orphan = seamMessage{valid: true, psn: bth.PSN}
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
		orphaned := st.orphan.valid && !st.orphan.complete && !st.started
		if bth.PSN != m.next {
			m.broken = true
			if orphaned {
				st.orphan.broken = true
			}
		}
		m.bytes += uint64(payload)
		m.next = psnAdd(bth.PSN, 1)
		if orphaned {
			st.orphan.bytes = m.bytes
			st.orphan.complete = pos == layers.PositionLast
		}
		if pos == layers.PositionLast {
			st.prevEnd, st.hasPrev = bth.PSN, true
			a.endMessage(f, st, p, holes)
			*m = message{}
		}
	}
}

// endMessage completes a message at its LAST, or keeps it pending while
// PSNs inside it are missing.
func (a *Analyzer) endMessage(f *flowState, st *msgStream, p *Packet, holes *psnTracker) {
	m := &st.cur
	switch {
	case !m.broken:
		a.completeMessage(f, p, m.bytes, m.dmaCheck())
		if holes != nil {
			f.logHeadMsg(m.start, p.BTH.PSN, m.bytes)
		}
	case holes == nil:
		a.incomplete(f, p, m.frame, m.bytes)
	case m.noStart && len(st.pending) < maxPending:
		// Its FIRST may still come out of order.
		st.pending = append(st.pending, pendingMsg{noStart: true, to: p.BTH.PSN, bytes: m.bytes, isWrite: m.isWrite, frame: p.Frame})
	case m.noStart:
		a.incomplete(f, p, m.frame, m.bytes)
	case !holes.anyIn(m.start, p.BTH.PSN):
		// The holes were filled before the LAST came.
		a.completeMessage(f, p, m.bytes, m.dmaCheck())
		f.logHeadMsg(m.start, p.BTH.PSN, m.bytes)
	case len(st.pending) < maxPending:
		st.pending = append(st.pending, pendingMsg{from: m.start, to: p.BTH.PSN, bytes: m.bytes, isWrite: m.isWrite, hasDMA: m.hasDMA, dmaLen: m.dmaLen, frame: p.Frame})
	default:
		a.incomplete(f, p, m.frame, m.bytes)
		a.noteIncomplete(f, p.Frame, m.start, p.BTH.PSN)
	}
}

// noteOpen remembers the PSNs of a request message left open by the
// packet at psn (its LAST is missing): from its FIRST up to psn.
func (a *Analyzer) noteOpen(f *flowState, p *Packet, st *msgStream, m *message, psn uint32) {
	if st == &f.reqMsg && !m.noStart {
		a.noteIncomplete(f, p.Frame, m.start, psnAdd(psn, -1))
	}
}

// fillMessage gives an out-of-order packet to the message it belongs to:
// the open one, or a pending one, which completes once no PSN inside it is
// missing.
func (a *Analyzer) fillMessage(f *flowState, st *msgStream, p *Packet, payload int, holes *psnTracker) {
	psn := p.BTH.PSN
	if payload < 0 {
		payload = 0
	}
	if p.BTH.Opcode.Position() == layers.PositionOnly {
		a.completeMessage(f, p, uint64(payload), writeDMA(p, isWriteOp(p.BTH.Opcode)))
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
	for i := range st.pending {
		pm := &st.pending[i]
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
		if !holes.anyIn(pm.from, pm.to) {
			done := *pm
			st.pending = append(st.pending[:i], st.pending[i+1:]...)
			a.completeMessage(f, p, done.bytes, dmaCheck{done.isWrite && done.hasDMA, done.dmaLen})
			f.logHeadMsg(done.from, done.to, done.bytes)
		}
		return
	}
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
	f.msgs.Incomplete++
	a.addFinding(p, KindIncomplete, SeverityWarning, f.name(), fmt.Sprintf("message begun at frame %d is incomplete (%d bytes seen)", frame, bytes))
}

func (a *Analyzer) completeMessage(f *flowState, p *Packet, size uint64, dma dmaCheck) {
	f.msgs.Count++
	f.msgs.Bytes += size
	if f.msgs.Count == 1 || size < f.msgs.MinSize {
		f.msgs.MinSize = size
	}
	if size > f.msgs.MaxSize {
		f.msgs.MaxSize = size
	}
	if dma.on && uint64(dma.dmaLen) != size && !p.Truncated {
		f.msgs.DMALengthMismatches++
		a.addFinding(p, KindDMALength, SeverityError, f.name(), fmt.Sprintf("RDMA WRITE of %d bytes, RETH DMALength %d", size, dma.dmaLen))
	}
}

// response accounts a response packet (ACK/NAK, READ response, atomic ACK).
func (a *Analyzer) response(f *flowState, p *Packet, payload int) {
	op := p.BTH.Opcode
	if f.resp == nil {
		f.resp = &Responses{}
	}
	f.resp.Packets++
	a.responseEvidence(f, p)
	a.nicResponse(f, p)
	switch op.Operation() {
	case layers.OperationRDMAReadResponseFirst, layers.OperationRDMAReadResponseMiddle,
		layers.OperationRDMAReadResponseLast, layers.OperationRDMAReadResponseOnly:
		f.resp.ReadResponses++
		if f.respMsg == nil {
			f.respMsg = &msgStream{}
		}
		a.reassemble(f, f.respMsg, p, payload, false, nil)
	case layers.OperationAtomicAcknowledge:
		f.resp.AtomicACKs++
	}
	if p.AETH == nil {
		return
	}
	switch p.AETH.Type() {
	case layers.AckTypeACK:
		if op.Operation() == layers.OperationAcknowledge {
			f.resp.ACKs++
		}
		a.ackRTT(f, p)
	case layers.AckTypeNAK:
		f.resp.NAKs++
		if f.resp.NAKCodes == nil {
			f.resp.NAKCodes = make(map[string]uint64)
		}
		code := p.AETH.NAKCode().String()
		f.resp.NAKCodes[code]++
		a.addFinding(p, KindNAK, SeverityError, f.name(), fmt.Sprintf("NAK %s at PSN %d", code, p.BTH.PSN))
	case layers.AckTypeRNRNAK:
		f.resp.RNRNAKs++
		if f.resp.RNRTimers == nil {
			f.resp.RNRTimers = make(map[string]uint64)
		}
		d := p.AETH.RNRTimer().String()
		f.resp.RNRTimers[d]++
		a.addFinding(p, KindRNRNAK, SeverityWarning, f.name(), fmt.Sprintf("RNR NAK at PSN %d, retry after %s", p.BTH.PSN, d))
	}
}

// ackRTT matches an ACK against the pending requests of the reverse flow.
func (a *Analyzer) ackRTT(f *flowState, p *Packet) {
	req := a.peerOf(f, p.BTH.PSN)
	if req == nil {
		return
	}
	psn := p.BTH.PSN
	for i := 0; i < req.pendN; i++ {
		j := (req.pendHead - 1 - i + 2*pendingLen) % pendingLen
		e := req.pending[j]
		if e.psn == psn {
			if req.rtt == nil {
				req.rtt = &rttHist{}
			}
			req.rtt.add(p.Time.UnixNano() - e.t)
			if req.nic != nil {
				req.nic.add(figResponse, p.Time.UnixNano()-e.t)
			}
			req.pendN = i // older entries are acknowledged too
			return
		}
	}
}

// peerOf returns the request flow an ACK in f answers: the reverse flow
// linked by a CM connection or found earlier, else the one of the reverse
// direction whose pending requests hold the acknowledged PSN.
func (a *Analyzer) peerOf(f *flowState, psn uint32) *flowState {
	if f.peer >= 0 {
		return a.flowList[f.peer]
	}
	// Look among the flows of the reverse direction, a bounded number of
	// them a bounded number of times: unmatched ACKs must not cost a scan
	// of every flow each.
	if f.pairTries >= maxPairTries {
		return nil
	}
	f.pairTries++
	cands := a.byHosts[hostsOf(f.key.dst, f.key.src)]
	for _, gi := range cands[:min(len(cands), maxPairCandidates)] {
		g := a.flowList[gi]
		if g.peer >= 0 {
			continue
		}
		for i := 0; i < g.pendN; i++ {
			if g.pending[i].psn == psn {
				f.peer, g.peer = g.index, f.index
				return g
			}
		}
	}
	return nil
}

// Bounds of the search for the request flow an ACK answers.
const (
	maxPairTries      = 16
	maxPairCandidates = 256
)

// hostsKey packs a (source, destination) address pair.
type hostsKey struct {
	src, dst [16]byte
	lids     [2]uint16
	kinds    uint8
}

func hostsOf(src, dst Addr) hostsKey {
	return hostsKey{src: src.IP.As16(), dst: dst.IP.As16(), lids: [2]uint16{src.LID, dst.LID}, kinds: addrKind(src)<<2 | addrKind(dst)}
}

// checkMTU infers the path MTU from FIRST/MIDDLE packets and compares
// payloads with the negotiated one.
func (a *Analyzer) checkMTU(f *flowState, p *Packet, payload int) {
	pos := p.BTH.Opcode.Position()
	if (pos == layers.PositionFirst || pos == layers.PositionMiddle) && payload > 0 {
		if f.inferredMTU == 0 {
			f.inferredMTU = int32(payload)
			a.hostMTU[pairOf(f.key.src, f.key.dst)] = payload
		} else if payload != int(f.inferredMTU) {
			a.addFinding(p, KindMTUMismatch, SeverityWarning, f.name(), fmt.Sprintf("%s carries %d bytes, earlier FIRST/MIDDLE packets %d", p.BTH.OpcodeName(), payload, f.inferredMTU))
		}
	}
	if f.conn < 0 {
		return
	}
	neg := a.conns.list[f.conn].pathMTU()
	if neg <= 0 {
		return
	}
	if payload > neg {
		f.aboveMTU++
		a.addFinding(p, KindMTUAbove, SeverityError, f.name(), fmt.Sprintf("payload %d bytes exceeds the negotiated path MTU %d", payload, neg))
	}
	if f.inferredMTU > 0 && int(f.inferredMTU) != neg && !f.mtuReported {
		f.mtuReported = true
		a.addFinding(p, KindMTUMismatch, SeverityWarning, f.name(), fmt.Sprintf("inferred path MTU %d differs from the negotiated %d", f.inferredMTU, neg))
	}
}

// maxSeries bounds the throughput series of a flow: past it, the flow's
// interval doubles and its samples are merged in pairs, so that memory
// stays bounded however long (or however crafted) the capture is.
const maxSeries = 512

// addSample adds a packet to the flow's throughput series.
func (a *Analyzer) addSample(f *flowState, t time.Time, payload, wire int) {
	if f.interval == 0 {
		f.interval = int64(a.opts.Interval)
	}
	b := bucketStart(t.UnixNano(), f.interval)
	n := len(f.series)
	var i int
	switch {
	case n > 0 && f.series[n-1].Start.UnixNano() == b:
		i = n - 1
	case n == 0 || f.series[n-1].Start.UnixNano() < b:
		f.series = growSeries(f.series)
		f.series[n] = Sample{Start: time.Unix(0, b).UTC()}
		i = n
	default: // the clock went back: find or insert its bucket
		i = sort.Search(n, func(k int) bool { return f.series[k].Start.UnixNano() >= b })
		if f.series[i].Start.UnixNano() != b {
			f.series = growSeries(f.series)
			copy(f.series[i+1:], f.series[i:])
			f.series[i] = Sample{Start: time.Unix(0, b).UTC()}
		}
	}
	s := &f.series[i]
	s.Packets++
	if payload > 0 {
		s.PayloadBytes += uint64(payload)
	}
	s.WireBytes += uint64(wire)
	for len(f.series) > maxSeries {
		f.interval *= 2
		f.series = coarsen(f.series[:0], f.series, f.interval)
	}
}

// bucketStart returns the start of the interval holding t (nanoseconds).
func bucketStart(t, iv int64) int64 {
	b := t / iv * iv
	if b > t { // negative times round down too
		b -= iv
	}
	return b
}

// coarsen appends to dst the samples of src regrouped into intervals of
// iv nanoseconds; dst may be src[:0].
func coarsen(dst, src []Sample, iv int64) []Sample {
	for _, s := range src {
		b := bucketStart(s.Start.UnixNano(), iv)
		if n := len(dst); n > 0 && dst[n-1].Start.UnixNano() == b {
			d := &dst[n-1]
			d.Packets += s.Packets
			d.PayloadBytes += s.PayloadBytes
			d.WireBytes += s.WireBytes
			continue
		}
		s.Start = time.Unix(0, b).UTC()
		dst = append(dst, s)
	}
	return dst
}

// addFinding records an anomaly.
func (a *Analyzer) addFinding(p *Packet, kind, severity, flow, detail string) {
	p.Findings++
	if len(a.findings) >= a.opts.MaxFindings {
		a.dropped++
		return
	}
	a.findings = append(a.findings, Finding{Frame: p.Frame, Time: p.Time, Kind: kind, Severity: severity, Flow: flow, Detail: detail, File: a.opts.File})
	a.shard.noteFinding(a.pkt.Frame)
}
