package analyze

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Options tune an Analyzer. The zero value is usable.
type Options struct {
	// Interval is the width of a throughput series bucket (default 1 ms).
	Interval time.Duration
	// NoICRC skips ICRC/VCRC verification (all packets count as
	// unverifiable).
	NoICRC bool
	// RoCEPorts are UDP destination ports decoded as RoCE v2 besides 4791.
	RoCEPorts []uint16
	// MaxFlows caps the flow table (default 1,000,000); packets of further
	// flows are counted in Capture.FlowsDropped and not tracked.
	MaxFlows int
	// FlowBudget, when set, is a flow cap shared with other Analyzers (of
	// the files of one run): a flow is tracked only if it allows too.
	FlowBudget *FlowBudget
	// MaxConnections caps the CM connection table (default 100,000): a
	// REQ with a new CommID beyond it is counted in
	// Capture.ConnectionsDropped and not tracked.
	MaxConnections int
	// ConnectionBudget, when set, is a connection cap shared with other
	// Analyzers (of the files of one run), like FlowBudget.
	ConnectionBudget *FlowBudget
	// MaxFindings caps the findings and malformed frames listed (default
	// 100,000); further ones are counted in Report.FindingsDropped.
	MaxFindings int
	// File names the capture in findings when several files are merged.
	File string
	// DecodeRDAs says how the RD opcodes (0x40–0x54) are decoded: the
	// zero value decides per packet (DC, NVIDIA's Dynamically Connected
	// transport, unless the packet's length proves RD; see
	// layers.RDDecoding); layers.RDDecodeRD or RDDecodeDC force one.
	DecodeRDAs layers.RDDecoding
	// FirstFrame is the number of the first frame fed (0 means 1): an
	// Analyzer given one range of a capture numbers its frames as the
	// whole file does.
	FirstFrame uint64
	// Shard says the Analyzer sees one shard of a capture (the frames of
	// some host pairs, fed with FeedShard): its report keeps what
	// CombineShards needs to rebuild the report of the whole capture.
	Shard bool
	// FlowFrameLimit, when not 0, tracks only flows whose first packet
	// is at a frame up to it (CombineShards' FlowCapError says which).
	FlowFrameLimit uint64
	// ConnFrameLimit, when not 0, tracks only connections whose REQ is
	// at a frame up to it (CombineShards' FlowCapError says which).
	ConnFrameLimit uint64
	// OnRelease, when set, is called by Finish once the flow table is
	// released and again after every 32,768 flows it has turned into
	// reports: a caller with millions of flows can collect garbage there
	// (runtime.GC) so that memory peaks at about the larger of the flow
	// table and the report rather than their sum. The library itself
	// never runs the garbage collector.
	OnRelease func()
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
	opts Options
	// frameFindings is where the findings of the frame being fed start
	// in findings (FrameFindings).
	frameFindings int

	fb    feedback
	eth   gplayers.Ethernet
	sll   gplayers.LinuxSLL
	sll2  gplayers.LinuxSLL2
	dot1q gplayers.Dot1Q
	ip4   gplayers.IPv4
	ip6   gplayers.IPv6
	udp   gplayers.UDP
	ib    *layers.TransportLayers

	pkt Packet

	capture   Capture
	first     time.Time
	last      time.Time
	flows     map[mapKey]int32
	flowCache [flowCacheLen]cachedFlow
	flowList  []*flowState
	hostMTU   map[hostPair]int
	byHosts   map[hostsKey][]int32 // flows by (source, destination)
	conns     connTable
	findings  []Finding
	dropped   uint64

	dropSketch sketch
	shifts     [shiftCacheLen]shiftEntry // ICRC shift factors by length, for recoverSrcPort

	lens frameLens // what the length fields of the frame being fed declare
	cut  cutState  // the first frame the capture tool cut

	shard *shardFeed // Options.Shard: what the combiner needs
}

// New returns an Analyzer.
func New(opts Options) *Analyzer {
	if opts.Interval <= 0 {
		opts.Interval = defaultInterval
	}
	if opts.MaxFlows <= 0 {
		opts.MaxFlows = defaultMaxFlows
	}
	if opts.MaxFindings <= 0 {
		opts.MaxFindings = defaultMaxFindings
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = defaultMaxConnections
	}
	ib := layers.NewTransportLayers()
	ib.BTH.DecodeRDAs = opts.DecodeRDAs
	a := &Analyzer{
		opts:    opts,
		ib:      ib,
		flows:   make(map[mapKey]int32),
		hostMTU: make(map[hostPair]int),
		byHosts: make(map[hostsKey][]int32),
		conns:   newConnTable(),
	}
	a.conns.maxOrphans = a.maxOrphans()
	if opts.Shard {
		a.shard = &shardFeed{}
	}
	return a
}

