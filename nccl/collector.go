package nccl

import (
	"math/bits"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Bounds of a Collector's memory, whatever the traffic: the candidate
// connections it follows (a CTS of a connection beyond them is not
// looked at), and the data QPs it keeps per connection
// (NCCL_IB_QPS_PER_CONNECTION is at most 128).
const (
	MaxConnections = 4096
	maxDataQPs     = 128
)

// Collector recognises NCCL's traffic in the packets of one capture (or
// one shard of its host pairs), fed in capture order by Add. It holds
// the candidate connections (the FIFOs CTS writes went to, one per
// layout their entries parse in) and their outstanding CTS entries (at
// most 256 slots of 8 per connection): its memory grows with
// connections and receives posted, never with packets. Result, or
// Combine of several, says what it saw. A Collector is not safe for
// concurrent use.
type Collector struct {
	conns []*conn
	byKey map[connKey]*conn
	// posted are the outstanding CTS entries by the buffer the sender
	// is to write to.
	posted map[bufKey]posted
	// first are the data writes whose first packet named a posted buffer
	// and whose immediate is still to come, by flow.
	first map[flowKey]firstWrite
	// flows are the data QPs' flows that filled a posted buffer, for the
	// resends and ECN marks of the step each is writing.
	flows map[flowKey]*dataFlow
	// tracking is whether flows has one: a field, so that a packet of
	// traffic that is not NCCL's tests a bool, not a map.
	tracking bool
	entries  []Entry // DecodeCTS's, reused
	// offset is how far the capture's clock runs ahead of the reference
	// clock (SetClockOffset), which Combine puts the times on.
	offset int64
	// layoutMessages are the data messages counted in each layout's
	// connections, for the layout a packet's mark names (mark).
	layoutMessages [len(layouts)]uint64
	// last is what the packet Add took last was (Last).
	last lastPacket
}

// lastPacket is what Add's last packet was: a CTS or the packet that
// ended a data message (kind), on connection cn, for its step idx.
type lastPacket struct {
	kind   MarkKind
	cn     *conn
	tag    int // the CTS' own tag
	idx    uint64
	length uint32 // the data message's
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{byKey: map[connKey]*conn{}, posted: map[bufKey]posted{}, first: map[flowKey]firstWrite{}, flows: map[flowKey]*dataFlow{}}
}

// connKey names a candidate connection: the layout its CTS parse in, the
// sender (who owns the FIFO, and receives the CTS on ctsQP) and the
// receiver, and the FIFO.
type connKey struct {
	layout           int
	sender, receiver analyze.Addr
	ctsQP            uint32
	fifoRkey         uint32
	fifoAddr         uint64
}

// conn is a candidate connection's counts.
type conn struct {
	key      connKey
	tag      int // the sender's rank: the CTS' tag, -1 when they differ
	cts      uint64
	messages uint64
	bytes    uint64
	dataQPs  []uint32
	// slots are the buffers each FIFO slot's last CTS posted, so that a
	// CTS that reuses the slot retires them.
	slots map[uint16][]uint64
	// steps are the receives posted (one per CTS idx), in the order
	// their CTS came: what the collectives are made of.
	steps []step
}

// step is one receive a receiver posted on a connection (a CTS idx,
// its entries together) and the data the sender wrote to it. Times are
// Unix nanoseconds, 0 for none.
type step struct {
	idx  uint64
	cts  int64  // the CTS write
	size uint64 // the most one of its entries offered
	// messages and bytes are the data messages that filled its entries;
	// first and last the first and last packet of their writes.
	messages    uint32
	bytes       uint64
	first, last int64
	// resends are data packets of its connection that repeated a PSN
	// already seen, ce those marked ECN-CE, while it was being written.
	resends, ce uint32
}

// dataFlow is a data QP's flow: the connection and step it last wrote
// to, and the PSN it reached.
type dataFlow struct {
	c    *conn
	step int
	psn  uint32
}

// stepOf returns the index of the step of idx, added when new (a CTS
// sent again, seen once more, names a recent one).
func (cn *conn) stepOf(idx uint64, t int64, size uint64) int {
	for i := len(cn.steps) - 1; i >= 0 && i >= len(cn.steps)-fifoSlots; i-- {
		if s := &cn.steps[i]; s.idx == idx {
			s.size = max(s.size, size)
			return i
		}
	}
	cn.steps = append(cn.steps, step{idx: idx, cts: t, size: size})
	return len(cn.steps) - 1
}

// bufKey is a receive buffer as the sender's data names it.
type bufKey struct {
	sender, receiver analyze.Addr
	addr             uint64
	layout           int
}

// posted is an outstanding CTS entry.
type posted struct {
	c     *conn
	slot  uint16
	rkeys [maxRecvs]uint32
	n     int // rkeys in use
	size  uint64
	nreqs int
	step  int // the index of its step in c.steps
}

// flowKey is a data QP's flow.
type flowKey struct {
	src, dst analyze.Addr
	qp       uint32
}

// firstWrite is the first packet of a multi-packet data write.
type firstWrite struct {
	buf    bufKey
	length uint32
	t      int64 // its time
}

// Add looks at one decoded packet (analyze.Packet, as Analyzer.Feed
// returns it): a CTS write, or a data write to a posted buffer. Other
// packets cost a few comparisons.
func (c *Collector) Add(p *analyze.Packet) {
	c.last.kind = MarkNone
	if p == nil || p.BTH == nil || p.Err != nil {
		return
	}
	switch p.BTH.Opcode {
	case layers.OpcodeRCRDMAWriteOnly:
		if p.RETH != nil {
			c.cts(p)
		}
	case layers.OpcodeRCRDMAWriteFirst:
		if p.RETH != nil && (len(c.posted) > 0 || len(c.first) > 0) {
			c.dataFirst(p)
		}
	case layers.OpcodeRCRDMAWriteLast: // a write without immediate: no message
		if len(c.first) > 0 {
			delete(c.first, flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP})
		}
	case layers.OpcodeRCRDMAWriteLastWithImm:
		if p.ImmDt != nil && len(c.first) > 0 {
			c.dataLast(p)
		}
	case layers.OpcodeRCRDMAWriteOnlyWithImm:
		if p.RETH != nil && p.ImmDt != nil && len(c.posted) > 0 {
			c.data(p)
		}
	case layers.OpcodeRCRDMAWriteMiddle:
	default:
		return
	}
	// A data write (CTS included: a plain write), once NCCL's data
	// flows are known.
	if c.tracking {
		c.track(p)
	}
}

