package nccl

import (
	"math/bits"

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
	first   map[flowKey]firstWrite
	entries []Entry // DecodeCTS's, reused
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector {
	return &Collector{byKey: map[connKey]*conn{}, posted: map[bufKey]posted{}, first: map[flowKey]firstWrite{}}
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
}

// Add looks at one decoded packet (analyze.Packet, as Analyzer.Feed
// returns it): a CTS write, or a data write to a posted buffer. Other
// packets cost a few comparisons.
func (c *Collector) Add(p *analyze.Packet) {
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
			c.data(bufKey{sender: p.Src, receiver: p.Dst, addr: p.RETH.VA}, p.RETH.RKey, p.RETH.DMALength, p.ImmDt.Immediate, p.BTH.DestQP)
		}
	}
}

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
			c.posted[bufKey{sender: k.sender, receiver: k.receiver, addr: e.Addr, layout: li}] = posted{c: cn, slot: slot, rkeys: e.Rkeys, n: e.NRkeys, size: e.Size, nreqs: e.NReqs}
			addrs = append(addrs, e.Addr)
		}
		cn.slots[slot] = addrs
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
			c.first[flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP}] = firstWrite{buf: b, length: p.RETH.DMALength}
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
		c.message(w.buf, e, w.length, p.BTH.DestQP)
	}
}

// data takes a one-packet RDMA WRITE WITH IMMEDIATE: a message when it
// names a posted buffer and key, fits it, and its immediate is its
// length.
func (c *Collector) data(b bufKey, rkey, length, imm, qp uint32) {
	for li := range layouts {
		b.layout = li
		if e, ok := c.posted[b]; ok && e.hasRkey(rkey) && uint64(length) <= e.size && immediateFits(imm, length, e.nreqs) {
			c.message(b, e, length, qp)
		}
	}
}

// message counts a data message into the connection of the buffer it
// filled, which it retires.
func (c *Collector) message(b bufKey, e posted, length, qp uint32) {
	delete(c.posted, b)
	cn := e.c
	cn.messages++
	cn.bytes += uint64(length)
	for _, q := range cn.dataQPs {
		if q == qp {
			return
		}
	}
	if len(cn.dataQPs) < maxDataQPs {
		cn.dataQPs = append(cn.dataQPs, qp)
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
