package nccl

// MarkKind is what a packet is to NCCL (Mark).
type MarkKind uint8

// The kinds of Mark.
const (
	MarkNone MarkKind = iota // not a CTS or data message the Collector counted
	MarkCTS                  // a CTS write whose entries decode
	MarkData                 // the packet that ended a data message joined to a CTS entry
)

// Mark is what the packet a Collector took last was to NCCL, as far as
// the packets before it and itself tell (Collector.Last).
type Mark struct {
	Kind MarkKind
	// Rank is the sender's rank: for a CTS its tag, for data the
	// connection's (-1 when its CTS named different ranks).
	Rank int
	// ReceiverRank is the rank of the receiver's address, when exactly
	// one rank's CTS have been written to it so far, else -1.
	ReceiverRank int
	// Idx is the CTS' idx: the step of the connection, for data the one
	// its buffer was posted with.
	Idx uint64
	// Length is a data message's length (its RETH DMA length), 0 for a
	// CTS.
	Length uint32
}

// Last says what the packet Add took last was: a CTS whose entries
// decode in a layout (the one whose connections carried the most data
// messages so far when several do), or the packet that ended a data
// message whose RETH named the address and rkey of a posted CTS entry
// (a one-packet write, or the last of a multi-packet one); every other
// packet is MarkNone. The marks are what the Collector counts at each
// packet: per connection, as many as Result's CTS and Messages when
// one layout decodes the CTS. It does not allocate.
func (c *Collector) Last() Mark {
	l := &c.last
	if l.kind == MarkNone {
		return Mark{Rank: -1, ReceiverRank: -1}
	}
	m := Mark{Kind: l.kind, Rank: l.tag, ReceiverRank: -1, Idx: l.idx, Length: l.length}
	// A rank is the address its CTS were written to: the sender's of
	// the connections whose CTS named one rank (Combine's ranks).
	for _, cn := range c.conns {
		if cn.key.layout != l.cn.key.layout || cn.key.sender != l.cn.key.receiver || cn.tag < 0 || cn.tag == m.ReceiverRank {
			continue
		}
		if m.ReceiverRank >= 0 {
			m.ReceiverRank = -1 // several ranks: unknown
			break
		}
		m.ReceiverRank = cn.tag
	}
	return m
}

// mark notes what the packet being added is: when it is so in several
// layouts, the one whose connections carried the most data messages.
func (c *Collector) mark(l lastPacket) {
	if c.last.kind != MarkNone && c.layoutMessages[l.cn.key.layout] <= c.layoutMessages[c.last.cn.key.layout] {
		return
	}
	c.last = l
}
