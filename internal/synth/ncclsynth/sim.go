package ncclsynth

import (
	"container/heap"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// The event model's delays, ns.
const (
	startNs     = 10_000 // the first collective's enqueue
	proxyNs     = 2_000  // host enqueue → the receive proxy's first CTS
	launchNs    = 5_000  // host enqueue → the GPU kernel starts
	reactNs     = 1_000  // a CTS arrives → the send proxy posts the data
	consumeNs   = 1_000  // a receive lands → the GPU has consumed it
	ackNs       = 300    // a message lands → the responder's ACK
	nakReactNs  = 5_000  // a NAK arrives → the sender's NIC resends
	jitterNs    = 2_000  // hosts enqueue a collective up to this apart
	overheadB   = 100    // bytes a packet adds on the wire to its payload
	synACK      = 0x1F   // AETH: ACK, credits unlimited
	synNAKSeq   = 0x60   // AETH: NAK, PSN sequence error
	pfcPriority = 3      // RoCE's lossless class
	psnMask     = 1<<24 - 1
	bufferBase  = 0x7f00_0000_0000
)

// packet is one packet on the wire: its headers and when it left its
// sender's NIC (true time, ns from synth.StartTime).
type packet struct {
	t    int64
	data bool // a data write (not a CTS or an ACK)
	lost bool // lost after its sender's capture: not in its receiver's
	// pfc is a PFC frame's quanta (priority pfcPriority) the switch sent
	// to Src: in Src's capture only.
	pfc uint16
	synth.RCPacket
}

// message is one data message of a connection: a receive the receiver
// posts with a CTS, and the write that fills it.
type message struct {
	coll  int
	bytes int64
	step  int
	// deps are the receives whose data this message reduces or forwards.
	deps  []ref
	slice int // buffer steps it takes
	pos   int // its first buffer step (running)
	// Times (ns, -1 until known): the CTS left the receiver and reached
	// the sender; the data left the sender (first and last packet) and
	// reached the receiver whole.
	ctsAt, ctsArr, sendAt, lastAt, recvAt int64
	// wire is how long its packets took on the link, first to last.
	wire int64
	qp   int // index of the data QP
}

// ref names a message of a connection.
type ref struct {
	c *connection
	k int
}

// connection is one NET connection of a channel: the sender writes the
// data to the receiver, which writes the CTS into the sender's FIFO.
type connection struct {
	ch, s, d int
	// sendQPs are the sender's QPs, recvQPs the receiver's (the data's
	// DestQP); the CTS go on the first pair.
	sendQPs, recvQPs []uint32
	sport, dport     uint16 // UDP source ports of each direction
	dataPSN, dataMSN []uint32
	ctsPSN, ctsMSN   uint32
	fifoAddr         uint64
	fifoRkey         uint32
	bufAddr          uint64
	bufRkey          uint32
	msgs             []message
	nextCTS, nextMsg int
	sentFirst        int // first transmissions of data packets (Config.Loss)
	sentPause        int // data packets sent (Config.Pause)
	lost, resent     int // data packets lost, and sent again
	pauses           int // PFC frames that paused the sender (Config.Pause)
	ctsQueued        bool
	sendQueued       bool
	// oldest is the oldest message whose buffer steps may still be held
	// (tryCTS), freeAt when those before it were all consumed.
	oldest int
	freeAt int64
}

type evKind uint8

const (
	evCTS evKind = iota
	evSend
	evRecv
)

type event struct {
	t    int64
	seq  int
	kind evKind
	c    *connection
	k    int
}

type events []event

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	return e[i].t < e[j].t || e[i].t == e[j].t && e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any)   { *e = append(*e, x.(event)) }
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

// job is a Config being simulated.
type job struct {
	cfg     *Config
	layout  nccl.Layout
	n       int
	conns   []*connection // the ring's by channel, then sender rank; then the trees'
	ring    []int         // the ring from rank 0 (Config.Ring)
	pos     []int         // each rank's place in it
	byKey   map[[3]int]*connection
	out     [][]*connection // by sender rank
	qpn     []uint32        // the last QP number of each rank
	q       events
	seq     int
	egress  []int64 // when each host's NIC is free
	packets []packet
	// host and gpu are when each rank enqueued the current collective and
	// its GPU started.
	host, gpu []int64
	// ends are the collectives' last data packet times.
	ends []int64
	rng  *rand.Rand
}

