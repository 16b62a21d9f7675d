package points

import (
	"math"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// DefaultWindow is the default matching window: a packet's sightings at
// the other points must come within it (on the reference clock).
const DefaultWindow = 10 * time.Millisecond

// DefaultMaxPSNs is how many lost and corrupted PSNs a link lists.
const DefaultMaxPSNs = 1000

// MaxFiles is the largest number of capture points a Matcher takes.
const MaxFiles = 64

// Options configure a Matcher.
type Options struct {
	// Files names the captures, the first being the reference clock.
	Files []string
	// Offsets are the files' clock offsets (from EstimateOffsets).
	Offsets []Offset
	// Spans are the files' first and last packet times on their own
	// clocks: a packet is missing at a point only when it passed while
	// that point was capturing. Zero values: always capturing.
	Spans [][2]time.Time
	// Window bounds the delay between two sightings of one transmission
	// (default DefaultWindow); memory holds the packets of one window.
	Window time.Duration
	// MaxPSNs caps the lost and corrupted PSNs listed per link (default
	// DefaultMaxPSNs); the counts go on.
	MaxPSNs int
}

// Matcher matches the packets of several captures. Give it every packet
// of every file, merged in time order on the reference clock (each file's
// timestamps minus its offset). Not safe for concurrent use.
type Matcher struct {
	opts    Options
	n       int
	off     []int64
	win     int64
	span    [][2]int64 // reference clock; [0,0] unbounded
	maxPSNs int

	flows     map[flowKey]int32
	fl        []*flowState
	hostFlows map[[2]analyze.Addr][]int32 // request flows by (source, destination)

	byKey map[mkey]uint64 // seq+1 of the newest entry with the key

	lastFlow    flowKey // one-entry cache in front of flows
	lastFlowIdx int32
	ring        []entry
	times       []int64  // per entry and file: reference-clock time of the sighting
	frames      []uint64 // per entry and file: frame number in the file
	head        uint64   // oldest live entry
	tail        uint64   // next entry
	now         int64

	sightings, transmissions uint64
	maxLive                  int
	addedCE                  bool // AddedCE
}

// mkey is Key with the flow as its index: a small map key.
type mkey struct {
	flow       int32
	psn        uint32
	payloadLen int32
	ipID       uint16
	opcode     layers.Opcode
}

// entry is one transmission within the window.
type entry struct {
	key             mkey
	flow            int32
	firstFile, last uint8 // the points that saw it first and last
	hasICRC         bool
	icrc            uint32
	first           int64  // when it was first seen
	seen            uint64 // files that saw it
	good            uint64 // files where its ICRC verified
	bad             uint64 // files where its ICRC failed
	ce              uint64 // files where it was ECN CE-marked
	prev            uint64 // seq+1 of the previous entry with the same key
}

// New returns a Matcher.
func New(opts Options) *Matcher {
	n := len(opts.Files)
	if n > MaxFiles {
		n = MaxFiles
		opts.Files = opts.Files[:n]
	}
	if opts.Window <= 0 {
		opts.Window = DefaultWindow
	}
	if opts.MaxPSNs <= 0 {
		opts.MaxPSNs = DefaultMaxPSNs
	}
	m := &Matcher{opts: opts, n: n, win: int64(opts.Window), maxPSNs: opts.MaxPSNs,
		off: make([]int64, n), span: make([][2]int64, n),
		flows: map[flowKey]int32{}, hostFlows: map[[2]analyze.Addr][]int32{}, byKey: map[mkey]uint64{}, lastFlowIdx: -1}
	for i := range n {
		if i < len(opts.Offsets) {
			m.off[i] = int64(opts.Offsets[i].Offset)
		}
		if i < len(opts.Spans) && !opts.Spans[i][0].IsZero() {
			m.span[i] = [2]int64{opts.Spans[i][0].UnixNano() - m.off[i], opts.Spans[i][1].UnixNano() - m.off[i]}
		}
	}
	m.grow(1024)
	return m
}

// Offset returns file's clock offset, to subtract from its timestamps.
func (m *Matcher) Offset(file int) time.Duration { return time.Duration(m.off[file]) }

// Add takes the next packet, p from file (in merged time order), and
// reports whether it is the first sighting of its transmission: false
// when the same transmission was already seen at another point. Packets
// without a BTH are always first.
func (m *Matcher) Add(file int, p *analyze.Packet) bool {
	m.addedCE = false
	sg, ok := sightingOf(p)
	if !ok || file < 0 || file >= m.n {
		return true
	}
	m.sightings++
	t := p.Time.UnixNano() - m.off[file]
	if t > m.now {
		m.now = t
		m.evict(t - m.win)
	}
	fi := m.flowIndex(sg.key)
	fs := m.fl[fi]
	mk := mkey{flow: fi, psn: sg.key.psn, payloadLen: sg.key.payloadLen, ipID: sg.key.ipID, opcode: sg.key.opcode}
	if best := m.bestMatch(mk, fs, file, t, sg); best != 0 {
		m.resight(best, fs, file, t, p, sg)
		return false
	}
	m.transmit(mk, fi, fs, file, t, p, sg)
	return true
}

// AddedCE reports whether the packet last given to Add, a later sighting
// of a transmission seen before, is ECN CE-marked where none of its
// earlier sightings was: the network marked it between the points that
// saw it unmarked and this one. A combined report fed only the first
// sightings has not seen the mark (analyze.Analyzer.MarkCE counts it).
func (m *Matcher) AddedCE() bool { return m.addedCE }

// flowIndex is the index of key's flow in m.fl, from the one-entry
// cache unless key is of another flow, or is a request in a flow known
// only by its responses (m.flow).
func (m *Matcher) flowIndex(key Key) int32 {
	fi := m.lastFlowIdx
	if fi < 0 || key.flow != m.lastFlow || (!m.fl[fi].requests && ackable(key.opcode)) {
		fi = m.flow(key.flow, key.opcode)
		m.lastFlow, m.lastFlowIdx = key.flow, fi
	}
	return fi
}

// bestMatch returns the seq+1 of the live entry with key mk that the
// sighting sg at file, at t, is most likely another sighting of, or 0
// for none: among those not yet seen at file, with no other ICRC and
// first seen within the window, the one whose delay is nearest the
// flow's (matchScore).
func (m *Matcher) bestMatch(mk mkey, fs *flowState, file int, t int64, sg sighting) uint64 {
	bit := uint64(1) << file
	var best uint64
	bestScore := int64(math.MaxInt64)
	for s := m.byKey[mk]; s != 0 && s-1 >= m.head; {
		slot := (s - 1) % uint64(len(m.ring))
		e := &m.ring[slot]
		next := e.prev
		if e.seen&bit == 0 && !(e.hasICRC && sg.hasICRC && e.icrc != sg.icrc) {
			if d := t - e.first; d <= m.win && d >= -m.win {
				if score := m.matchScore(e, slot, fs, file, t); score < bestScore {
					best, bestScore = s, score
				}
			}
		}
		s = next
	}
	return best
}

// matchScore is how far the delay of a sighting at file, at t, of the
// entry e in slot is from the flow's delay between the two points: the
// delay from the point that saw it first (or, when the path keeps no
// pair of the two, the one that saw it last).
func (m *Matcher) matchScore(e *entry, slot uint64, fs *flowState, file int, t int64) int64 {
	g := int(e.firstFile)
	if fs.path.acc(g, file) == nil && fs.path.on(file) {
		g = int(e.last)
	}
	score := t - m.times[int(slot)*m.n+g] - fs.path.expect(g, file)
	if score < 0 {
		score = -score
	}
	return score
}

// resight records the sighting sg of p at file, at t, of the live
// entry seq+1 best: the entry's marks, the flow's path, and the delays
// between file and the points near it on the path that saw the entry
// before.
func (m *Matcher) resight(best uint64, fs *flowState, file int, t int64, p *analyze.Packet, sg sighting) {
	bit := uint64(1) << file
	slot := (best - 1) % uint64(len(m.ring))
	e := &m.ring[slot]
	m.addedCE = sg.ce && e.ce == 0
	m.mark(e, slot, file, t, p, sg)
	if fs.path.placed != 1<<m.n-1 {
		m.place(fs, e, slot, file, e.seen|bit, t)
	}
	if k := int(fs.path.at[file]); k >= 0 {
		for _, nb := range [4]int{k - 2, k - 1, k + 1, k + 2} {
			if nb < 0 || nb >= len(fs.path.pts) {
				continue
			}
			if g := int(fs.path.pts[nb]); e.seen>>g&1 != 0 {
				fs.path.acc(g, file).observe(g, file, m.times[int(slot)*m.n+g], t)
			}
		}
	}
	e.seen |= bit
	e.last = uint8(file)
}

// transmit records the sighting sg of p at file, at t, as a new
// transmission with key mk in flow fi (fs): its PSN's resend or
// acknowledgement (trackPSN), and a new entry in the ring.
func (m *Matcher) transmit(mk mkey, fi int32, fs *flowState, file int, t int64, p *analyze.Packet, sg sighting) {
	m.transmissions++
	m.trackPSN(fs, t, p, sg)
	if m.tail-m.head == uint64(len(m.ring)) {
		m.grow(2 * len(m.ring))
	}
	seq := m.tail
	m.tail++
	m.maxLive = max(m.maxLive, int(m.tail-m.head))
	slot := seq % uint64(len(m.ring))
	e := &m.ring[slot]
	*e = entry{key: mk, flow: fi, firstFile: uint8(file), last: uint8(file), hasICRC: sg.hasICRC, icrc: sg.icrc, first: t, prev: m.byKey[mk]}
	if len(fs.path.pts) == 0 {
		fs.path.insert(file, 0, m.n)
	}
	m.mark(e, slot, file, t, p, sg)
	e.seen = uint64(1) << file
	m.byKey[mk] = seq + 1
}

// trackPSN follows a new transmission's PSN, at t: a request's is a
// resend when not past the flow's highest, else the new highest; an
// acknowledgement's acknowledges the PSN in its request flow.
func (m *Matcher) trackPSN(fs *flowState, t int64, p *analyze.Packet, sg sighting) {
	if ackable(sg.key.opcode) {
		if fs.sent && psnDiff(sg.key.psn, fs.highest) <= 0 {
			fs.resent(m, sg.key.psn, t)
		} else {
			fs.sent, fs.highest = true, sg.key.psn
		}
	} else if psn, ok := ackedPSN(p); ok {
		if rq := m.requestFlow(sg.key.flow, psn); rq != nil {
			rq.acked(m, psn, t)
		}
	}
}

// mark records file's sighting of e.
func (m *Matcher) mark(e *entry, slot uint64, file int, t int64, p *analyze.Packet, sg sighting) {
	i := int(slot)*m.n + file
	m.times[i] = t
	m.frames[i] = p.Frame
	switch sg.status {
	case layers.ICRCOK:
		e.good |= 1 << file
	case layers.ICRCBad:
		e.bad |= 1 << file
	}
	if sg.ce {
		e.ce |= 1 << file
	}
	if !e.hasICRC && sg.hasICRC {
		e.hasICRC, e.icrc = true, sg.icrc
	}
}

// grow resizes the ring to size entries, keeping the live ones.
func (m *Matcher) grow(size int) {
	ring := make([]entry, size)
	times := make([]int64, size*m.n)
	frames := make([]uint64, size*m.n)
	for s := m.head; s < m.tail; s++ {
		o, nw := s%uint64(len(m.ring)), s%uint64(size)
		ring[nw] = m.ring[o]
		copy(times[int(nw)*m.n:int(nw+1)*m.n], m.times[int(o)*m.n:int(o+1)*m.n])
		copy(frames[int(nw)*m.n:int(nw+1)*m.n], m.frames[int(o)*m.n:int(o+1)*m.n])
	}
	m.ring, m.times, m.frames = ring, times, frames
}

// evict finishes the entries first seen before limit.
func (m *Matcher) evict(limit int64) {
	for m.head < m.tail {
		slot := m.head % uint64(len(m.ring))
		e := &m.ring[slot]
		if e.first >= limit {
			return
		}
		m.finish(e, slot)
		if m.byKey[e.key] == m.head+1 {
			delete(m.byKey, e.key)
		}
		m.head++
	}
}

// covers says whether file was capturing at reference time t (between
// its first and last packets); callers add the flow's delay to it.
func (m *Matcher) covers(file int, t int64) bool {
	s := m.span[file]
	if s == [2]int64{} {
		return true
	}
	return t >= s[0] && t <= s[1]
}

// finish accounts a transmission leaving the window, for every pair the
// path of its flow keeps one of whose points saw it.
func (m *Matcher) finish(e *entry, slot uint64) {
	fs := m.fl[e.flow]
	if e.seen&fs.path.placed == 0 && e.seen&(e.seen-1) != 0 {
		m.extend(fs, e, slot)
	}
	base := int(slot) * m.n
	for _, acc := range fs.path.links {
		m.account(fs, acc, e, base)
	}
	for _, acc := range fs.path.skips {
		m.account(fs, acc, e, base)
	}
}

// account adds e (its sightings at m.times[base:], m.frames[base:]) to
// the pair acc: matched, corrupted, or missing at one point.
func (m *Matcher) account(fs *flowState, acc *pairAcc, e *entry, base int) {
	i, j := acc.i, acc.j
	si, sj := e.seen>>i&1 != 0, e.seen>>j&1 != 0
	switch {
	case si && sj:
		acc.matched++
		acc.delays.add(m.times[base+j] - m.times[base+i])
		switch {
		case e.good>>i&1 != 0 && e.bad>>j&1 != 0:
			acc.corrupt(0, e.key.psn, m.frames[base+j], m.maxPSNs)
		case e.good>>j&1 != 0 && e.bad>>i&1 != 0:
			acc.corrupt(1, e.key.psn, m.frames[base+i], m.maxPSNs)
		}
		switch ci, cj := e.ce>>i&1 != 0, e.ce>>j&1 != 0; {
		case cj && !ci:
			acc.ceAdded[0]++
		case ci && !cj:
			acc.ceAdded[1]++
		}
	case si && m.covers(j, m.times[base+i]+fs.path.expect(i, j)):
		m.miss(fs, acc, 0, e, m.frames[base+i], m.times[base+i])
	case sj && m.covers(i, m.times[base+j]+fs.path.expect(j, i)):
		m.miss(fs, acc, 1, e, m.frames[base+j], m.times[base+j])
	}
}

// miss accounts a transmission seen upstream (orientation o of acc) and
// not downstream: not captured when the responder acknowledged it before
// any resend of its PSN, lost when it was resent first or never
// acknowledged; undecided ones wait in the flow's pending list.
func (m *Matcher) miss(fs *flowState, acc *pairAcc, o int, e *entry, frame uint64, t int64) {
	psn := e.key.psn
	if !ackable(e.key.opcode) {
		acc.lose(o, psn, frame, m.maxPSNs)
		return
	}
	ackT, acked := fs.ackTime(psn, t)
	resT, resent := fs.resendTime(psn, t)
	switch {
	case acked && (!resent || ackT <= resT):
		acc.notCaptured[o]++
	case resent:
		acc.lose(o, psn, frame, m.maxPSNs)
	default:
		fs.pending = append(fs.pending, pending{acc: acc, o: o, psn: psn, frame: frame})
	}
}

// flow returns the index of a flow's state, creating it.
func (m *Matcher) flow(k flowKey, op layers.Opcode) int32 {
	if i, ok := m.flows[k]; ok {
		if ackable(op) && !m.fl[i].requests {
			m.fl[i].requests = true
			hk := [2]analyze.Addr{k.src, k.dst}
			m.hostFlows[hk] = append(m.hostFlows[hk], i)
		}
		return i
	}
	i := int32(len(m.fl))
	m.flows[k] = i
	m.fl = append(m.fl, &flowState{key: k, path: newPath(m.n)})
	if ackable(op) {
		m.fl[i].requests = true
		hk := [2]analyze.Addr{k.src, k.dst}
		m.hostFlows[hk] = append(m.hostFlows[hk], i)
	}
	return i
}

// requestFlow returns the request flow a response of flow k acknowledges:
// among the request flows from k's destination to k's source, the one
// whose last request PSN is nearest the acknowledged PSN (the QP pairing
// is not on the wire without CM).
func (m *Matcher) requestFlow(k flowKey, psn uint32) *flowState {
	var best *flowState
	bestD := int32(math.MaxInt32)
	for _, i := range m.hostFlows[[2]analyze.Addr{k.dst, k.src}] {
		fs := m.fl[i]
		if !fs.sent {
			continue
		}
		d := psnDiff(fs.highest, psn)
		if d < 0 {
			d = -d
		}
		if d < bestD {
			best, bestD = fs, d
		}
	}
	return best
}

// Stats are the Matcher's counters.
type Stats struct {
	// Sightings is the number of RDMA packets given to Add.
	Sightings uint64
	// Transmissions counts the distinct transmissions among them.
	Transmissions uint64
	// MaxLive is the largest number of transmissions held at once (the
	// window's worth).
	MaxLive int
}

// Stats returns the counters so far.
func (m *Matcher) Stats() Stats {
	return Stats{Sightings: m.sightings, Transmissions: m.transmissions, MaxLive: m.maxLive}
}
