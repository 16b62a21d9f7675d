package trace

import (
	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Limits bound the memory of a Collector and the size of the trace.
type Limits struct {
	// Events caps the events of the trace (messages, CNPs, findings,
	// counters): further ones are counted and left out, and a note
	// event says how many.
	Events int
	// Flows caps the flows a Collector gives a track; the messages of
	// further flows are counted and left out.
	Flows int
}

// DefaultLimits keep up to 1,000,000 events and 100,000 flows.
var DefaultLimits = Limits{Events: 1_000_000, Flows: 100_000}

// opens is how many message beginnings a flow remembers: a message
// completes after the next one began only when its packets came out of
// order.
const opens = 4

// open is the first packet of a message.
type open struct {
	frame uint64
	ns    int64
}

// flowKey names a flow the way the analyzer keys it.
type flowKey struct {
	src, dst analyze.Addr
	tun      analyze.FlowTunnel
	qp       uint32
}

// track is one flow's timeline.
type track struct {
	key   flowKey
	tid   int
	opens [opens]open // ring of the latest message beginnings
	next  int
	// inMsg: a message of the flow's request or response stream is
	// open (its FIRST, or a MIDDLE or LAST without one, was seen).
	inMsg [2]bool
	cnps  uint64
}

// kinds of the events a Collector keeps.
const (
	evMessage uint8 = iota
	evCNP
)

// event is a message slice or a CNP counter value.
type event struct {
	t          *track
	start, end int64 // Unix ns
	first      uint64
	frame      uint64
	value      uint64 // bytes, or CNPs so far
	kind       uint8
	op         layers.Opcode // of the packet that completed a message
}

// Collector gathers the messages and CNPs of one capture file's
// analysis. Give Message to analyze.Options.OnMessage and Add every
// packet the Analyzer's Feed returns. It is not safe for concurrent use:
// use one per Analyzer. A nil Collector ignores everything.
type Collector struct {
	lim     Limits
	flows   map[flowKey]*track
	order   []*track
	events  []event
	dropped uint64 // events beyond Limits.Events
	// flowsOver counts the messages and CNPs of flows beyond Limits.Flows.
	flowsOver uint64
}

// NewCollector returns a Collector with the given limits (zero fields
// take DefaultLimits').
func NewCollector(lim Limits) *Collector {
	if lim.Events <= 0 {
		lim.Events = DefaultLimits.Events
	}
	if lim.Flows <= 0 {
		lim.Flows = DefaultLimits.Flows
	}
	return &Collector{lim: lim, flows: make(map[flowKey]*track)}
}

// trackOf returns the flow's track, making it; nil beyond Limits.Flows.
func (c *Collector) trackOf(k flowKey) *track {
	t := c.flows[k]
	if t == nil {
		if len(c.order) >= c.lim.Flows {
			c.flowsOver++
			return nil
		}
		t = &track{key: k, tid: len(c.order) + 2} // tid 1: the capture track
		c.flows[k] = t
		c.order = append(c.order, t)
	}
	return t
}

// keep appends an event within Limits.Events.
func (c *Collector) keep(ev event) {
	if len(c.events) >= c.lim.Events {
		c.dropped++
		return
	}
	c.events = append(c.events, ev)
}

// Add records the message beginnings and CNPs of a decoded packet.
func (c *Collector) Add(p *analyze.Packet) {
	if c == nil || p == nil || !p.IsRDMA || p.Err != nil || p.BTH == nil {
		return
	}
	op := p.BTH.Opcode
	k := flowKey{src: p.Src, dst: p.Dst, tun: p.Tunnel(), qp: p.BTH.DestQP}
	if op.IsCNP() {
		if t := c.trackOf(k); t != nil {
			t.cnps++
			ns := p.Time.UnixNano()
			c.keep(event{t: t, start: ns, end: ns, frame: p.Frame, value: t.cnps, kind: evCNP})
		}
		return
	}
	stream := 0
	if op.IsResponse() {
		stream = 1
	}
	switch op.Position() {
	case layers.PositionFirst:
		c.opened(k, stream, p)
	case layers.PositionMiddle, layers.PositionLast:
		if t := c.flows[k]; t == nil || !t.inMsg[stream] {
			c.opened(k, stream, p)
		}
	}
	if pos := op.Position(); pos == layers.PositionLast || pos == layers.PositionOnly {
		if t := c.flows[k]; t != nil {
			t.inMsg[stream] = false
		}
	}
}

// opened remembers that p began a message of the flow.
func (c *Collector) opened(k flowKey, stream int, p *analyze.Packet) {
	t := c.trackOf(k)
	if t == nil {
		return
	}
	t.inMsg[stream] = true
	t.opens[t.next] = open{frame: p.Frame, ns: p.Time.UnixNano()}
	t.next = (t.next + 1) % opens
}

// Message records a completed message as a slice on its flow's track:
// from its first packet, when the Collector saw it, else from the packet
// that completed it.
func (c *Collector) Message(m analyze.Message) {
	if c == nil {
		return
	}
	t := c.trackOf(flowKey{src: m.Src, dst: m.Dst, tun: m.Tunnel, qp: m.DestQP})
	if t == nil {
		return
	}
	end := m.Time.UnixNano()
	start := end
	if m.First != 0 && m.First != m.Frame {
		for _, o := range t.opens {
			if o.frame == m.First && o.ns <= end {
				start = o.ns
				break
			}
		}
	}
	c.keep(event{t: t, start: start, end: end, first: m.First, frame: m.Frame, value: m.Bytes, kind: evMessage, op: m.Opcode})
}