// newJob sets up the connections of cfg (normalized): each channel's ring
// 0 → 1 → … → n−1 → 0, and when a collective runs on the trees, both
// directions of each edge of the channel's tree (Trees), those the ring
// has shared with it.
func newJob(cfg *Config) *job {
	l, _ := layout(cfg.Layout)
	j := &job{cfg: cfg, layout: l, n: cfg.Ranks, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6e63636c)),
		byKey: map[[3]int]*connection{}, out: make([][]*connection, cfg.Ranks)}
	j.egress = make([]int64, j.n)
	j.qpn = make([]uint32, j.n)
	for r := range j.qpn {
		j.qpn[r] = 0x100 + uint32(j.rng.IntN(0x1000))*4
	}
	j.ring, j.pos = ringFrom0(cfg.Ring, j.n), make([]int, j.n)
	for i, r := range j.ring {
		j.pos[r] = i
	}
	for ch := range cfg.Channels {
		for s := range j.n {
			j.connection(ch, s, j.succ(s))
		}
	}
	if slices.ContainsFunc(cfg.Collectives, func(c Collective) bool { return c.Algorithm == AlgoTree }) {
		for ch := range cfg.Channels {
			for r, p := range Trees(j.n, ch).Parent {
				if p >= 0 {
					j.connection(ch, r, p)
					j.connection(ch, p, r)
				}
			}
		}
	}
	return j
}

// succ is rank r's successor on the ring.
func (j *job) succ(r int) int { return j.ring[(j.pos[r]+1)%j.n] }

// ringFrom0 is ring (nil: 0 … n−1) turned to start at rank 0.
func ringFrom0(ring []int, n int) []int {
	if ring == nil {
		ring = make([]int, n)
		for r := range ring {
			ring[r] = r
		}
	}
	i := slices.Index(ring, 0)
	return append(slices.Clone(ring[i:]), ring[:i]...)
}

// connection returns the connection of channel ch from s to d, set up
// when new.
func (j *job) connection(ch, s, d int) *connection {
	if c := j.byKey[[3]int{ch, s, d}]; c != nil {
		return c
	}
	key := func() uint32 { return j.rng.Uint32()>>8 | 0x100 }
	c := &connection{ch: ch, s: s, d: d,
		sport: 49152 + uint16(j.rng.IntN(16384)), dport: 49152 + uint16(j.rng.IntN(16384)),
		fifoAddr: bufferBase | uint64(j.rng.Uint32())<<12, fifoRkey: key(),
		bufAddr: bufferBase | uint64(j.rng.Uint32())<<12 | 1<<44, bufRkey: key(),
		ctsPSN: j.rng.Uint32() & psnMask}
	for range j.cfg.QPs {
		j.qpn[s]++
		j.qpn[d]++
		c.sendQPs = append(c.sendQPs, j.qpn[s])
		c.recvQPs = append(c.recvQPs, j.qpn[d])
		c.dataPSN = append(c.dataPSN, j.rng.Uint32()&psnMask)
		c.dataMSN = append(c.dataMSN, 0)
	}
	j.conns = append(j.conns, c)
	j.byKey[[3]int{ch, s, d}] = c
	j.out[s] = append(j.out[s], c)
	return c
}

// run simulates every collective in turn.
func (j *job) run() {
	j.host, j.gpu = make([]int64, j.n), make([]int64, j.n)
	at := int64(startNs)
	for ci, co := range j.cfg.Collectives {
		j.plan(ci, co)
		for r := range j.n {
			j.host[r] = at + j.rng.Int64N(jitterNs) + lateNs(j.cfg.HostLate, r)
			j.gpu[r] = j.host[r] + launchNs + lateNs(j.cfg.GPULate, r)
		}
		end := at
		for _, c := range j.conns {
			j.tryCTS(c)
		}
		for len(j.q) > 0 {
			e := heap.Pop(&j.q).(event)
			switch e.kind {
			case evCTS:
				j.cts(e.c, e.k, e.t)
			case evSend:
				j.send(e.c, e.k, e.t)
				end = max(end, e.c.msgs[e.k].lastAt)
			case evRecv:
				j.recv(e.c, e.k, e.t)
			}
		}
		j.ends = append(j.ends, end)
		at = end + int64(j.cfg.Gap)
	}
}

// lateNs is how late ls make rank r.
func lateNs(ls []Late, r int) int64 {
	var d int64
	for _, l := range ls {
		if l.Rank == r {
			d += int64(l.Delay)
		}
	}
	return d
}

