package synth

import (
	"encoding/binary"
	"math/rand/v2"
	"net"
	"strconv"

	"github.com/roce-dissect/roce-dissect/layers"
)

// host is one end of the traffic: its addresses in every encapsulation and
// its GSI (QP1) send PSN.
type host struct {
	idx    int
	mac    net.HardwareAddr
	ip4    net.IP // 4 bytes
	ip6    net.IP // 16 bytes
	gid    net.IP // RoCE v1 / native IB GID
	lid    uint16
	guid   uint64
	qp1PSN uint32 // next PSN of the GSI QP
	addr   string // address as the truth writes it for the encapsulation
}

func newHost(idx int, encap Encap, rng *rand.Rand) *host {
	pair, side := idx/2, idx%2
	h := &host{idx: idx}
	h.mac = net.HardwareAddr{0x02, 0x00, 0x00, byte(pair >> 8), byte(pair), byte(side + 1)}
	h.ip4 = net.IPv4(10, byte(pair>>8), byte(pair), byte(side+1)).To4()
	h.ip6 = make(net.IP, 16)
	copy(h.ip6, []byte{0xfd, 0x00})
	binary.BigEndian.PutUint16(h.ip6[12:], uint16(pair))
	binary.BigEndian.PutUint16(h.ip6[14:], uint16(side+1))
	h.lid = uint16(idx + 1)
	h.guid = 0x0002c90300000000 | uint64(idx+1)
	h.gid = make(net.IP, 16)
	h.gid[0], h.gid[1] = 0xfe, 0x80
	switch encap {
	case EncapRoCEv1:
		// Link-local GID from the MAC (modified EUI-64).
		copy(h.gid[8:], []byte{h.mac[0] ^ 0x02, h.mac[1], h.mac[2], 0xff, 0xfe, h.mac[3], h.mac[4], h.mac[5]})
	default:
		binary.BigEndian.PutUint64(h.gid[8:], h.guid)
	}
	h.qp1PSN = rng.Uint32() & psnMask
	switch encap {
	case EncapIPv4, EncapVLAN:
		h.addr = h.ip4.String()
	case EncapIPv6:
		h.addr = h.ip6.String()
	case EncapRoCEv1:
		h.addr = h.gid.String()
	default:
		h.addr = "LID " + strconv.Itoa(int(h.lid))
	}
	return h
}

// cmGID returns the GID a CM REQ carries for the host.
func (h *host) cmGID(encap Encap) net.IP {
	switch encap {
	case EncapIPv4, EncapVLAN:
		return h.ip4.To16()
	case EncapIPv6:
		return h.ip6
	}
	return h.gid
}

// opKind is the operation a connection carries.
type opKind uint8

const (
	kindWrite opKind = iota
	kindRead
	kindSend
	kindAtomic
	kindUD
)

// conn is a QP pair: the requester A sends requests to the responder B.
type conn struct {
	idx            int
	a, b           *host
	qa, qb         uint32
	psnA, psnB     uint32 // starting PSNs of A's requests (the REP's StartingPSN) and B's (the REQ's; B sends none)
	kind           opKind
	mtu            int
	commA, commB   uint32
	tid, dtid      uint64
	sportA, sportB uint16 // UDP source ports (flow entropy) of each direction
	va             uint64
	rkey, qkey     uint32
	flowLabel      uint32
	dc             bool // DC transport (Config.DC): RD opcodes, DC headers, no CM
}

func newConn(idx int, a, b *host, kind opKind, mtu int, rng *rand.Rand, qpBase uint32) *conn {
	c := &conn{idx: idx, a: a, b: b, kind: kind, mtu: mtu}
	c.qa = qpBase + uint32(2*idx)
	c.qb = qpBase + uint32(2*idx) + 1
	c.psnA = rng.Uint32() & psnMask
	c.psnB = rng.Uint32() & psnMask
	c.commA = rng.Uint32()
	c.commB = rng.Uint32()
	c.tid = rng.Uint64() & 0x0000_0000_FFFF_FFFF
	c.dtid = c.tid + 1
	c.sportA = 49152 + uint16(rng.IntN(16384))
	c.sportB = 49152 + uint16(rng.IntN(16384))
	c.va = 0x7f00_0000_0000 | uint64(rng.Uint32())<<12
	c.rkey = rng.Uint32()
	c.qkey = 0x11111111
	c.flowLabel = rng.Uint32() & 0xFFFFF
	return c
}

// cmKind is the CM message a QP1 packet carries.
type cmKind uint8

const (
	cmNone cmKind = iota
	cmREQ
	cmREP
	cmRTU
	cmDREQ
	cmDREP
)