// track counts a data write's resent PSN or ECN-CE mark into the step
// its flow is writing.
func (c *Collector) track(p *analyze.Packet) {
	f := c.flows[flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP}]
	if f == nil {
		return
	}
	s := &f.c.steps[f.step]
	// PSNs are 24 bits: a packet at or behind the flow's PSN was sent
	// before.
	if d := int32(p.BTH.PSN-f.psn) << 8; d <= 0 && f.psn != noPSN {
		s.resends++
	} else {
		f.psn = p.BTH.PSN & 0xffffff
	}
	if p.ECN == 3 {
		s.ce++
	}
}

// noPSN is a flow's PSN before its first packet is tracked.
const noPSN = 1 << 31

// cts takes a plain RDMA WRITE that may be a CTS: in each layout its
// entries parse in, it posts them on that layout's candidate connection.
func (c *Collector) cts(p *analyze.Packet) {
	length := int(p.RETH.DMALength)
	if length <= 0 || length > maxRecvs*64 || length%32 != 0 {
		return
	}
	for li := range layouts {
		l := &layouts[li]
		entries, err := l.DecodeCTS(c.entries[:0], length, p.Payload)
		c.entries = entries
		if err != nil {
			continue
		}
		fifo, ok := l.FIFOAddr(p.RETH.VA, entries[0].Idx)
		if !ok {
			continue
		}
		// The receiver writes the CTS to the sender.
		k := connKey{layout: li, sender: p.Dst, receiver: p.Src, ctsQP: p.BTH.DestQP, fifoRkey: p.RETH.RKey, fifoAddr: fifo}
		cn := c.byKey[k]
		if cn == nil {
			if len(c.conns) >= MaxConnections {
				continue
			}
			cn = &conn{key: k, tag: entries[0].Tag, slots: map[uint16][]uint64{}}
			c.byKey[k] = cn
			c.conns = append(c.conns, cn)
		}
		cn.cts++
		c.mark(lastPacket{kind: MarkCTS, cn: cn, tag: entries[0].Tag, idx: entries[0].Idx})
		var size uint64
		for _, e := range entries {
			size = max(size, e.Size)
		}
		if cn.messages == 0 && len(cn.steps) >= 2*fifoSlots {
			c.forget(cn, li)
		}
		si := cn.stepOf(entries[0].Idx, p.Time.UnixNano(), size)
		slot := uint16(Slot(entries[0].Idx))
		for _, addr := range cn.slots[slot] { // the slot's earlier receives are retired
			b := bufKey{sender: k.sender, receiver: k.receiver, addr: addr, layout: li}
			if old, ok := c.posted[b]; ok && old.c == cn && old.slot == slot {
				delete(c.posted, b)
			}
		}
		addrs := cn.slots[slot][:0]
		for _, e := range entries {
			if e.Tag != cn.tag {
				cn.tag = -1
			}
			c.posted[bufKey{sender: k.sender, receiver: k.receiver, addr: e.Addr, layout: li}] = posted{c: cn, slot: slot, rkeys: e.Rkeys, n: e.NRkeys, size: e.Size, nreqs: e.NReqs, step: si}
			addrs = append(addrs, e.Addr)
		}
		cn.slots[slot] = addrs
	}
}

// SetClockOffset says that the clock of the capture c is fed from runs
// d ahead of the reference clock (capture points: points.File's
// ClockOffsetNs): Combine puts c's times on the reference clock.
func (c *Collector) SetClockOffset(d time.Duration) { c.offset = int64(d) }