// plan appends the messages of collective ci to its connections.
func (j *job) plan(ci int, co Collective) {
	e, esize := perRank(co, j.n)
	if co.Algorithm == AlgoTree {
		for ch := range j.cfg.Channels {
			j.planTree(ci, Trees(j.n, ch), channelShare(e, j.cfg.Channels, ch), esize, ch)
		}
		return
	}
	a := algos[co.Kind]
	for ch := range j.cfg.Channels {
		// Each rank's sends depend on receives counted from the start of
		// the collective on its incoming connection.
		base := make([]int, j.n)
		for r := range j.n {
			base[r] = len(j.byKey[[3]int{ch, r, j.succ(r)}].msgs)
		}
		for r := range j.n {
			c, prev := j.byKey[[3]int{ch, r, j.succ(r)}], j.ring[(j.pos[r]+j.n-1)%j.n]
			in := j.byKey[[3]int{ch, prev, r}]
			// Rank 0, the Broadcast's root, is at place 0.
			for _, s := range ringSends(co.Kind, j.n, j.pos[r], channelShare(e, j.cfg.Channels, ch), esize) {
				var deps []ref
				if s.dep >= 0 {
					deps = []ref{{in, base[prev] + s.dep}}
				}
				j.add(c, message{coll: ci, bytes: s.bytes, step: s.step, deps: deps, slice: a.sliceSteps})
			}
		}
	}
}

// add appends m to c's messages: its buffer steps after the last one's,
// its data QP the next in turn.
func (j *job) add(c *connection, m message) {
	m.ctsAt, m.ctsArr, m.sendAt, m.lastAt, m.recvAt = -1, -1, -1, -1, -1
	if k := len(c.msgs); k > 0 {
		m.pos = c.msgs[k-1].pos + c.msgs[k-1].slice
	}
	m.qp = len(c.msgs) % len(c.sendQPs)
	c.msgs = append(c.msgs, m)
}

func (j *job) push(t int64, kind evKind, c *connection, k int) {
	j.seq++
	heap.Push(&j.q, event{t: t, seq: j.seq, kind: kind, c: c, k: k})
}

// tryCTS queues the connection's next CTS once the host enqueued its
// collective and the buffer steps it takes are free (the receives that
// held them consumed).
func (j *job) tryCTS(c *connection) {
	k := c.nextCTS
	if c.ctsQueued || k >= len(c.msgs) {
		return
	}
	m := &c.msgs[k]
	// Its steps [pos, pos+slice) reuse the buffer slots of the steps
	// ncclSteps before them.
	for end := m.pos + m.slice; c.oldest < k && c.msgs[c.oldest].pos < end-ncclSteps; c.oldest++ {
		o := &c.msgs[c.oldest]
		if o.recvAt < 0 {
			return // a receive still holds the steps: tried again when it lands
		}
		c.freeAt = max(c.freeAt, o.recvAt+consumeNs)
	}
	t := max(j.host[c.d]+proxyNs, c.freeAt)
	if k > 0 {
		t = max(t, c.msgs[k-1].ctsAt)
	}
	c.ctsQueued = true
	j.push(t, evCTS, c, k)
}

// trySend queues the connection's next data message once its CTS has
// arrived and its data is ready (the GPU started, and the receive it
// reduces or forwards landed).
func (j *job) trySend(c *connection) {
	k := c.nextMsg
	if c.sendQueued || k >= len(c.msgs) || c.msgs[k].ctsArr < 0 {
		return
	}
	m := &c.msgs[k]
	t := max(m.ctsArr+reactNs, j.gpu[c.s])
	for _, r := range m.deps {
		d := &r.c.msgs[r.k]
		if d.recvAt < 0 {
			return // tried again when it lands
		}
		t = max(t, d.recvAt+consumeNs+d.bytes/200) // the GPU reduces at 200 GB/s
	}
	if k > 0 {
		t = max(t, c.msgs[k-1].sendAt)
	}
	c.sendQueued = true
	j.push(t, evSend, c, k)
}

// wireNs is how long a packet of payload bytes takes on the link from
// rank s (slowed by Config.Slow).
func (j *job) wireNs(s int, payload int64) int64 {
	rate := j.cfg.Gbps
	for _, sl := range j.cfg.Slow {
		if sl.Sender == s {
			rate /= sl.Factor
		}
	}
	return int64(float64((payload+overheadB)*8)/rate) + 1
}

