package analyze

import (
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
	"github.com/roce-dissect/roce-dissect/analyze/internal/nic"
	"github.com/roce-dissect/roce-dissect/analyze/internal/pfc"
	"github.com/roce-dissect/roce-dissect/analyze/internal/toolcut"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Options tune an Analyzer. The zero value is usable.
type Options struct {
	// Interval is the width of a throughput series bucket (default 1 ms).
	Interval time.Duration
	// NoSeries keeps no throughput series (Flow.Series stays empty): a
	// flow then costs no memory per interval. For reports that do not
	// show the series (the text and CSV reports).
	NoSeries bool
	// NoMerge keeps none of the state Report.Merge needs beyond the
	// report's own fields (each flow's first requests and the messages they
	// completed, about 100 bytes a flow): for a report that will not be
	// merged with another (one capture file). Its report cannot be merged
	// (ErrNotMergeable).
	NoMerge bool
	// NoICRC skips ICRC/VCRC verification (all packets count as
	// unverifiable).
	NoICRC bool
	// RoCEPorts are UDP destination ports decoded as RoCE v2 besides 4791.
	RoCEPorts []uint16
	// MaxFlows caps the flow table (default 1,000,000); packets of further
	// flows are counted in Capture.FlowsDropped and not tracked.
	MaxFlows int
	// MaxConnections caps the CM connection table (default 100,000): a
	// REQ with a new CommID beyond it is counted in
	// Capture.ConnectionsDropped and not tracked.
	MaxConnections int
	// MaxFindings caps the findings and malformed frames listed (default
	// 100,000); further ones are counted in Report.FindingsDropped.
	MaxFindings int
	// File names the capture in findings when several files are merged.
	File string
	// Pieces, when set, are the files read one after another as the
	// capture fed (a rotation): the details of findings name the frames
	// of other frames by their file (Pieces.FrameName). The frames fed
	// are numbered as one stream all the same; Pieces.Localize turns the
	// report's references into their files'.
	Pieces *Pieces
	// DecodeRDAs says how the RD opcodes (0x40–0x54) are decoded: the
	// zero value decides per packet (DC, NVIDIA's Dynamically Connected
	// transport, unless the packet's length proves RD; see
	// layers.RDDecoding); layers.RDDecodeRD or RDDecodeDC force one.
	DecodeRDAs layers.RDDecoding
	// LinkSpeed is the link speed in bits per second at which pause
	// quanta (512 bit times) are timed (default 100 Gb/s).
	LinkSpeed float64
	// PauseStorm is how long a priority may stay paused without a break
	// before it is a pause_storm (default 200 ms).
	PauseStorm time.Duration
	// DSCPPriority maps a DSCP (index 0–63) to the 802.1p priority of an
	// untagged packet; nil maps DSCP d to d >> 3.
	DSCPPriority []uint8
	// OnRelease, when set, is called by Finish and by a report stream
	// (FinishStream, then combineShardStreams once its combiner is built)
	// of 32,768 flows or more: once the flow table is released; while the
	// flows are turned into reports, when the heap would otherwise grow
	// past the largest it was at a call (checked every 8,192 flows); and
	// once the last flow is released. A caller with millions of flows can
	// collect garbage there (runtime.GC) so that memory peaks at about the
	// larger of the flow table and the report rather than their sum. The
	// library itself never runs the garbage collector.
	OnRelease func()
	// OnMessage, when set, is called for every message counted in its
	// flow's Messages.Count, during the Feed of the packet that completes
	// it (see Message). Left nil, it costs the analysis nothing.
	OnMessage func(Message)
	// Observer, when set, is called once by New (so once by each shard
	// of a Sharded), and the function it returns is called with every
	// packet that Analyzer decodes, once analyzed, in the order it is fed
	// (the Packet as Feed returns it: valid until the next Feed). A
	// shard's observer sees the frames of its host pairs, both directions
	// of each: an observer that needs no more (nccl.Collector) follows a
	// sharded run with one observer per shard, combined at the end.
	Observer func() func(*Packet)

	// flowBudget and connBudget, when set, cap the flows and connections
	// of the Analyzer with others' (Budget.New, a Sharded's shards): a
	// flow (connection) is tracked only if its budget allows too.
	flowBudget, connBudget *flowBudget
	// shard says the Analyzer sees one shard of a capture among others
	// (a Sharded's: the frames of some host pairs, fed with feedShard):
	// it also records what combineShards replays across the shards (CM
	// messages, cut frames, the first flow the cap refused), and Finish
	// returns its part of the report, which combineShards combines with
	// the others'. Without it the Analyzer is the capture's only shard,
	// and Finish combines its part alone: every report is the combiner's.
	shard bool
	// shared is what the shards of one Sharded share besides the budgets
	// (nil: shards fed otherwise).
	shared *shardShared
	// heap is the heap a report's releaser reads (nil: the runtime's;
	// tests set their own).
	heap func() uint64
}

const (
	defaultInterval    = time.Millisecond
	defaultMaxFlows    = 1_000_000
	defaultMaxFindings = 100_000
)

// Analyzer turns frames into a Report. Feed it frames in capture order;
// memory grows with the number of flows, not of packets, and a frame of an
// existing flow is analyzed without allocating. An Analyzer is not safe
// for concurrent use: analyze files in parallel with one Analyzer each and
// Merge their reports.
type Analyzer struct {
	opts    Options
	observe func(*Packet) // Options.Observer's, nil without one
	// frameFindings is where the findings of the frame being fed start
	// in findings (FrameFindings).
	frameFindings int
	frameBuf      []Finding // FrameFindings' result, reused

	dec *decode.Decoder // the decode stage: frames into Packets
	pkt *Packet         // dec's Packet, the frame being fed

	capture  Capture
	first    time.Time
	last     time.Time
	tloc     *time.Location        // the location of the flows' times (flowtime.go)
	dirs     map[hostsKey]*hostDir // flows by (source, destination), for new flows and dirFlows
	index    flowIndex             // flows by key (flowindex.go)
	flowList []*flowState
	hostMTU  map[hostPair]int
	conns    connTable
	findings findingList // the findings listed, within Options.MaxFindings

	dropSketch sketch
	shifts     [shiftCacheLen]shiftEntry // ICRC shift factors by length, for recoverSrcPort

	wrapped wrapCounts // the frames that arrived in encapsulations (wrapcount.go)
	pause   pfc.Track  // PFC and PAUSE frames (pause.go)
	nic     nic.Stage  // NIC behaviour (package nic, nic.go)

	cut *toolcut.Stage // the frames the capture tool cut (package internal/toolcut, cut.go)

	shard *shardFeed // what the combiner needs (the replays' records only with Options.shard)

	prefetched   uintptr // what Prefetch read, kept so that its reads are made (prefetch.go)
	prefetchRest int     // the Prefetches that say no before one looks again
}

// withDefaults fills in the defaults of the options left zero.
func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = defaultInterval
	}
	if o.MaxFlows <= 0 {
		o.MaxFlows = defaultMaxFlows
	}
	if o.MaxFindings <= 0 {
		o.MaxFindings = defaultMaxFindings
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = defaultMaxConnections
	}
	if o.LinkSpeed <= 0 {
		o.LinkSpeed = DefaultLinkSpeed
	}
	if o.PauseStorm <= 0 {
		o.PauseStorm = DefaultPauseStorm
	}
	return o
}