// forget drops the older half of the steps of a connection no data was
// written to (CTS-like writes of what may not be NCCL): their slots have
// been posted again since, which retired their entries, so its steps
// stay within twice the FIFO's slots. The entries and flows that name a
// step kept are renumbered.
func (c *Collector) forget(cn *conn, li int) {
	n := len(cn.steps) - fifoSlots
	cn.steps = append(cn.steps[:0], cn.steps[n:]...)
	for _, addrs := range cn.slots {
		for _, addr := range addrs {
			b := bufKey{sender: cn.key.sender, receiver: cn.key.receiver, addr: addr, layout: li}
			if e, ok := c.posted[b]; ok && e.c == cn {
				e.step -= n
				if e.step < 0 { // not retired: no longer counted
					delete(c.posted, b)
					continue
				}
				c.posted[b] = e
			}
		}
	}
	for k, f := range c.flows {
		if f.c == cn {
			if f.step -= n; f.step < 0 {
				delete(c.flows, k)
			}
		}
	}
}

// dataFirst takes the first packet of a multi-packet RDMA WRITE: when
// it names a posted buffer, its immediate comes with its last; the QP's
// earlier write is over either way.
func (c *Collector) dataFirst(p *analyze.Packet) {
	delete(c.first, flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP})
	for li := range layouts {
		b := bufKey{sender: p.Src, receiver: p.Dst, addr: p.RETH.VA, layout: li}
		if e, ok := c.posted[b]; ok && e.hasRkey(p.RETH.RKey) && uint64(p.RETH.DMALength) <= e.size {
			fk := flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP}
			c.first[fk] = firstWrite{buf: b, length: p.RETH.DMALength, t: p.Time.UnixNano()}
			c.writing(fk, e)
			return
		}
	}
}

// dataLast takes the last packet of a multi-packet RDMA WRITE WITH
// IMMEDIATE whose first named a posted buffer.
func (c *Collector) dataLast(p *analyze.Packet) {
	k := flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP}
	w, ok := c.first[k]
	if !ok {
		return
	}
	delete(c.first, k)
	if e, ok := c.posted[w.buf]; ok && immediateFits(p.ImmDt.Immediate, w.length, e.nreqs) {
		c.message(w.buf, e, w.length, p.BTH.DestQP, w.t, p.Time.UnixNano())
	}
}

// data takes a one-packet RDMA WRITE WITH IMMEDIATE: a message when it
// names a posted buffer and key, fits it, and its immediate is its
// length.
func (c *Collector) data(p *analyze.Packet) {
	b := bufKey{sender: p.Src, receiver: p.Dst, addr: p.RETH.VA}
	rkey, length, imm, qp, t := p.RETH.RKey, p.RETH.DMALength, p.ImmDt.Immediate, p.BTH.DestQP, p.Time.UnixNano()
	for li := range layouts {
		b.layout = li
		if e, ok := c.posted[b]; ok && e.hasRkey(rkey) && uint64(length) <= e.size && immediateFits(imm, length, e.nreqs) {
			c.message(b, e, length, qp, t, t)
		}
	}
}

// message counts a data message, written from first to last (its
// first and last packet's times), into the connection and step of the
// buffer it filled, which it retires.
func (c *Collector) message(b bufKey, e posted, length, qp uint32, first, last int64) {
	delete(c.posted, b)
	cn := e.c
	c.mark(lastPacket{kind: MarkData, cn: cn, tag: cn.tag, idx: cn.steps[e.step].idx, length: length})
	c.layoutMessages[cn.key.layout]++
	cn.messages++
	cn.bytes += uint64(length)
	s := &cn.steps[e.step]
	s.messages++
	s.bytes += uint64(length)
	if s.first == 0 || first < s.first {
		s.first = first
	}
	s.last = max(s.last, last)
	c.writing(flowKey{src: b.sender, dst: b.receiver, qp: qp}, e)
	if !slices.Contains(cn.dataQPs, qp) && len(cn.dataQPs) < maxDataQPs {
		cn.dataQPs = append(cn.dataQPs, qp)
	}
}

// maxFlows bounds the data flows a Collector tracks.
const maxFlows = MaxConnections * maxDataQPs

// writing notes that the flow fk writes to the posted entry e's step.
func (c *Collector) writing(fk flowKey, e posted) {
	if f := c.flows[fk]; f != nil {
		f.c, f.step = e.c, e.step
	} else if len(c.flows) < maxFlows {
		c.flows[fk] = &dataFlow{c: e.c, step: e.step, psn: noPSN}
		c.tracking = true
	}
}

// hasRkey says whether rkey is one of the entry's.
func (e *posted) hasRkey(rkey uint32) bool {
	for _, k := range e.rkeys[:e.n] {
		if k == rkey && k != 0 {
			return true
		}
	}
	return false
}

// immediateFits says whether a data write's immediate is its length, in
// either byte order (host order up to 2.28, big-endian from 2.29.2 on),
// or 0 for receives posted together (their sizes travel otherwise).
func immediateFits(imm, length uint32, nreqs int) bool {
	return imm == length || bits.ReverseBytes32(imm) == length || nreqs > 1 && imm == 0
}
