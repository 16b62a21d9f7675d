package synth

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/roce-dissect/roce-dissect/layers"
)

// IP header values of the generated RoCE v2 traffic.
const (
	dscpData = 26 // data, ACKs and MADs
	dscpCNP  = 48
	ecnECT0  = 2
	ecnCE    = 3
	vlanID   = 100
	vlanPCP  = 3
)

// builder serializes packets with the layers' SerializeTo into one reused
// buffer. With fastICRC, the RoCE v2 ICRC is computed after serialization
// with layers.ComputeICRC instead of by the BTH (which allocates a scratch
// buffer per packet); both give the same bytes.
type builder struct {
	encap    Encap
	fastICRC bool
	buf      gopacket.SerializeBuffer
	opts     gopacket.SerializeOptions
	udpOpts  gopacket.SerializeOptions

	eth   gplayers.Ethernet
	dot1q gplayers.Dot1Q
	ip4   gplayers.IPv4
	ip6   gplayers.IPv6
	udp   gplayers.UDP
	grh   layers.GRH
	lrh   layers.LRH
	erf   layers.ERF
	bth   layers.BTH
	reth  layers.RETH
	ateth layers.AtomicETH
	aeth  layers.AETH
	aack  layers.AtomicAckETH
	imm   layers.ImmDt
	ieth  layers.IETH
	deth  layers.DETH
	rdeth layers.RDETH
	dceth layers.DCETH
	cnp   layers.CNP
	pay   gopacket.Payload
	icrc  layers.ICRC
	vcrc  layers.VCRC

	// snifferSrcPort writes UDP source port 4791 after the ICRC.
	snifferSrcPort bool
	// udpPort is the RoCE v2 UDP destination port.
	udpPort uint16

	stack   [16]gopacket.SerializableLayer
	n       int
	mad     [madLen]byte
	pattern []byte

	shortMAD int // > 0: the next MAD is this many bytes (a malformed frame)
}

func newBuilder(encap Encap, fast bool) *builder {
	b := &builder{encap: encap, fastICRC: fast, udpPort: uint16(layers.UDPPortRoCEv2), buf: gopacket.NewSerializeBufferExpectedSize(128, 4200)}
	b.opts = gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	b.udpOpts = gopacket.SerializeOptions{FixLengths: true} // RoCE v2: UDP checksum 0
	b.pattern = make([]byte, 4096+256)
	for i := range b.pattern {
		b.pattern[i] = byte(i*7 + i>>8)
	}
	return b
}

// setPorts sets the UDP ports of cfg: the sniffer's source port rewrite
// and the RoCE v2 destination port (Config.UDPPort, 0 keeping 4791).
func (b *builder) setPorts(cfg *Config) {
	b.snifferSrcPort = cfg.SnifferSrcPort
	if cfg.UDPPort != 0 {
		b.udpPort = cfg.UDPPort
	}
}

func (b *builder) push(l gopacket.SerializableLayer) { b.stack[b.n] = l; b.n++ }

// linkType returns the pcap link type of the encapsulation.
func linkType(e Encap) gplayers.LinkType {
	switch e {
	case EncapIB:
		return layers.LinkTypeInfiniBand
	case EncapERF:
		return layers.LinkTypeERF
	}
	return gplayers.LinkTypeEthernet
}

// trailerAfterICRC is the number of bytes after the ICRC (the VCRC).
func (b *builder) trailerAfterICRC() int {
	if b.encap.Native() {
		return layers.VCRCLen
	}
	return 0
}

// build serializes p; the returned slice is valid until the next call.
func (b *builder) build(p *pkt, ts time.Time) ([]byte, error) {
	src, dst := p.c.a, p.c.b
	if p.fromB {
		src, dst = dst, src
	}
	b.n = 0
	b.pushLink(src, dst, ts)
	b.pushNetwork(p, src, dst)
	if err := b.pushTransport(p); err != nil {
		return nil, err
	}
	b.pushPayload(p)
	b.icrc = layers.ICRC{}
	b.push(&b.icrc)
	if b.encap.Native() {
		b.vcrc = layers.VCRC{}
		b.push(&b.vcrc)
	}
	frame, err := b.serialize()
	if err != nil {
		return nil, err
	}
	return b.finish(p, frame)
}

// trafficClass returns the IP DSCP and ECN of p: data and MADs on
// dscpData, CNPs on dscpCNP; ECT(0) on data, CE when marked.
func trafficClass(p *pkt) (dscp, ecn uint8) {
	ecn, dscp = ecnECT0, dscpData
	switch {
	case p.op.IsCNP():
		ecn, dscp = 0, dscpCNP
	case p.cm != cmNone:
		ecn = 0
	}
	if p.ce {
		ecn = ecnCE
	}
	return dscp, ecn
}