// pkt is one IB packet to write: its headers' values and what the truth
// needs to know about it.
type pkt struct {
	c       *conn
	fromB   bool // responder → requester
	op      layers.Opcode
	psn     uint32
	destQP  uint32
	ackReq  bool
	se      bool
	becn    bool
	cm      cmKind
	va      uint64
	rkey    uint32
	dmaLen  uint32
	swap    uint64
	cmp     uint64
	aeth    uint8 // syndrome
	msn     uint32
	orig    uint64
	imm     uint32 // ImmDt or IETH
	qkey    uint32
	srcQP   uint32
	payLen  int
	payOff  int
	payload []byte // written as is instead of the pattern (RCPacket.Payload)
	span    uint32 // PSNs a request covers (READ: ceil(len/MTU))
	isMsg   bool   // packet of a counted message (SEND/WRITE/UD SEND, READ response)
	msgID   uint32
	msgPSN  uint32 // first PSN of the message
	msgN    uint32 // PSNs of the message
	msgLast bool
	msgSize uint32
	ce      bool
	corrupt bool
	delayNs int64
	resend  uint8 // a go-back-N resend of a request: resendNAK, resendRNR or resendTimeout
	// NIC knobs (nic.go).
	hidden    bool  // lost before the tap: takes its time on the wire, not written
	sinceTxNs int64 // passes the tap at least this long after the last transmission of its PSN
	extraCNP  bool  // a CNP the NIC's rate limit should have suppressed
}

// Causes of a resend (pkt.resend).
const (
	resendNone uint8 = iota
	resendNAK
	resendRNR
)

// dataReq reports whether p is a request of the data connection (A → B).
func (p *pkt) dataReq() bool { return p.cm == cmNone && !p.fromB && p.op.IsRequest() }

const (
	synACK      = 0x1F // ACK, credits unlimited
	synNAKSeq   = 0x60 // NAK, PSN sequence error
	rnrTimer    = 12   // 0.64 ms
	synRNR      = 0x20 | rnrTimer
	rnrDelayNs  = 640_000
	pkeyDefault = 0xFFFF
)

// connGen produces the packets of one connection in the order a perfect
// network would show them: CM REQ/REP/RTU, the messages with their
// responses, DREQ/DREP.
type connGen struct {
	c        *conn
	rng      *rand.Rand
	phase    uint8 // 0 CM setup, 1 data, 2 teardown, 3 done
	messages int   // 0: unlimited (mix)
	msgSize  int   // <= 0: drawn per message (mix)
	msgIdx   uint32
	psn      uint32
	msn      uint32
	// message in progress (multi-packet SEND/WRITE)
	cur     bool
	curOp   opKind
	curN    uint32
	curI    uint32
	curSize int
	curPSN  uint32
	q       []pkt
	head    int
}

func newConnGen(c *conn, rng *rand.Rand, messages, msgSize int) *connGen {
	g := &connGen{c: c, rng: rng, messages: messages, msgSize: msgSize, psn: c.psnA}
	if c.kind == kindUD {
		g.phase = 1
	}
	g.q = make([]pkt, 0, 16)
	return g
}

// next stores the next packet in p; false when the connection is done.
func (g *connGen) next(p *pkt) bool {
	for g.head == len(g.q) {
		g.q, g.head = g.q[:0], 0
		if !g.refill() {
			return false
		}
	}
	*p = g.q[g.head]
	g.head++
	return true
}

// teardown makes the generator close the connection now: DREQ, DREP.
func (g *connGen) teardown() {
	if g.phase < 2 {
		g.phase = 2
	}
	g.q, g.head = g.q[:0], 0
}

func (g *connGen) push(p pkt) { g.q = append(g.q, p) }

