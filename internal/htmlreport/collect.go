// Package htmlreport renders an analyze.Report as one self-contained HTML
// page: the capture summary (with the encapsulations and tunnels frames
// arrived in, wraps.go), the connections, a sortable flow table, the
// pause frames per sender and priority (pause.go), the findings, and per
// flow an interactive PSN-over-time sequence chart and its throughput
// over time. The charts use uPlot (MIT, vendored under assets/ with its
// licence) and need no network access to view.
//
// The per-packet points of the sequence charts are gathered by a Collector
// fed with the analyzer's decoded packets; it keeps a bounded number of
// them per flow (see Limits).
package htmlreport

import (
	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Limits bound the memory of a Collector and the size of the page.
type Limits struct {
	// Flows is the number of flows (in order of first packet) whose
	// packets are kept for the sequence chart; later flows are listed in
	// the tables without a chart.
	Flows int
	// Plain is the number of ordinary packets (requests, ACKs, READ
	// responses without a finding or a congestion mark) kept per flow:
	// beyond it they are decimated evenly (every 2nd, then every 4th, …).
	Plain int
	// Marked is the number of packets kept per flow that carry a finding,
	// an ECN-CE mark, a NAK, an RNR NAK or a CNP; later ones are counted,
	// not kept.
	Marked int
}

// DefaultLimits keep up to 1,500 packets for each of the first 128 flows
// (of each file): the page draws at most MaxChartPoints in all.
var DefaultLimits = Limits{Flows: 128, Plain: 1000, Marked: 500}

// Point kinds: what a packet is on the sequence chart.
const (
	kindRequest  uint8 = iota // a request (SEND, WRITE, READ request, atomic, …)
	kindACK                   // an ACK (incl. atomic acknowledge)
	kindReadResp              // a READ response packet
	kindNAK                   // a NAK
	kindRNRNAK                // an RNR NAK
	kindCNP                   // a congestion notification packet
)

// Point flags.
const (
	flagECNCE   uint8 = 1 << iota // IP/GRH ECN field is CE
	flagFinding                   // the analyzer reported a finding on this frame
)

// point is one packet of a flow.
type point struct {
	ns    int64 // capture time, Unix nanoseconds
	frame uint64
	psn   uint32
	kind  uint8
	flags uint8
}

// flowKey names a flow the way the analyzer keys it.
type flowKey struct {
	src, dst analyze.Addr
	tun      analyze.FlowTunnel
	qp       uint32
}

// flowPoints holds the kept points of one flow.
type flowPoints struct {
	key    flowKey
	plain  []point // every stride-th ordinary packet
	stride uint64
	nPlain uint64 // ordinary packets seen
	marked []point
	// markedDropped counts marked packets beyond Limits.Marked.
	markedDropped uint64
	tput          buckets
}

// Collector gathers the per-packet points of the sequence charts from the
// packets an analyze.Analyzer decodes. Feed it every packet Feed returns,
// in order. It is not safe for concurrent use: use one per Analyzer.
type Collector struct {
	lim   Limits
	flows map[flowKey]*flowPoints
	order []*flowPoints
	// flowsOver counts flows beyond Limits.Flows (no chart).
	flowsOver uint64
	over      map[flowKey]struct{}
}

// NewCollector returns a Collector with the given limits (zero fields take
// DefaultLimits' values).
func NewCollector(lim Limits) *Collector {
	if lim.Flows <= 0 {
		lim.Flows = DefaultLimits.Flows
	}
	if lim.Plain < 2 {
		lim.Plain = DefaultLimits.Plain
	}
	if lim.Marked <= 0 {
		lim.Marked = DefaultLimits.Marked
	}
	return &Collector{lim: lim, flows: make(map[flowKey]*flowPoints), over: make(map[flowKey]struct{})}
}

// Add records one decoded packet; packets without a BTH or that could not
// be decoded are ignored. A nil Collector ignores every packet.
func (c *Collector) Add(p *analyze.Packet) {
	if c == nil || p == nil || !p.IsRDMA || p.Err != nil || p.BTH == nil {
		return
	}
	k := flowKey{src: p.Src, dst: p.Dst, tun: p.Tunnel(), qp: p.BTH.DestQP}
	fp := c.flows[k]
	if fp == nil {
		if len(c.order) >= c.lim.Flows {
			if _, ok := c.over[k]; !ok && len(c.over) < 1<<16 {
				c.over[k] = struct{}{}
				c.flowsOver++
			}
			return
		}
		fp = &flowPoints{key: k, stride: 1}
		c.flows[k] = fp
		c.order = append(c.order, fp)
	}
	pt := point{ns: p.Time.UnixNano(), frame: p.Frame, psn: p.BTH.PSN, kind: pointKind(p)}
	fp.tput.add(pt.ns, p.PayloadLen, p.Length)
	if p.ECN == 3 {
		pt.flags |= flagECNCE
	}
	if p.Findings > 0 {
		pt.flags |= flagFinding
	}
	if pt.flags != 0 || pt.kind == kindNAK || pt.kind == kindRNRNAK || pt.kind == kindCNP {
		if len(fp.marked) < c.lim.Marked {
			fp.marked = append(fp.marked, pt)
		} else {
			fp.markedDropped++
		}
		return
	}
	n := fp.nPlain
	fp.nPlain++
	if n%fp.stride != 0 {
		return
	}
	if len(fp.plain) >= c.lim.Plain {
		// Keep every other point and halve the rate from now on: the
		// kept points stay evenly spread over the flow.
		j := 0
		for i := 0; i < len(fp.plain); i += 2 {
			fp.plain[j] = fp.plain[i]
			j++
		}
		fp.plain = fp.plain[:j]
		fp.stride *= 2
		if n%fp.stride != 0 {
			return
		}
	}
	fp.plain = append(fp.plain, pt)
}

// pointKind classifies a packet for the chart.
func pointKind(p *analyze.Packet) uint8 {
	op := p.BTH.Opcode
	switch {
	case op.IsCNP():
		return kindCNP
	case op.IsResponse():
		switch op.Operation() {
		case layers.OperationRDMAReadResponseFirst, layers.OperationRDMAReadResponseMiddle,
			layers.OperationRDMAReadResponseLast, layers.OperationRDMAReadResponseOnly:
			if p.AETH == nil || p.AETH.IsACK() {
				return kindReadResp
			}
		}
		if p.AETH != nil {
			switch {
			case p.AETH.IsNAK():
				return kindNAK
			case p.AETH.IsRNRNAK():
				return kindRNRNAK
			}
		}
		return kindACK
	}
	return kindRequest
}
