package analyze

import (
	"fmt"
	"time"

	"github.com/gopacket/gopacket"

	"github.com/roce-dissect/roce-dissect/layers"
)

// flowKey identifies a flow: network source, network destination, the
// tunnel it arrived in (flowTunnel) and destination QP.
type flowKey struct {
	src, dst Addr
	tun      flowTunnel
	qp       uint32
}

// mapKey is flowKey packed into plain bytes, which compare faster than
// netip.Addr's handle: the key of the connections by data flow.
type mapKey struct {
	src, dst [16]byte
	lids     [2]uint16
	qp       uint32
	tun      flowTunnel
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
	return mapKey{src: k.src.IP.As16(), dst: k.dst.IP.As16(), lids: [2]uint16{k.src.LID, k.dst.LID}, qp: k.qp, tun: k.tun, kinds: addrKind(k.src)<<2 | addrKind(k.dst)}
}

// hostPair keys the path MTU inferred between two hosts (either
// direction) in one tunnel: two tenants' hosts of the same addresses are
// other hosts, on other paths.
type hostPair struct {
	a, b Addr
	tun  flowTunnel
}

// pair is the hosts of the direction, either way round, in its tunnel.
func (d *hostDir) pair() hostPair {
	if addrLess(d.src, d.dst) {
		return hostPair{d.src, d.dst, d.tun}
	}
	return hostPair{d.dst, d.src, d.tun}
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

// hostDir is one direction between two hosts, in one tunnel
// (flowTunnel): the flows it carries. A flow's own cost is a QP and an
// index (not its two addresses), and the search for the flows of a
// direction reads one list.
type hostDir struct {
	src, dst Addr
	tun      flowTunnel
	flows    []int32 // flow indices, in creation order
	srcName  string  // src.String(), made by the first report or finding that names it
	dstName  string
	tunName  string // the tunnel as FlowID names it ("" none), made by tunnelName
	// The first dirInline flows are listed here: a direction of a few
	// flows allocates no list.
	inFlows [dirInline]int32
}

// dirInline is how many flows a direction lists without allocating.
const dirInline = 4

// names returns the direction's source, destination and tunnel as
// reports name them: formatted once for all its flows.
func (d *hostDir) names() (src, dst, tunnel string) {
	if d.srcName == "" {
		d.srcName, d.dstName = d.src.String(), d.dst.String()
	}
	return d.srcName, d.dstName, d.tunnelName()
}

// tunnelName returns the direction's tunnel as FlowID names it, formatted
// once; "" for none.
func (d *hostDir) tunnelName() string {
	if d.tunName == "" && d.tun.kind != WrapNone {
		d.tunName = d.tun.report().String()
	}
	return d.tunName
}

// flowOf returns the index of the flow of key k.
func (a *Analyzer) flowOf(k flowKey) (int32, bool) {
	return a.find(&k, a.index.hash(&k.src, &k.dst, k.tun, k.qp))
}

// dirFlows returns the flows from src to dst in tunnel tun, in creation
// order.
func (a *Analyzer) dirFlows(src, dst Addr, tun flowTunnel) []int32 {
	if d := a.dirs[hostsOf(src, dst, tun)]; d != nil {
		return d.flows
	}
	return nil
}

// reverse returns the flows of the direction opposite to f's, in its
// tunnel, in creation order.
func (a *Analyzer) reverse(f *flowState) []int32 { return a.dirFlows(f.dir.dst, f.dir.src, f.dir.tun) }

// key returns the flow's key.
func (f *flowState) key() flowKey {
	return flowKey{src: f.dir.src, dst: f.dir.dst, tun: f.dir.tun, qp: f.qp}
}

// flowState is the running state of one flow.
type flowState struct {
	// Fields are ordered to leave no padding: a flowState is what the
	// flow table holds per flow (see docs/robustness.md on memory).
	dir          *hostDir // source and destination
	qp           uint32   // destination QP
	transport    layers.Transport
	hasTransport bool
	mtuReported  bool
	wideTime     bool // the times are in cold (flowtime.go)

	packets, wireBytes, payloadBytes uint64
	first, last                      int64 // Unix ns of the first and latest packet, in Analyzer.tloc (flowtime.go)

	// datagramSrc is the source QP whose PSNs a UD/RD flow follows.
	datagramSrc    uint32
	hasDatagramSrc bool
	prio           int8 // Flow.Priority, -1 unknown
	prioCNP        bool // prio is a CNP's (a later packet that is not one replaces it)
	psn            psnTracker

	resp *Responses // allocated by the first response

	reqMsg  msgStream
	log     *headLog // the first requests, for Merge (nil with Options.NoMerge)
	lastKey reqKey   // the last request, to tell an exact duplicate
	msgs    msgCounts
	mix     *flowMix // Flow.Ops and Messages.SizeBuckets, from the slab

	inferredMTU int32
	maxPayload  int32

	icrcOK   uint64    // packets whose ICRC verified; the unverifiable are the rest (icrcUnverifiable)
	cold     *flowCold // allocated by the first rare event
	loss     lossState // loss attribution (loss.go)
	nic      *nicState // NIC behaviour (nic.go), allocated by the second request or the first NIC event
	nicFirst txRec     // the first request, until nic is allocated

	// pending holds the last requests awaiting an ACK (pendingring.go).
	pending pendingRing

	peer      int32 // reverse flow, -1 if unknown
	pairTries uint8 // searches for the request flow of this flow's ACKs
	// hasNIC says the flow is an RC/UC request flow with NIC state (nic,
	// or only nicFirst while hasNICFirst).
	hasNIC, hasNICFirst bool
	hasLast             bool // lastKey is set
	index               int32
	conn                int32 // connection index, -1 if none
	rtt                 *rttHist

	series *flowSeries // the throughput series, unless Options.NoSeries

	// activeNs and activeBytes are Flow.ActiveNs and the payload bytes
	// sent in it (flowtime.go).
	activeNs    int64
	activeBytes uint64
}

// flowCold is the state of a flow that most flows never write: counts of
// anomalies and congestion marks, the READ responses' message stream, the
// source ports recovered from ICRCs. A flow allocates it by the first.
type flowCold struct {
	retrans, dups, ooo uint64
	aboveMTU           uint64
	unknownOps         uint64 // packets whose opcode is not in the IBTA table
	icrcBad            uint64
	// incomplete and dmaMismatches are Messages.Incomplete (those known
	// while packets are fed) and Messages.DMALengthMismatches.
	incomplete, dmaMismatches uint64
	causes                    RetransmitCauses
	congestion                Congestion
	readMTU                   int32         // path MTU the PSN jumps of READ requests showed
	respMsg                   *msgStream    // READ responses, allocated by the first one
	srcPorts                  *portRecovery // source ports recovered from ICRCs, allocated by the first
	// firstT and lastT are the flow's times when they do not fit first
	// and last (flowtime.go).
	firstT, lastT time.Time
}

// rare returns the flow's cold state, allocating it.
func (f *flowState) rare() *flowCold {
	if f.cold == nil {
		f.cold = &flowCold{}
	}
	return f.cold
}

// msgCounts is the part of Messages a flow counts on every message (the
// rest is in flowCold).
type msgCounts struct {
	count, bytes     uint64
	minSize, maxSize uint64
}

// requestPackets is the flow's count of request packets: those of known
// opcodes that are neither responses nor CNPs.
func (f *flowState) requestPackets() uint64 {
	n := f.packets
	if f.resp != nil {
		n -= f.resp.Packets
	}
	if c := f.cold; c != nil {
		n -= c.congestion.CNPs + c.unknownOps
	}
	return n
}

// icrcUnverifiable is the flow's count of packets whose ICRC was not
// verified: every packet is OK, bad or that.
func (f *flowState) icrcUnverifiable() uint64 {
	n := f.packets - f.icrcOK
	if f.cold != nil {
		n -= f.cold.icrcBad
	}
	return n
}

// coldOf returns a copy of the flow's cold state (zero when it has none).
func (f *flowState) coldOf() flowCold {
	if f.cold == nil {
		return flowCold{}
	}
	return *f.cold
}

// flowSeries is a flow's throughput series.
type flowSeries struct {
	samples  []Sample
	interval int64 // ns: Options.Interval, doubled while the series is too long
}

// flowFor returns the state of the packet's flow, creating it; nil when
// the flow table is full.
func (a *Analyzer) flowFor(p *Packet) *flowState {
	k := flowKey{src: p.Src, dst: p.Dst, tun: flowTunnelOf(p.Wraps), qp: p.BTH.DestQP}
	h := a.index.hash(&k.src, &k.dst, k.tun, k.qp)
	if i, ok := a.find(&k, h); ok {
		return a.flowList[i]
	}
	if len(a.flowList) >= a.opts.MaxFlows || !a.opts.flowBudget.take() {
		a.dropSketch.addHash(k.hash())
		a.shard.noteRefusedFlow(p.Frame)
		return nil
	}
	hk := hostsOf(k.src, k.dst, k.tun)
	d := a.dirs[hk]
	if d == nil {
		d = a.slab.dirs.get()
		d.src, d.dst, d.tun = k.src, k.dst, k.tun
		d.flows = d.inFlows[:0]
		a.dirs[hk] = d
	}
	f := &flowState{dir: d, qp: k.qp, index: int32(len(a.flowList)), peer: -1, conn: -1, mix: a.slab.mixes.get()}
	d.flows = append(d.flows, f.index)
	a.flowList = append(a.flowList, f)
	a.index.add(h, f.index)
	if a.shard.replay { // the only shard's flows are created in the order listed
		a.shard.created = append(a.shard.created, p.Frame)
	}
	a.linkConnection(f)
	return f
}

// checkICRC sets the verdict on p's ICRC and VCRC (none with NoICRC,
// nor without a BTH), before a rewritten source port is recovered.
func (a *Analyzer) checkICRC(p *Packet, kind layers.NetworkKind, netHdr, udpHdr []byte) {
	if a.opts.NoICRC || p.BTH == nil {
		return
	}
	p.ICRC = layers.CheckICRC(kind, netHdr, udpHdr, p.BTH)
	if p.LRH != nil {
		r := p.LRH.CheckVCRC()
		p.VCRC = &r
	}
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
	a.checkICRC(p, kind, netHdr, udpHdr)
	if p.MAD != nil && p.DETH != nil { // only datagrams carry MADs (madcheck.go)
		a.handleMAD(p)
	}
	f := a.flowFor(p)
	if p.ICRC.Status == layers.ICRCBad && p.Encap == EncapRoCEv2 && a.recoverSrcPort(f, p, udpHdr) {
		a.capture.ICRCPortRewritten++
	}
	if f == nil {
		a.capture.PacketsOfDroppedFlows++
		return
	}
	pos := op.Position()
	a.flowTime(f, p.Time, pos == layers.PositionMiddle || pos == layers.PositionLast, p.PayloadLen)
	if f.packets == 0 || f.prioCNP { // the first packet, or a CNP's priority so far
		if cnp := p.BTH.Opcode.IsCNP(); f.packets == 0 || !cnp {
			f.prio, f.prioCNP = p.Priority, cnp
		}
	}
	f.packets++
	f.mix.ops[opClassOf(op)]++
	f.wireBytes += uint64(p.CarriedLength)
	payload := p.PayloadLen
	if payload > 0 {
		f.payloadBytes += uint64(payload)
	}
	a.addSample(f, p.Time, payload, p.CarriedLength)

	switch p.ICRC.Status {
	case layers.ICRCOK:
		f.icrcOK++
	case layers.ICRCBad:
		f.rare().icrcBad++
		if fd := a.finding(p, KindBadICRC, SeverityError, f); fd != nil {
			fd.Detail = fmt.Sprintf("ICRC %s on the wire, %s expected (%s PSN %d)", layers.ICRCWire(p.ICRC.Value), layers.ICRCWire(p.ICRC.Expected), bth.OpcodeName(), bth.PSN)
		}
	}
	if p.VCRC != nil && p.VCRC.Status == layers.ICRCBad {
		if fd := a.finding(p, KindBadICRC, SeverityError, f); fd != nil {
			fd.Detail = fmt.Sprintf("VCRC %s on the wire, %s expected", layers.VCRCWire(p.VCRC.Value), layers.VCRCWire(p.VCRC.Expected))
		}
	}

	if p.ECN == 3 {
		f.rare().congestion.ECNCE++
		if fd := a.finding(p, KindECNCE, SeverityInfo, f); fd != nil {
			fd.Detail = ceDetail(bth)
		}
	}
	if bth.FECN {
		f.rare().congestion.FECN++
	}
	if bth.BECN {
		f.rare().congestion.BECN++
	}

	if !op.Known() {
		f.rare().unknownOps++
		if fd := a.finding(p, KindUnknownOpcode, SeverityWarning, f); fd != nil {
			fd.Detail = fmt.Sprintf("opcode 0x%02x is not in the IBTA table", uint8(op))
		}
		return
	}
	if !f.hasTransport && !op.IsCNP() {
		f.transport, f.hasTransport = bth.Transport(), true
	}
	switch {
	case op.IsCNP():
		f.rare().congestion.CNPs++
		if fd := a.finding(p, KindCNP, SeverityInfo, f); fd != nil {
			fd.Detail = "congestion notification packet"
		}
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

// hostsKey packs a (source, destination) address pair and a tunnel.
type hostsKey struct {
	src, dst [16]byte
	lids     [2]uint16
	tun      flowTunnel
	kinds    uint8
}

func hostsOf(src, dst Addr, tun flowTunnel) hostsKey {
	return hostsKey{src: src.IP.As16(), dst: dst.IP.As16(), lids: [2]uint16{src.LID, dst.LID}, tun: tun, kinds: addrKind(src)<<2 | addrKind(dst)}
}

// releaseTables drops the tables that find flows, once no packet is fed:
// the flows' reports need only the flows.
func (a *Analyzer) releaseTables() {
	for _, d := range a.dirs {
		d.flows = nil
	}
	a.dirs, a.hostMTU, a.index = nil, nil, flowIndex{}
}