// feedback is the DecodeFeedback of the decoders: it carries the
// truncation flag from the length checks of IPv4/UDP/GRH/LRH to the BTH.
type feedback struct{ truncated bool }

func (f *feedback) SetTruncated()     { f.truncated = true }
func (f *feedback) IsTruncated() bool { return f.truncated }

// Encap is how an IB packet was carried.
type Encap uint8

// Encapsulations.
const (
	EncapNone Encap = iota
	EncapRoCEv2
	EncapRoCEv1
	EncapIB
)

// String names the encapsulation.
func (e Encap) String() string {
	return [...]string{"none", "RoCEv2", "RoCEv1", "IB"}[e%4]
}

// Addr is a network address of a flow: an IP address (RoCE v2), a GID
// (RoCE v1, native IB with GRH) or a LID (native IB without GRH).
type Addr struct {
	IP    netip.Addr // IP address or GID
	LID   uint16
	IsLID bool
}

// String renders the address: IPv4 dotted, IPv6/GID in IPv6 form, or "LID n".
func (a Addr) String() string {
	if a.IsLID {
		return fmt.Sprintf("LID %d", a.LID)
	}
	if !a.IP.IsValid() {
		return "?"
	}
	return a.IP.String()
}

// Packet is the decoded view of the last frame fed, valid until the next
// Feed. Header pointers are nil when the header is absent.
type Packet struct {
	Frame     uint64
	Time      time.Time
	Length    int // original (wire) length
	CapLength int
	Encap     Encap
	IsRDMA    bool
	Src, Dst  Addr
	VLAN      int // -1 when untagged
	ECN       uint8
	// IPID is the IPv4 identification field (RoCE v2 over IPv4), 0 otherwise.
	IPID uint16

	LRH          *layers.LRH
	GRH          *layers.GRH
	BTH          *layers.BTH
	RDETH        *layers.RDETH
	DETH         *layers.DETH
	XRCETH       *layers.XRCETH
	RETH         *layers.RETH
	AtomicETH    *layers.AtomicETH
	AETH         *layers.AETH
	AtomicAckETH *layers.AtomicAckETH
	ImmDt        *layers.ImmDt
	IETH         *layers.IETH
	FETH         *layers.FETH
	DCETH        *layers.DCETH // DC packets (BTH.DC) only
	CNP          *layers.CNP
	// MAD is the management datagram (QP0/QP1 payload), aliasing the frame.
	MAD []byte
	// MADLayer is MAD decoded (header, and the CM message when captured),
	// or nil when not even its header was captured.
	MADLayer *cm.MAD

	// PayloadLen is the IB payload length from the length fields (exact
	// even for header-only captures); -1 when unknown.
	PayloadLen int
	// Truncated is true when the capture cut the packet short.
	Truncated bool
	ICRC      layers.ICRCResult
	VCRC      *layers.VCRCResult
	// Err is the reason a malformed RDMA frame could not be decoded.
	Err error
	// Findings counts the findings this frame produced.
	Findings int

	// SrcPortRewritten is true when the ICRC verified only with UDP
	// source port OriginalSrcPort instead of the captured 4791 (a NIC
	// sniffer capture); ICRC is then ok.
	SrcPortRewritten bool
	OriginalSrcPort  uint16
}

// Feed analyzes one frame and returns its decoded view.
func (a *Analyzer) Feed(ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte) *Packet {
	return a.feed(a.capture.Frames+max(a.opts.FirstFrame, 1), ci, linkType, data)
}