func (g *connGen) refill() bool {
	c := g.c
	switch g.phase {
	case 0:
		g.push(g.mad(cmREQ))
		g.push(g.mad(cmREP))
		g.push(g.mad(cmRTU))
		g.phase = 1
		return true
	case 1:
		if !g.cur && g.messages > 0 && int(g.msgIdx) >= g.messages {
			g.phase = 2
			return g.refill()
		}
		g.data()
		return true
	case 2:
		g.phase = 3
		if c.kind == kindUD {
			return false
		}
		g.push(g.mad(cmDREQ))
		g.push(g.mad(cmDREP))
		return true
	}
	return false
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// size returns the size of the next message.
func (g *connGen) size() int {
	if g.msgSize > 0 {
		return g.msgSize
	}
	if g.msgSize == 0 && g.messages > 0 {
		return 0
	}
	sizes := [...]int{64, 256, 512, 1024, 2048, 4096}
	return sizes[g.rng.IntN(len(sizes))]
}

// data pushes the next request packet and the responses that follow it.
func (g *connGen) data() {
	c := g.c
	if !g.cur {
		g.curOp = c.kind
		g.curSize = g.size()
		if g.curOp == kindAtomic {
			g.curSize = 8
		}
		g.curN = uint32(max(1, ceilDiv(g.curSize, c.mtu)))
		g.curI = 0
		g.curPSN = g.psn
		g.cur = true
	}
	base := pkt{c: c, destQP: c.qb, psn: g.psn, msgID: g.msgIdx, msgPSN: g.curPSN, msgN: g.curN, msgSize: uint32(g.curSize), span: 1}
	switch g.curOp {
	case kindUD:
		base.op = layers.OpcodeUDSendOnly
		if g.msgIdx%2 == 1 {
			base.op = layers.OpcodeUDSendOnlyWithImmediate
			base.imm = 0x1000 + g.msgIdx
		}
		base.qkey, base.srcQP = c.qkey, c.qa
		base.payLen, base.payOff = g.curSize, int(g.msgIdx*7%251)
		base.isMsg, base.msgLast = true, true
		g.push(base)
		g.endMessage(1)
	case kindAtomic:
		base.op = layers.OpcodeRCCompareSwap
		if g.msgIdx%2 == 1 {
			base.op = layers.OpcodeRCFetchAdd
		}
		base.va, base.rkey = c.va+8*uint64(g.msgIdx%512), c.rkey
		base.swap, base.cmp = uint64(g.msgIdx)+1, uint64(g.msgIdx)
		base.ackReq = true
		g.push(base)
		g.msn++
		ack := pkt{c: c, fromB: true, op: layers.OpcodeRCAtomicAcknowledge, destQP: c.qa, psn: g.psn,
			aeth: synACK, msn: g.msn & psnMask, orig: uint64(g.msgIdx), msgID: g.msgIdx}
		g.push(ack)
		g.endMessage(1)
	case kindRead:
		base.op = layers.OpcodeRCRDMAReadRequest
		base.va, base.rkey, base.dmaLen = c.va+uint64(g.msgIdx%64)*uint64(g.curSize), c.rkey, uint32(g.curSize)
		base.span = g.curN
		base.ackReq = true
		g.push(base)
		g.msn++
		left := g.curSize
		for i := range g.curN {
			r := pkt{c: c, fromB: true, destQP: c.qa, psn: (g.psn + i) & psnMask, isMsg: true,
				msgID: g.msgIdx, msgPSN: g.psn, msgN: g.curN, msgSize: uint32(g.curSize), span: 1}
			n := min(left, c.mtu)
			left -= n
			r.payLen, r.payOff = n, int((g.msgIdx*7+i*3)%251)
			switch {
			case g.curN == 1:
				r.op = layers.OpcodeRCRDMAReadResponseOnly
			case i == 0:
				r.op = layers.OpcodeRCRDMAReadResponseFirst
			case i == g.curN-1:
				r.op = layers.OpcodeRCRDMAReadResponseLast
			default:
				r.op = layers.OpcodeRCRDMAReadResponseMiddle
			}
			if r.op.Position() != layers.PositionMiddle {
				r.aeth, r.msn = synACK, g.msn&psnMask
			}
			r.msgLast = i == g.curN-1
			g.push(r)
		}
		g.endMessage(g.curN)
	default: // write, send: one request packet per call
		i, n := g.curI, g.curN
		base.isMsg = true
		off := int(i) * c.mtu
		base.payLen = min(c.mtu, g.curSize-off)
		base.payOff = int((g.msgIdx*7 + i*3) % 251)
		first, last := i == 0, i == n-1
		variant := g.msgIdx % 3
		if g.curOp == kindWrite {
			base.op = WriteOpcode(first, last, false)
			if first {
				base.va, base.rkey, base.dmaLen = c.va+uint64(g.msgIdx%64)*uint64(g.curSize), c.rkey, uint32(g.curSize)
			}
		} else {
			switch {
			case first && last:
				base.op = [3]layers.Opcode{layers.OpcodeRCSendOnly, layers.OpcodeRCSendOnlyWithImmediate, layers.OpcodeRCSendOnlyWithInvalidate}[variant]
			case first:
				base.op = layers.OpcodeRCSendFirst
			case last:
				base.op = [3]layers.Opcode{layers.OpcodeRCSendLast, layers.OpcodeRCSendLastWithImmediate, layers.OpcodeRCSendLastWithInvalidate}[variant]
			default:
				base.op = layers.OpcodeRCSendMiddle
			}
			if last {
				switch variant {
				case 1:
					base.imm, base.se = 0x1000+g.msgIdx, true
				case 2:
					base.imm = c.rkey ^ g.msgIdx
				}
			}
		}
		base.msgLast = last
		base.ackReq = last
		g.push(base)
		g.curI++
		g.psn = (g.psn + 1) & psnMask
		if last {
			g.msn++
			g.push(pkt{c: c, fromB: true, op: layers.OpcodeRCAcknowledge, destQP: c.qa, psn: base.psn, aeth: synACK, msn: g.msn & psnMask})
			g.cur = false
			g.msgIdx++
		}
	}
}

// endMessage closes a single-request message that covered n PSNs.
func (g *connGen) endMessage(n uint32) {
	g.psn = (g.psn + n) & psnMask
	g.cur = false
	g.msgIdx++
}

// mad returns the QP1 packet carrying a CM message; it takes the sender's
// GSI PSN.
func (g *connGen) mad(k cmKind) pkt {
	c := g.c
	fromB := k == cmREP || k == cmDREP
	src := c.a
	if fromB {
		src = c.b
	}
	p := pkt{c: c, fromB: fromB, op: layers.OpcodeUDSendOnly, destQP: 1, psn: src.qp1PSN, cm: k,
		qkey: layers.QKeyGSI, srcQP: 1, payLen: madLen, isMsg: true, msgLast: true, msgN: 1, msgSize: madLen, span: 1}
	p.msgPSN = p.psn
	src.qp1PSN = (src.qp1PSN + 1) & psnMask
	return p
}
