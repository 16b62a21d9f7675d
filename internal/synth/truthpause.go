package synth

import (
	"cmp"
	"encoding/binary"
	"net"
	"slices"

	"github.com/roce-dissect/roce-dissect/layers"
)

// The pause truth is computed from the bytes and timestamps of the pause
// frames written (Truth.Pause, Truth.PauseStorms, Flow.PausedNs); the
// rules are PauseStats'.

// PauseStats are the pause frames of one sender, kind and priority.
//
// A frame is a pause frame when its EtherType (bytes 12-13, untagged) is
// 0x8808 and its opcode 0x0001 (802.3x PAUSE) or 0x0101 (PFC). Its time
// is its timestamp as written (µs in a µs pcap). A PAUSE counts for its
// sender's 802.3x stream with its pause_time; a PFC frame counts for its
// sender's priority i when bit i of its class-enable vector is set (bits
// 8-15 are ignored), with the time of priority i, and not otherwise.
//
// Each (sender, kind, priority) is paused in stretches, disjoint
// intervals [start, end). q quanta last floor(q × 512 × 10⁹ /
// link_speed_bps) ns. An XOFF (quanta > 0) at time t starts a stretch at t
// when none is open, and either way sets the open stretch's deadline to t +
// its time: a later frame replaces the deadline, shortening or extending
// it. A frame at t ≤ the deadline continues the stretch; a frame at t
// after it finds the stretch ended at the deadline. An XON (quanta 0)
// ends the open stretch at t. A stretch still open after the sender's
// last frame ends at its deadline (past the capture's last frame if need
// be).
type PauseStats struct {
	// SrcMAC is the sender's MAC, lower-case colon hex.
	SrcMAC string `json:"src_mac"`
	// Kind is "pfc" or "802.3x".
	Kind string `json:"kind"`
	// Priority is the PFC priority, 0…7; null for 802.3x.
	Priority *int `json:"priority"`
	// Frames counts the frames that count for the priority (PFC: the
	// priority's class-enable bit set), XOFFFrames those with a time
	// above 0, XONFrames those with 0.
	Frames     int `json:"frames"`
	XOFFFrames int `json:"xoff_frames"`
	XONFrames  int `json:"xon_frames"`
	// Quanta sums the times (quanta) of those frames.
	Quanta int64 `json:"quanta"`
	// PausedNs is the length of the union of the pause intervals: the sum
	// of the stretches' lengths; LongestPauseNs is the longest stretch's.
	PausedNs       int64 `json:"paused_ns"`
	LongestPauseNs int64 `json:"longest_pause_ns"`
}

// PauseStorm is a stretch (see PauseStats) of one sender, kind and
// priority strictly longer than the storm threshold
// (Truth.PauseStormThresholdNs): each such stretch is one storm; each
// sender, kind and priority with storms has one finding pause_storm
// (severity warning) at the StartFrame of its first storm, the frame of
// the XOFF that began the stretch. A storm of refreshed XOFFs is one
// stretch, so one storm.
type PauseStorm struct {
	SrcMAC   string `json:"src_mac"`
	Kind     string `json:"kind"`
	Priority *int   `json:"priority"` // null for 802.3x
	// StartFrame is the frame number of the XOFF that began the stretch,
	// StartTimeNs its timestamp (ns since the Unix epoch).
	StartFrame  int   `json:"start_frame"`
	StartTimeNs int64 `json:"start_time_ns"`
	// DurationNs is the stretch's length.
	DurationNs int64 `json:"duration_ns"`
}

type pauseKey struct {
	mac  [6]byte
	kind PauseKind
	prio int // -1 for 802.3x
}

type pauseStream struct {
	key        pauseKey
	stats      PauseStats
	open       bool
	start      int64 // stretch start
	startFrame int
	deadline   int64
	stretches  [][2]int64 // [start, end)
}

// flowPause is what the paused time of a flow needs: its span and its
// priority (flowState.pause).
type flowPause struct {
	first, last int64
	started     bool // first and last are set
	prio        int
	prioSet     bool // prio is a non-CNP packet's
	seen        bool
}

type pauseTruth struct {
	bps, threshold int64
	streams        map[pauseKey]*pauseStream
	storms         []PauseStorm
}

func newPauseTruth(pc *PauseConfig) *pauseTruth {
	return &pauseTruth{bps: pc.linkBps(), threshold: pc.StormThresholdNs,
		streams: map[pauseKey]*pauseStream{}}
}

// add records frame number frame, written at t (ns since the epoch).
func (pt *pauseTruth) add(frame int, t int64, data []byte) {
	if len(data) < 18 || binary.BigEndian.Uint16(data[12:]) != uint16(layers.EthernetTypeMACControl) {
		return
	}
	var mac [6]byte
	copy(mac[:], data[6:12])
	switch layers.MACControlOpcode(binary.BigEndian.Uint16(data[14:])) {
	case layers.MACControlOpcodePause:
		pt.step(pauseKey{mac, Pause8023x, -1}, frame, t, binary.BigEndian.Uint16(data[16:]))
	case layers.MACControlOpcodePFC:
		if len(data) < pauseFieldsEnd {
			return
		}
		vec := binary.BigEndian.Uint16(data[16:])
		for i := range 8 {
			if vec&(1<<i) != 0 {
				pt.step(pauseKey{mac, PausePFC, i}, frame, t, binary.BigEndian.Uint16(data[18+2*i:]))
			}
		}
	}
}

