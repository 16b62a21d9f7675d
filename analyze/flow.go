package analyze

import (
	"fmt"
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
	nic        *nicState     // NIC behaviour (nic.go), allocated by the second request or the first NIC event
	nicFirst   txRec         // the first request, until nic is allocated

	// pending holds the last requests awaiting an ACK (pendingring.go).
	pending pendingRing

	peer      int32 // reverse flow, -1 if unknown
	pairTries uint8 // searches for the request flow of this flow's ACKs
	// hasNIC says the flow is an RC/UC request flow with NIC state (nic,
	// or only nicFirst while hasNICFirst).
	hasNIC, hasNICFirst bool
	index               int32
	rtt                 *rttHist

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
		if fd := a.finding(p, KindBadICRC, SeverityError, f); fd != nil {
			fd.Detail = fmt.Sprintf("ICRC %s on the wire, %s expected (%s PSN %d)", layers.ICRCWire(p.ICRC.Value), layers.ICRCWire(p.ICRC.Expected), bth.OpcodeName(), bth.PSN)
		}
	default:
		f.icrc.Unverifiable++
	}
	if p.VCRC != nil && p.VCRC.Status == layers.ICRCBad {
		if fd := a.finding(p, KindBadICRC, SeverityError, f); fd != nil {
			fd.Detail = fmt.Sprintf("VCRC %s on the wire, %s expected", layers.VCRCWire(p.VCRC.Value), layers.VCRCWire(p.VCRC.Expected))
		}
	}

	if p.ECN == 3 {
		f.congestion.ECNCE++
		if fd := a.finding(p, KindECNCE, SeverityInfo, f); fd != nil {
			fd.Detail = fmt.Sprintf("ECN CE mark on %s PSN %d", bth.OpcodeName(), bth.PSN)
		}
	}
	if bth.FECN {
		f.congestion.FECN++
	}
	if bth.BECN {
		f.congestion.BECN++
	}

	if !op.Known() {
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
		f.congestion.CNPs++
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

// hostsKey packs a (source, destination) address pair.
type hostsKey struct {
	src, dst [16]byte
	lids     [2]uint16
	kinds    uint8
}

func hostsOf(src, dst Addr) hostsKey {
	return hostsKey{src: src.IP.As16(), dst: dst.IP.As16(), lids: [2]uint16{src.LID, dst.LID}, kinds: addrKind(src)<<2 | addrKind(dst)}
}