// cts writes the CTS of message k: the receiver's RDMA WRITE of one FIFO
// entry into the sender's FIFO slot, and the sender's ACK.
func (j *job) cts(c *connection, k int, t int64) {
	m := &c.msgs[k]
	l := &j.layout
	idx := uint64(k + 1) // receives posted on the connection, from 1, across collectives
	entry := make([]byte, l.EntrySize)
	le := binary.LittleEndian
	le.PutUint64(entry[l.Addr:], c.bufAddr+uint64(m.pos%ncclSteps)*stepBytes)
	if size := uint64(m.slice * stepBytes); l.SizeLen == 4 {
		le.PutUint32(entry[l.Size:], uint32(size))
	} else {
		le.PutUint64(entry[l.Size:], size)
	}
	le.PutUint32(entry[l.Rkeys:], c.bufRkey)
	le.PutUint32(entry[l.NReqs:], 1)
	le.PutUint32(entry[l.Tag:], uint32(c.s))
	le.PutUint64(entry[l.Idx:], idx)
	start := max(t, j.egress[c.d])
	wire := j.wireNs(c.d, int64(len(entry)))
	j.egress[c.d] = start + wire
	j.packets = append(j.packets, packet{t: start, RCPacket: synth.RCPacket{Src: c.d, Dst: c.s, SrcPort: c.dport,
		Opcode: layers.OpcodeRCRDMAWriteOnly, DestQP: c.sendQPs[0], PSN: c.ctsPSN, AckReq: true,
		VA: c.fifoAddr + nccl.Slot(idx)*uint64(l.Stride), RKey: c.fifoRkey, DMALength: uint32(len(entry)), Payload: entry}})
	m.ctsAt = start
	m.ctsArr = start + wire + int64(j.cfg.LinkDelay)
	c.ctsMSN++
	j.packets = append(j.packets, packet{t: m.ctsArr + ackNs, RCPacket: synth.RCPacket{Src: c.s, Dst: c.d, SrcPort: c.sport,
		Opcode: layers.OpcodeRCAcknowledge, DestQP: c.recvQPs[0], PSN: c.ctsPSN, Syndrome: synACK, MSN: c.ctsMSN}})
	c.ctsPSN = (c.ctsPSN + 1) & psnMask
	c.nextCTS++
	c.ctsQueued = false
	j.tryCTS(c)
	j.trySend(c)
}

// send writes data message k: RDMA WRITE FIRST/MIDDLE/LAST WITH
// IMMEDIATE or WRITE ONLY WITH IMMEDIATE (0 bytes too) to the buffer of
// its CTS, the immediate its length, and the receiver's ACK.
func (j *job) send(c *connection, k int, t int64) {
	m := &c.msgs[k]
	q := m.qp
	mtu := int64(j.cfg.MTU)
	n := max(1, (m.bytes+mtu-1)/mtu)
	imm := imm(j.cfg, m.bytes)
	start := max(t, j.egress[c.s])
	m.sendAt = start
	at := start
	psn0 := c.dataPSN[q]
	sent := int64(-1) // the highest packet sent: a resend is never lost again
	for i := int64(0); i < n; i++ {
		p := synth.RCPacket{Src: c.s, Dst: c.d, SrcPort: c.sport, DestQP: c.recvQPs[q], PSN: (psn0 + uint32(i)) & psnMask,
			PayloadLen: int(min(mtu, m.bytes-i*mtu))}
		first, last := i == 0, i == n-1
		p.Opcode = synth.WriteOpcode(first, last, true)
		if first {
			p.VA, p.RKey, p.DMALength = c.bufAddr+uint64(m.pos%ncclSteps)*stepBytes, c.bufRkey, uint32(m.bytes)
		}
		if last {
			p.Immediate, p.AckReq = imm, true
		}
		lost := i > sent && !last && j.lose(c)
		if i <= sent {
			c.resent++
		}
		if lost {
			c.lost++
		}
		sent = max(sent, i)
		j.packets = append(j.packets, packet{t: at, data: true, lost: lost, RCPacket: p})
		m.lastAt = at
		at += j.wireNs(c.s, int64(p.PayloadLen))
		at = j.pause(c, at)
		if lost {
			at, sent = j.goBackN(c, q, i, n, at, m, p)
			i-- // resent from the lost packet on
		}
	}
	c.dataPSN[q] = (psn0 + uint32(n)) & psnMask
	j.egress[c.s] = at
	m.wire = at - start
	recv := at + int64(j.cfg.LinkDelay)
	c.dataMSN[q]++
	j.packets = append(j.packets, packet{t: recv + ackNs, RCPacket: synth.RCPacket{Src: c.d, Dst: c.s, SrcPort: c.dport,
		Opcode: layers.OpcodeRCAcknowledge, DestQP: c.sendQPs[q], PSN: (c.dataPSN[q] - 1) & psnMask, Syndrome: synACK, MSN: c.dataMSN[q]}})
	c.nextMsg++
	c.sendQueued = false
	j.push(recv, evRecv, c, k)
	j.trySend(c)
}