// feed analyzes one frame, numbered frame.
func (a *Analyzer) feed(frame uint64, ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte) *Packet {
	a.capture.Frames++
	orig := ci.Length
	ci.Length = clampOriginalLength(ci.Length, len(data))
	a.capture.Bytes += uint64(ci.Length)
	p := &a.pkt
	*p = Packet{Frame: frame, Time: ci.Timestamp, Length: ci.Length, CapLength: len(data), VLAN: -1, PayloadLen: -1}
	a.fb = feedback{}
	a.lens = frameLens{}
	a.frameFindings = len(a.findings)
	ibLen, icrcKind, netHdr, udpHdr := a.decode(linkType, data)
	if ci.Length != orig {
		a.flagOriginalLength(p, orig)
	}
	a.checkCut(p, len(data))
	if a.capture.Frames == 1 || p.Time.Before(a.first) {
		a.first = p.Time
	}
	if p.Time.After(a.last) || a.capture.Frames == 1 {
		a.last = p.Time
	}
	switch {
	case !p.IsRDMA:
		a.capture.OtherPackets++
	case p.Err != nil:
		a.capture.Malformed++
		if len(a.capture.MalformedFrames) < a.opts.MaxFindings {
			a.capture.MalformedFrames = append(a.capture.MalformedFrames, Malformed{Frame: p.Frame, Reason: p.Err.Error()})
		}
		a.addFinding(p, KindMalformed, SeverityError, "", p.Err.Error())
	default:
		a.capture.RoCEPackets++
		a.analyzeIB(p, ci, ibLen, icrcKind, netHdr, udpHdr)
	}
	return p
}

var errNoBTH = errors.New("no BTH")