func (pt *pauseTruth) step(k pauseKey, frame int, t int64, q uint16) {
	s := pt.streams[k]
	if s == nil {
		s = &pauseStream{key: k}
		s.stats.SrcMAC, s.stats.Kind = net.HardwareAddr(k.mac[:]).String(), k.kind.String()
		if k.prio >= 0 {
			p := k.prio
			s.stats.Priority = &p
		}
		pt.streams[k] = s
	}
	s.stats.Frames++
	s.stats.Quanta += int64(q)
	if s.open && t > s.deadline {
		pt.end(s, s.deadline)
	}
	if q == 0 {
		s.stats.XONFrames++
		if s.open {
			pt.end(s, t)
		}
		return
	}
	s.stats.XOFFFrames++
	if !s.open {
		s.open, s.start, s.startFrame = true, t, frame
	}
	s.deadline = t + pauseDurationNs(q, pt.bps)
}

// end ends s's stretch at t.
func (pt *pauseTruth) end(s *pauseStream, t int64) {
	d := t - s.start
	s.open = false
	s.stretches = append(s.stretches, [2]int64{s.start, t})
	s.stats.PausedNs += d
	s.stats.LongestPauseNs = max(s.stats.LongestPauseNs, d)
	if d > pt.threshold {
		pt.storms = append(pt.storms, PauseStorm{SrcMAC: s.stats.SrcMAC, Kind: s.key.kind.String(), Priority: s.stats.Priority,
			StartFrame: s.startFrame, StartTimeNs: s.start, DurationNs: d})
	}
}

// framePriority is the priority of a RoCE frame: the VLAN PCP of an
// 802.1Q frame, else the DSCP's top 3 bits (DSCP>>3) of the IPv4 TOS,
// the IPv6 traffic class or (RoCE v1) the GRH traffic class.
func framePriority(b []byte) (int, bool) {
	if len(b) < 16 {
		return 0, false
	}
	switch binary.BigEndian.Uint16(b[12:]) {
	case 0x8100:
		return int(b[14] >> 5), true
	case 0x0800:
		return int(b[15] >> 5), true
	case 0x86DD, 0x8915: // IPv6, GRH: version 4 bits, traffic class 8
		return int(b[14]&0x0F) >> 1, true
	}
	return 0, false
}

// packet records a packet of the flow at t: the flow's span, and its
// priority, that of its first packet that is not a CNP (of its first CNP
// when it has only CNPs).
func (f *flowPause) packet(t int64, frame []byte, cnp bool) {
	if !f.started {
		f.first, f.started = t, true
	}
	f.first, f.last = min(f.first, t), max(f.last, t)
	if p, ok := framePriority(frame); ok && !f.prioSet && (!cnp || !f.seen) {
		f.prio, f.prioSet, f.seen = p, !cnp, true
	}
}

// finish ends the open stretches and writes the truth into tr: the
// statistics, the storms with their findings, the flows' paused time.
func (pt *pauseTruth) finish(tr *tracker) {
	keys := make([]pauseKey, 0, len(pt.streams))
	for k := range pt.streams {
		keys = append(keys, k)
	}
	cmpKey := func(a, b pauseKey) int {
		return cmp.Or(slices.Compare(a.mac[:], b.mac[:]), cmp.Compare(a.kind.String(), b.kind.String()), cmp.Compare(a.prio, b.prio))
	}
	slices.SortFunc(keys, cmpKey)
	t := &tr.truth
	t.Pause = []PauseStats{}
	for _, k := range keys {
		s := pt.streams[k]
		if s.open {
			pt.end(s, s.deadline)
		}
		t.Pause = append(t.Pause, s.stats)
	}
	slices.SortFunc(pt.storms, func(a, b PauseStorm) int {
		return cmp.Or(cmp.Compare(a.SrcMAC, b.SrcMAC), cmp.Compare(a.Kind, b.Kind), cmp.Compare(prioOrder(a.Priority), prioOrder(b.Priority)),
			cmp.Compare(a.StartFrame, b.StartFrame))
	})
	t.PauseStorms = pt.storms
	// One finding per sender, kind and priority, at its first storm (the
	// storms are sorted by them, then by frame).
	for i, s := range pt.storms {
		if i > 0 {
			if p := pt.storms[i-1]; p.SrcMAC == s.SrcMAC && p.Kind == s.Kind && prioOrder(p.Priority) == prioOrder(s.Priority) {
				continue
			}
		}
		tr.finding("pause_storm", "warning", s.StartFrame)
	}
	t.LinkSpeedBps, t.PauseStormThresholdNs = pt.bps, pt.threshold
	// The paused intervals of each priority, over all senders: PFC of
	// that priority, and 802.3x, which pauses every priority.
	var byPrio [8]intervals
	var stretches [][2]int64
	for p := range byPrio {
		stretches = stretches[:0]
		for _, k := range keys {
			if k.kind == Pause8023x || k.prio == p {
				stretches = append(stretches, pt.streams[k].stretches...)
			}
		}
		// By start, so that each add extends the set or appends to it.
		slices.SortFunc(stretches, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
		for _, r := range stretches {
			if r[1] > r[0] {
				byPrio[p].add(r[0], r[1]-1) // [start, end) is the closed [start, end-1]
			}
		}
	}
	for _, fs := range tr.order {
		if f := &fs.pause; f.seen {
			fs.f.PausedNs = byPrio[f.prio].overlap(f.first, f.last)
		}
	}
}

func prioOrder(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}