// lose says whether the connection's next first transmission of a data
// packet is lost after the sender's capture (Config.Loss).
func (j *job) lose(c *connection) bool {
	for _, l := range j.cfg.Loss {
		if l.Sender == c.s {
			c.sentFirst++
			return c.sentFirst%l.Every == 0
		}
	}
	return false
}

// pause follows a data packet the connection sent at at: every
// Config.Pause's Every-th, the switch's PFC frame pauses the sender. It
// returns when the sender may send again.
func (j *job) pause(c *connection, at int64) int64 {
	for _, p := range j.cfg.Pause {
		if p.Sender != c.s {
			continue
		}
		c.sentPause++
		if c.sentPause%p.Every != 0 {
			continue
		}
		c.pauses++
		j.packets = append(j.packets, packet{t: at, pfc: p.Quanta, RCPacket: synth.RCPacket{Src: c.s, Dst: c.s}})
		return at + int64(float64(p.Quanta)*512/j.cfg.Gbps) + 1
	}
	return at
}

// goBackN follows the loss of packet i (of n) of message m on data QP
// q, whose next packet leaves at at: the packets after it reach the
// receiver out of sequence, the first of them draws a NAK (PSN sequence
// error) naming the lost PSN, and the sender, which went on sending
// until the NAK arrived, sends again from the lost packet a few µs later
// (as NICs do: synth's --nak-delay). It returns
// when the resend starts and the highest packet sent.
func (j *job) goBackN(c *connection, q int, i, n, at int64, m *message, lost synth.RCPacket) (int64, int64) {
	delay := int64(j.cfg.LinkDelay)
	nakAt := at + delay + ackNs
	nakArr := nakAt + delay
	mtu := int64(j.cfg.MTU)
	sent := i
	for next := i + 1; next < n && at < nakArr; next++ {
		sent = next
		p := lost
		p.PSN = (lost.PSN + uint32(next-i)) & psnMask
		p.PayloadLen = int(min(mtu, m.bytes-next*mtu))
		p.VA, p.RKey, p.DMALength, p.Immediate, p.AckReq = 0, 0, 0, 0, false
		p.Opcode = synth.WriteOpcode(false, next == n-1, true)
		if next == n-1 {
			p.Immediate, p.AckReq = imm(j.cfg, m.bytes), true
		}
		j.packets = append(j.packets, packet{t: at, data: true, RCPacket: p})
		m.lastAt = at
		at += j.wireNs(c.s, int64(p.PayloadLen))
	}
	j.packets = append(j.packets, packet{t: nakAt, RCPacket: synth.RCPacket{Src: c.d, Dst: c.s, SrcPort: c.dport,
		Opcode: layers.OpcodeRCAcknowledge, DestQP: c.sendQPs[q], PSN: lost.PSN, Syndrome: synNAKSeq, MSN: c.dataMSN[q]}})
	return max(at, nakArr+nakReactNs), sent
}

// recv notes that message k landed whole: its buffer steps free up
// (the receiver's next CTS), and the send that reduces or forwards it
// may go.
func (j *job) recv(c *connection, k int, t int64) {
	c.msgs[k].recvAt = t
	j.tryCTS(c)
	for _, o := range j.out[c.d] {
		j.trySend(o)
	}
}

// imm is the immediate of a data message of length bytes.
func imm(cfg *Config, bytes int64) uint32 {
	if *cfg.BigEndianImm {
		return uint32(bytes)
	}
	return bits.ReverseBytes32(uint32(bytes)) // host order, little-endian on the wire
}

// timeOf is the true time of ns from synth.StartTime.
func timeOf(ns int64) time.Time { return synth.StartTime.Add(time.Duration(ns)) }