// pushLink pushes the link headers from src to dst: Ethernet (and
// 802.1Q), or the ERF record header; none on native IB.
func (b *builder) pushLink(src, dst *host, ts time.Time) {
	switch b.encap {
	case EncapIPv4, EncapVLAN, EncapIPv6, EncapRoCEv1:
		b.eth = gplayers.Ethernet{SrcMAC: src.mac, DstMAC: dst.mac}
		b.push(&b.eth)
		next := gplayers.EthernetTypeIPv4
		switch b.encap {
		case EncapIPv6:
			next = gplayers.EthernetTypeIPv6
		case EncapRoCEv1:
			next = layers.EthernetTypeRoCEv1
		}
		if b.encap == EncapVLAN {
			b.eth.EthernetType = gplayers.EthernetTypeDot1Q
			b.dot1q = gplayers.Dot1Q{Priority: vlanPCP, VLANIdentifier: vlanID, Type: next}
			b.push(&b.dot1q)
		} else {
			b.eth.EthernetType = next
		}
	case EncapERF:
		b.erf = layers.ERF{Type: layers.ERFTypeInfiniBand, Timestamp: layers.ERFTimestamp(ts)}
		b.push(&b.erf)
	}
}

// pushNetwork pushes the network headers of p from src to dst: IPv4 or
// IPv6 and UDP (RoCE v2), the GRH (RoCE v1) or the LRH (native IB).
func (b *builder) pushNetwork(p *pkt, src, dst *host) {
	dscp, ecn := trafficClass(p)
	switch b.encap {
	case EncapIPv4, EncapVLAN:
		b.ip4 = gplayers.IPv4{Version: 4, IHL: 5, TOS: dscp<<2 | ecn, Flags: gplayers.IPv4DontFragment,
			TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: src.ip4, DstIP: dst.ip4}
		b.push(&b.ip4)
	case EncapIPv6:
		b.ip6 = gplayers.IPv6{Version: 6, TrafficClass: dscp<<2 | ecn, FlowLabel: p.c.flowLabel,
			NextHeader: gplayers.IPProtocolUDP, HopLimit: 64, SrcIP: src.ip6, DstIP: dst.ip6}
		b.push(&b.ip6)
	case EncapRoCEv1:
		b.grh = layers.GRH{IPVer: 6, TClass: dscp << 2, NxtHdr: layers.NxtHdrBTH, HopLmt: 1, SGID: src.gid, DGID: dst.gid}
		b.push(&b.grh)
	case EncapIB, EncapERF:
		b.lrh = layers.LRH{LNH: layers.LNHIBALocal, DLID: dst.lid, SLID: src.lid}
		b.push(&b.lrh)
	}
	if b.encap.RoCEv2() {
		b.udp = gplayers.UDP{SrcPort: gplayers.UDPPort(srcPort(p)), DstPort: gplayers.UDPPort(b.udpPort)}
		b.push(&b.udp)
	}
}

// pushTransport pushes the BTH of p (DC's on the RD opcodes, with its DC
// headers) and its extended transport headers.
func (b *builder) pushTransport(p *pkt) error {
	b.bth = layers.BTH{Opcode: p.op, SolicitedEvent: p.se, PKey: pkeyDefault, BECN: p.becn,
		DestQP: p.destQP, AckReq: p.ackReq, PSN: p.psn}
	if b.encap.RoCEv2() && !b.fastICRC {
		if err := b.setICRCLayers(); err != nil {
			return err
		}
	}
	headers := p.op.Headers()
	if p.c.dc && p.cm == cmNone && !p.op.IsCNP() {
		b.bth.Opcode, b.bth.DC = dcOpcode(p.op), true
		headers = b.bth.Headers()[3:] // after RDETH, DETH, DCETH
	}
	b.push(&b.bth)
	if b.bth.DC {
		b.pushDC(p)
	}
	for _, h := range headers {
		if err := b.pushHeader(p, h); err != nil {
			return err
		}
	}
	return nil
}

// setICRCLayers gives the BTH the IP and UDP headers its ICRC covers
// (without fastICRC).
func (b *builder) setICRCLayers() error {
	if b.encap == EncapIPv6 {
		return b.bth.SetNetworkLayerForChecksum(&b.ip6, &b.udp)
	}
	return b.bth.SetNetworkLayerForChecksum(&b.ip4, &b.udp)
}