// New returns an Analyzer.
func New(opts Options) *Analyzer {
	opts = opts.withDefaults()
	a := &Analyzer{
		opts:    opts,
		dec:     decode.New(decode.Options{RoCEPorts: opts.RoCEPorts, DecodeRDAs: opts.DecodeRDAs, DSCPPriority: opts.DSCPPriority}),
		dirs:    make(map[hostsKey]*hostDir),
		index:   newFlowIndex(),
		hostMTU: make(map[hostPair]int),
		conns:   newConnTable(),
	}
	a.pkt = a.dec.Packet()
	a.pause = pfc.New(pauseConfig(opts))
	a.conns.MaxOrphans = a.maxOrphans()
	a.findings.max = opts.MaxFindings
	a.shard = &shardFeed{replay: opts.shard, shared: opts.shared}
	a.cut = toolcut.New(toolcut.Config{Shard: opts.shard})
	if opts.Observer != nil {
		a.observe = opts.Observer()
	}
	return a
}

// NextFrame is the number Feed gives the next frame.
func (a *Analyzer) NextFrame() uint64 { return a.capture.Frames + 1 }

// Feed analyzes one frame and returns its decoded view.
func (a *Analyzer) Feed(ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte) *Packet {
	return a.feed(a.NextFrame(), ci, linkType, data)
}

// feed analyzes one frame, numbered frame.
func (a *Analyzer) feed(frame uint64, ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte) *Packet {
	a.capture.Frames++
	a.frameFindings = len(a.findings.list)
	p := a.dec.Decode(frame, ci, linkType, data)
	h := a.dec.Headers()
	a.capture.Bytes += uint64(p.Length)
	if p.MACControl != nil {
		a.pause.Frame(p.Frame, p.Time, h.SrcMAC, p.MACControl)
	}
	if len(p.Wraps) > 0 {
		a.wrapped.count(p.Wraps)
	}
	if p.Length != h.OrigLength {
		a.flagOriginalLength(p, h.OrigLength)
	}
	a.checkCut(p, &h.Lens, len(data))
	// A frame without a time (a pcapng simple packet block before any
	// timed frame) leaves the capture's span alone. A frame later than
	// the last, the common case, is not before the first, which is no
	// later than the last: only the first timed frame sets both.
	if !p.Time.IsZero() {
		switch {
		case p.Time.After(a.last):
			a.last = p.Time
			if a.first.IsZero() {
				a.first = p.Time
			}
		case a.first.IsZero() || p.Time.Before(a.first):
			a.first = p.Time
		}
	}
	switch {
	case !p.IsRDMA:
		a.capture.OtherPackets++
		a.capture.others.add(otherKeyOf(h.Other), otherCount{1, uint64(p.Length)})
	case p.Err != nil:
		a.capture.Malformed++
		if len(a.capture.MalformedFrames) < a.opts.MaxFindings {
			a.capture.MalformedFrames = append(a.capture.MalformedFrames, Malformed{Frame: p.Frame, Reason: p.Err.Error()})
		}
		if fd := a.finding(p, KindMalformed, SeverityError, nil); fd != nil {
			fd.Detail = p.Err.Error()
		}
		// A malformed frame is no flow's and counts in no ICRC figure,
		// but its ICRC, when its BTH decoded, still tells whether it was
		// damaged on the way or sent so: every view shows the verdict.
		a.checkICRC(p, h.Network, h.NetHdr, h.UDPHdr)
		if p.ICRC.Status == layers.ICRCBad && p.Encap == EncapRoCEv2 {
			a.recoverSrcPort(nil, p, h.UDPHdr)
		}
	default:
		a.capture.RoCEPackets++
		a.analyzeIB(p, ci, h.IBLen, h.Network, h.NetHdr, h.UDPHdr)
	}
	if a.observe != nil {
		a.observe(p)
	}
	return p
}