// decode walks the headers of a frame. It returns the IB packet length
// from the BTH through the ICRC as the length fields give it (-1 unknown),
// and the network header the ICRC covers.
func (a *Analyzer) decode(linkType gplayers.LinkType, data []byte) (ibLen int, kind layers.NetworkKind, netHdr, udpHdr []byte) {
	p := &a.pkt
	ibLen = -1
	typ, ok := firstLayer(linkType, data)
	if !ok {
		return
	}
	fb := &a.fb
	frameLen := len(data)
	// A GRH or BTH is decoded even with nothing left: an RDMA packet cut
	// there is malformed, not another protocol.
	for len(data) > 0 || typ == layers.LayerTypeBTH || typ == layers.LayerTypeGRH {
		switch typ {
		case gplayers.LayerTypeEthernet:
			if a.eth.DecodeFromBytes(data, fb) != nil {
				return
			}
			typ, data = a.eth.NextLayerType(), a.eth.Payload
		case gplayers.LayerTypeLinuxSLL:
			if a.sll.DecodeFromBytes(data, fb) != nil {
				return
			}
			typ, data = a.sll.NextLayerType(), a.sll.Payload
		case gplayers.LayerTypeLinuxSLL2:
			if a.sll2.DecodeFromBytes(data, fb) != nil {
				return
			}
			typ, data = a.sll2.NextLayerType(), a.sll2.Payload
		case gplayers.LayerTypeDot1Q:
			if a.dot1q.DecodeFromBytes(data, fb) != nil {
				return
			}
			if p.VLAN < 0 {
				p.VLAN = int(a.dot1q.VLANIdentifier)
			}
			typ, data = a.dot1q.NextLayerType(), a.dot1q.Payload
		case gplayers.LayerTypeIPv4:
			if a.ip4.DecodeFromBytes(data, fb) != nil || a.ip4.Flags&gplayers.IPv4MoreFragments != 0 || a.ip4.FragOffset != 0 {
				return
			}
			p.Src.IP, _ = netip.AddrFromSlice(a.ip4.SrcIP.To4())
			p.Dst.IP, _ = netip.AddrFromSlice(a.ip4.DstIP.To4())
			p.ECN = a.ip4.TOS & 3
			a.lens.network(frameLen-len(data), int(a.ip4.Length), int(a.ip4.Length)-int(a.ip4.IHL)*4)
			p.IPID = a.ip4.Id
			kind, netHdr = layers.NetworkIPv4, a.ip4.Contents
			typ, data = a.ip4.NextLayerType(), a.ip4.Payload
		case gplayers.LayerTypeIPv6:
			if a.ip6.DecodeFromBytes(data, fb) != nil {
				return
			}
			p.Src.IP, _ = netip.AddrFromSlice(a.ip6.SrcIP)
			p.Dst.IP, _ = netip.AddrFromSlice(a.ip6.DstIP)
			p.ECN = a.ip6.TrafficClass & 3
			if a.ip6.Length > 0 { // 0: a jumbogram, its length elsewhere
				a.lens.network(frameLen-len(data), layers.GRHLen+int(a.ip6.Length), int(a.ip6.Length))
			}
			kind, netHdr = layers.NetworkIPv6, a.ip6.Contents
			typ, data = a.ip6.NextLayerType(), a.ip6.Payload
		case gplayers.LayerTypeUDP:
			if a.udp.DecodeFromBytes(data, fb) != nil || !a.isRoCEPort(uint16(a.udp.DstPort)) {
				return
			}
			p.IsRDMA, p.Encap = true, EncapRoCEv2
			if err := a.lens.checkUDP(int(a.udp.Length)); err != nil {
				p.Err = err
				return
			}
			udpHdr = a.udp.Contents
			ibLen = int(a.udp.Length) - 8
			typ, data = layers.LayerTypeBTH, a.udp.Payload
		case layers.LayerTypeERF:
			if err := a.ib.ERF.DecodeFromBytes(data, fb); err != nil {
				if a.ib.ERF.Type == layers.ERFTypeInfiniBand || a.ib.ERF.Type == layers.ERFTypeInfiniBandLink {
					p.IsRDMA, p.Err = true, err
				}
				return
			}
			a.lens.erf(int(a.ib.ERF.RLen), int(a.ib.ERF.WLen), len(a.ib.ERF.Contents), len(data))
			typ, data = a.ib.ERF.NextLayerType(), a.ib.ERF.Payload
			if typ != gopacket.LayerTypePayload { // a record type decoded further: its clock is trusted
				p.Time = a.ib.ERF.Time()
			}
		case layers.LayerTypeLRH:
			p.IsRDMA, p.Encap = true, EncapIB
			lrh := &a.ib.LRH
			if err := lrh.DecodeFromBytes(data, fb); err != nil {
				p.Err = err
				return
			}
			p.LRH = lrh
			p.Src = Addr{LID: lrh.SLID, IsLID: true}
			p.Dst = Addr{LID: lrh.DLID, IsLID: true}
			ibLen = int(lrh.PktLen)*4 - layers.LRHLen
			a.lens.network(frameLen-len(data), int(lrh.PktLen)*4+layers.VCRCLen, -1)
			if lrh.LNH == layers.LNHIBALocal {
				kind, netHdr = layers.NetworkLRH, lrh.Contents
			}
			if lrh.LNH < layers.LNHIBALocal {
				p.IsRDMA = false // raw/IPv6 over IB (IPoIB is not RDMA traffic)
				return
			}
			typ, data = lrh.NextLayerType(), lrh.Payload
		case layers.LayerTypeGRH:
			p.IsRDMA = true
			if p.Encap != EncapIB {
				p.Encap = EncapRoCEv1
			}
			grh := &a.ib.GRH
			if err := grh.DecodeFromBytes(data, fb); err != nil {
				p.Err = err
				return
			}
			p.GRH = grh
			// One host, one name: an IPv4-mapped GID is its IPv4
			// address (the ICRC still covers the GRH as captured).
			p.Src.IP, _ = netip.AddrFromSlice(grh.SGID)
			p.Dst.IP, _ = netip.AddrFromSlice(grh.DGID)
			p.Src.IP, p.Dst.IP = p.Src.IP.Unmap(), p.Dst.IP.Unmap()
			p.Src.IsLID, p.Dst.IsLID = false, false
			p.ECN = grh.TClass & 3
			kind, netHdr = layers.NetworkGRH, grh.Contents
			if p.Encap == EncapIB {
				ibLen -= layers.GRHLen
			} else {
				ibLen = int(grh.PayLen)
				a.lens.network(frameLen-len(data), layers.GRHLen+int(grh.PayLen), -1)
			}
			if grh.NxtHdr != layers.NxtHdrBTH {
				p.IsRDMA = false // IPoIB and other non-IBA payloads
				return
			}
			typ, data = layers.LayerTypeBTH, grh.Payload
		case layers.LayerTypeBTH:
			a.decodeTransport(data)
			return
		default:
			return
		}
	}
	if p.IsRDMA && p.BTH == nil && p.Err == nil {
		p.Err = fmt.Errorf("%s packet: %w", p.Encap, errNoBTH)
	}
	return
}