// pushHeader pushes the extended transport header h of p.
func (b *builder) pushHeader(p *pkt, h gopacket.LayerType) error {
	switch h {
	case layers.LayerTypeRETH:
		b.reth = layers.RETH{VA: p.va, RKey: p.rkey, DMALength: p.dmaLen}
		b.push(&b.reth)
	case layers.LayerTypeAtomicETH:
		b.ateth = layers.AtomicETH{VA: p.va, RKey: p.rkey, SwapOrAdd: p.swap, Compare: p.cmp}
		b.push(&b.ateth)
	case layers.LayerTypeAETH:
		b.aeth = layers.AETH{Syndrome: p.aeth, MSN: p.msn}
		b.push(&b.aeth)
	case layers.LayerTypeAtomicAckETH:
		b.aack = layers.AtomicAckETH{OrigRemoteData: p.orig}
		b.push(&b.aack)
	case layers.LayerTypeImmDt:
		b.imm = layers.ImmDt{Immediate: p.imm}
		b.push(&b.imm)
	case layers.LayerTypeIETH:
		b.ieth = layers.IETH{RKey: p.imm}
		b.push(&b.ieth)
	case layers.LayerTypeDETH:
		b.deth = layers.DETH{QKey: p.qkey, SrcQP: p.srcQP}
		b.push(&b.deth)
	case layers.LayerTypeCNP:
		b.cnp = layers.CNP{}
		b.push(&b.cnp)
	default:
		return fmt.Errorf("synth: opcode %s: no builder for %s", p.op, h)
	}
	return nil
}

// pushPayload pushes the payload of p: its CM MAD (shortMAD bytes of it
// when set), its own bytes, or payLen bytes of the pattern.
func (b *builder) pushPayload(p *pkt) {
	switch {
	case p.cm != cmNone:
		encodeMAD(&b.mad, p.c, p.cm, b.encap)
		b.pay = b.mad[:]
		if b.shortMAD > 0 {
			b.pay = b.mad[:b.shortMAD]
		}
		b.push(&b.pay)
	case p.payload != nil:
		b.pay = p.payload
		b.push(&b.pay)
	case p.payLen > 0:
		if p.payLen <= len(b.pattern)-p.payOff {
			b.pay = b.pattern[p.payOff : p.payOff+p.payLen]
		} else {
			b.pay = b.bigPattern(p.payLen)
		}
		b.push(&b.pay)
	}
}

// serialize serializes the pushed layers, innermost first, into the
// reused buffer and returns the frame.
func (b *builder) serialize() ([]byte, error) {
	if err := b.buf.Clear(); err != nil {
		return nil, err
	}
	for i := b.n - 1; i >= 0; i-- {
		opts := b.opts
		if b.stack[i] == &b.udp {
			opts = b.udpOpts
		}
		if err := b.stack[i].SerializeTo(b.buf, opts); err != nil {
			return nil, fmt.Errorf("synth: serializing %s: %w", b.stack[i].LayerType(), err)
		}
		// As gopacket.SerializeLayers does: the BTH looks for a VCRC.
		b.buf.PushLayer(b.stack[i].LayerType())
	}
	return b.buf.Bytes(), nil
}

// finish completes the serialized frame of p: the RoCE v2 ICRC (with
// fastICRC), the corruption of the ICRC, the sniffer's source port.
func (b *builder) finish(p *pkt, frame []byte) ([]byte, error) {
	if b.encap.RoCEv2() && b.fastICRC {
		if err := b.fillICRC(frame); err != nil {
			return nil, err
		}
	}
	if p.corrupt {
		b.corrupt(frame)
	}
	if b.snifferSrcPort && b.encap.RoCEv2() {
		b.rewriteSrcPort(frame)
	}
	return frame, nil
}

// bigPattern returns n payload bytes for payloads beyond the shared
// pattern (only messages with a path MTU above 4096 could need it).
func (b *builder) bigPattern(n int) []byte {
	for len(b.pattern) < n {
		b.pattern = append(b.pattern, b.pattern...)
	}
	return b.pattern[:n]
}

// fillICRC computes the RoCE v2 ICRC of a serialized frame.
func (b *builder) fillICRC(frame []byte) error {
	ipOff := 14
	if b.encap == EncapVLAN {
		ipOff += 4
	}
	kind, ipLen := layers.NetworkIPv4, int(frame[ipOff]&0x0F)*4
	if b.encap == EncapIPv6 {
		kind, ipLen = layers.NetworkIPv6, 40
	}
	udpOff := ipOff + ipLen
	ibOff := udpOff + 8
	end := len(frame) - layers.ICRCLen
	crc, err := layers.ComputeICRC(kind, frame[ipOff:udpOff], frame[udpOff:ibOff], frame[ibOff:end])
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(frame[end:], crc)
	return nil
}

// corrupt flips bits of the ICRC; on native IB the VCRC is recomputed so
// that only the ICRC is wrong.
func (b *builder) corrupt(frame []byte) {
	end := len(frame) - b.trailerAfterICRC()
	for i := end - layers.ICRCLen; i < end; i++ {
		frame[i] ^= 0xA5
	}
	if b.encap.Native() {
		lrh := 0
		if b.encap == EncapERF {
			lrh = layers.ERFHeaderLen
		}
		binary.LittleEndian.PutUint16(frame[end:], layers.ComputeVCRC(frame[lrh:end]))
	}
}