// firstLayer returns the layer a frame of the link type starts with.
func firstLayer(lt gplayers.LinkType, data []byte) (gopacket.LayerType, bool) {
	switch lt {
	case gplayers.LinkTypeEthernet:
		return gplayers.LayerTypeEthernet, true
	case layers.LinkTypeInfiniBand:
		return layers.LayerTypeLRH, true
	case layers.LinkTypeERF:
		return layers.LayerTypeERF, true
	case gplayers.LinkTypeLinuxSLL:
		return gplayers.LayerTypeLinuxSLL, true
	case gplayers.LinkTypeLinuxSLL2:
		return gplayers.LayerTypeLinuxSLL2, true
	case gplayers.LinkTypeRaw: // IPv4 or IPv6, as the version nibble says
		if len(data) > 0 && data[0]>>4 == 6 {
			return gplayers.LayerTypeIPv6, true
		}
		return gplayers.LayerTypeIPv4, true
	case gplayers.LinkTypeIPv4:
		return gplayers.LayerTypeIPv4, true
	case gplayers.LinkTypeIPv6:
		return gplayers.LayerTypeIPv6, true
	}
	return 0, false
}

// SupportsLinkType reports whether the Analyzer decodes frames of a link
// type; frames of other link types are counted as other packets.
func SupportsLinkType(lt gplayers.LinkType) bool {
	_, ok := firstLayer(lt, nil)
	return ok
}

func (a *Analyzer) isRoCEPort(port uint16) bool {
	if port == uint16(layers.UDPPortRoCEv2) {
		return true
	}
	for _, p := range a.opts.RoCEPorts {
		if p == port {
			return true
		}
	}
	return false
}

// decodeTransport decodes the BTH and the extension headers its opcode
// implies.
func (a *Analyzer) decodeTransport(data []byte) {
	p := &a.pkt
	bth := &a.ib.BTH
	if err := bth.DecodeFromBytes(data, &a.fb); err != nil {
		p.Err = err
		return
	}
	p.BTH = bth
	p.Truncated = bth.Truncated
	typ, rest := bth.NextLayerType(), bth.Payload
	// step decodes the next header; a header is shown in p only once it
	// decoded.
	step := func(l gopacket.DecodingLayer) bool {
		if err := l.DecodeFromBytes(rest, &a.fb); err != nil {
			if !bth.Truncated {
				p.Err = err
			}
			return false
		}
		typ, rest = l.NextLayerType(), l.LayerPayload()
		return true
	}
	for {
		ib := a.ib
		switch typ {
		case layers.LayerTypeRDETH:
			if !step(&ib.RDETH) {
				return
			}
			p.RDETH = &ib.RDETH
		case layers.LayerTypeDETH:
			if !step(&ib.DETH) {
				return
			}
			p.DETH = &ib.DETH
		case layers.LayerTypeXRCETH:
			if !step(&ib.XRCETH) {
				return
			}
			p.XRCETH = &ib.XRCETH
		case layers.LayerTypeRETH:
			if !step(&ib.RETH) {
				return
			}
			p.RETH = &ib.RETH
		case layers.LayerTypeAtomicETH:
			if !step(&ib.AtomicETH) {
				return
			}
			p.AtomicETH = &ib.AtomicETH
		case layers.LayerTypeAETH:
			if !step(&ib.AETH) {
				return
			}
			p.AETH = &ib.AETH
		case layers.LayerTypeAtomicAckETH:
			if !step(&ib.AtomicAckETH) {
				return
			}
			p.AtomicAckETH = &ib.AtomicAckETH
		case layers.LayerTypeImmDt:
			if !step(&ib.ImmDt) {
				return
			}
			p.ImmDt = &ib.ImmDt
		case layers.LayerTypeIETH:
			if !step(&ib.IETH) {
				return
			}
			p.IETH = &ib.IETH
		case layers.LayerTypeFETH:
			if !step(&ib.FETH) {
				return
			}
			p.FETH = &ib.FETH
		case layers.LayerTypeDCETH:
			if !step(&ib.DCETH) {
				return
			}
			p.DCETH = &ib.DCETH
		case layers.LayerTypeCNP:
			if !step(&ib.CNP) {
				return
			}
			p.CNP = &ib.CNP
		case layers.LayerTypeMAD:
			p.MAD = rest
			if !bth.Truncated && p.DETH != nil && len(rest) < cm.MADLen {
				// A datagram whole in its frame, yet short: not a MAD (madcheck.go).
				p.Err = fmt.Errorf("%s to QP%d: %w: %d-byte MAD, need %d", bth.Opcode, bth.DestQP, errShortMAD, len(rest), cm.MADLen)
			}
			return
		default:
			a.checkEmptyMAD()
			return
		}
	}
}
