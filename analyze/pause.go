package analyze

import (
	"bytes"
	"cmp"
	"fmt"
	"net"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/layers"
)

// Pause frames: IEEE 802.1Qbb Priority Flow Control and 802.3x PAUSE
// (MAC Control, EtherType 0x8808), the back-pressure of a lossless RoCE
// fabric.
//
// Each sender (source MAC) and priority (802.3x: every priority at once)
// is paused from the arrival of an XOFF (quanta > 0) until quanta × 512
// bit times later at the link speed (Options.LinkSpeed); a later frame of
// the same sender and priority replaces that deadline (shorter or
// longer), and an XON (quanta 0) ends the pause at once. The frames of a
// sender and priority arriving while it is paused make one stretch; a
// stretch still open at the end of the capture ends at its deadline. The
// paused time is the sum of the stretches (the union of the pause
// intervals), and a stretch longer than Options.PauseStorm is a storm:
// one pause_storm finding per sender and priority, at the XOFF that began
// its first storm. A stretch that ends before it began (the capture's
// clock went back between its XOFF and its end: wentBack) measures
// nothing, like a NIC time measured across it: it adds no paused time
// and no stretch, never a negative one. The flows' priorities and paused time are
// pausetime.go's.

// Defaults of the pause options.
const (
	DefaultLinkSpeed  = 100e9                  // bits per second
	DefaultPauseStorm = 200 * time.Millisecond // PFC watchdogs' common detection time
)

// Pause is what one sender's pause frames did to one priority (Report.Pause).
type Pause struct {
	// SrcMAC is the sender, the port that asked its link partner to pause.
	SrcMAC string `json:"src_mac"`
	// Kind is "pfc" (802.1Qbb) or "802.3x" (PAUSE, every priority).
	Kind string `json:"kind"`
	// Priority is the priority paused (0–7); null for 802.3x.
	Priority *int `json:"priority"`
	// Frames counts the frames of the sender for the priority (a PFC
	// frame counts for the priorities its class-enable vector names);
	// XOFFFrames those with quanta > 0, XONFrames those with quanta 0.
	Frames     uint64 `json:"frames"`
	XOFFFrames uint64 `json:"xoff_frames"`
	XONFrames  uint64 `json:"xon_frames"`
	// Quanta sums the pause times asked for, in quanta of 512 bit times.
	Quanta uint64 `json:"quanta"`
	// PausedNs is the time the priority was paused (the union of the
	// pause intervals), LongestPauseNs the longest stretch without a
	// break.
	PausedNs       int64 `json:"paused_ns"`
	LongestPauseNs int64 `json:"longest_pause_ns"`
}

// pauseKey is one sender's priority: prio -1 for 802.3x.
type pauseKey struct {
	mac  [6]byte
	prio int8
}

// interval is a stretch of pause, in Unix ns.
type interval struct{ from, to int64 }

// pauseState is one sender's priority as frames arrive.
type pauseState struct {
	Pause
	open            bool
	start, deadline int64     // the open stretch
	startFrame      uint64    // the XOFF that began it
	startT          time.Time // its time, as the capture gave it
	stretches       []interval
	storm           storm // the first stretch longer than the storm threshold
}

// storm is the first storm of a sender's priority, and how many there were.
type storm struct {
	frame    uint64
	at       time.Time
	from, to int64
	count    int
}

// maxPauseKeys bounds the senders and priorities followed (the rows of
// Report.Pause); the frames of others are counted in
// Capture.PauseFramesUnlisted. maxPauseStretches bounds the stretches kept
// for the flows' paused times, all senders and priorities together (16
// bytes each); beyond, a new stretch is joined to the last one its sender
// and priority kept (the flows' figures then over-count the gaps between
// them). A hostile capture, a new source MAC in every pause frame, thus
// costs at most a few megabytes.
const (
	maxPauseKeys      = 1024
	maxPauseStretches = 1 << 18
)

// pauseTrack is the pause frames of a capture.
type pauseTrack struct {
	byKey     map[pauseKey]*pauseState
	quantum   float64 // ns per quantum at the link speed
	stormNs   int64
	stretches int    // kept, all keys together
	unlisted  uint64 // frames of senders and priorities beyond maxPauseKeys
}

func newPauseTrack(o Options) pauseTrack {
	return pauseTrack{quantum: layers.QuantumBits * 1e9 / o.LinkSpeed, stormNs: int64(o.PauseStorm)}
}

// frame accounts a MAC Control frame from src at t (Unix ns).
func (pt *pauseTrack) frame(frame uint64, at time.Time, src net.HardwareAddr, mc *layers.MACControl) {
	var mac [6]byte
	copy(mac[:], src)
	listed := true
	switch mc.Opcode {
	case layers.MACControlOpcodePause:
		if s := pt.state(mac, -1); s != nil {
			s.note(pt, frame, at, mc.PauseTime)
		} else {
			listed = false
		}
	case layers.MACControlOpcodePFC:
		for i := range 8 {
			if mc.ClassEnableVector&(1<<i) == 0 {
				continue
			}
			if s := pt.state(mac, int8(i)); s != nil {
				s.note(pt, frame, at, mc.PauseTimes[i])
			} else {
				listed = false
			}
		}
	}
	if !listed {
		pt.unlisted++
	}
}

// state returns the state of a sender's priority (-1: 802.3x), nil when
// it is new and maxPauseKeys are followed already.
func (pt *pauseTrack) state(mac [6]byte, prio int8) *pauseState {
	if pt.byKey == nil {
		pt.byKey = make(map[pauseKey]*pauseState)
	}
	k := pauseKey{mac, prio}
	s := pt.byKey[k]
	if s == nil {
		if len(pt.byKey) >= maxPauseKeys {
			return nil
		}
		s = &pauseState{}
		s.SrcMAC, s.Kind = net.HardwareAddr(mac[:]).String(), "802.3x"
		if prio >= 0 {
			p := int(prio)
			s.Kind, s.Priority = "pfc", &p
		}
		pt.byKey[k] = s
	}
	return s
}

// note accounts one frame of quanta q at t.
func (s *pauseState) note(pt *pauseTrack, frame uint64, at time.Time, q uint16) {
	t := at.UnixNano()
	s.Frames++
	if s.open && t > s.deadline {
		s.close(pt, s.deadline)
	}
	if q == 0 {
		s.XONFrames++
		if s.open {
			s.close(pt, t)
		}
		return
	}
	s.XOFFFrames++
	s.Quanta += uint64(q)
	if !s.open {
		s.open, s.start, s.startFrame, s.startT = true, t, frame, at
	}
	s.deadline = t + int64(float64(q)*pt.quantum)
}

// close ends the open stretch at end.
func (s *pauseState) close(pt *pauseTrack, end int64) {
	s.open = false
	if wentBack(s.start, end) {
		return
	}
	s.account(pt, interval{s.start, end}, s.startFrame, s.startT)
}

// account adds a finished stretch that began at frame.
func (s *pauseState) account(pt *pauseTrack, iv interval, frame uint64, at time.Time) {
	n := iv.to - iv.from
	s.PausedNs += n
	s.LongestPauseNs = max(s.LongestPauseNs, n)
	if n > pt.stormNs {
		if s.storm.count == 0 {
			s.storm = storm{frame: frame, at: at, from: iv.from, to: iv.to}
		}
		s.storm.count++
	}
	s.keep(pt, iv)
}

// keep keeps a stretch for the flows' paused times, within
// maxPauseStretches.
func (s *pauseState) keep(pt *pauseTrack, iv interval) {
	if pt.stretches >= maxPauseStretches && len(s.stretches) > 0 {
		last := &s.stretches[len(s.stretches)-1]
		last.from, last.to = min(last.from, iv.from), max(last.to, iv.to)
		return
	}
	s.stretches = append(s.stretches, iv)
	pt.stretches++
}

// snapshot is the track as the report sees it: every open stretch ended
// at its deadline, the live track left as it is (the Analyzer may be fed
// on).
func (pt *pauseTrack) snapshot() *pauseTrack {
	if len(pt.byKey) == 0 {
		return nil
	}
	out := &pauseTrack{byKey: make(map[pauseKey]*pauseState, len(pt.byKey)), quantum: pt.quantum, stormNs: pt.stormNs, stretches: pt.stretches, unlisted: pt.unlisted}
	for k, s := range pt.byKey {
		c := *s
		c.stretches = slices.Clone(s.stretches)
		if c.open {
			c.close(out, c.deadline)
		}
		out.byKey[k] = &c
	}
	return out
}

// add merges o (another part's snapshot) into pt, within pt's bounds.
func (pt *pauseTrack) add(o *pauseTrack) {
	pt.unlisted += o.unlisted
	for _, k := range o.keys() {
		s := o.byKey[k]
		d := pt.byKey[k]
		if d == nil && len(pt.byKey) >= maxPauseKeys {
			pt.unlisted += s.Frames
			continue
		}
		if d == nil {
			c := *s
			c.stretches = nil
			for _, iv := range s.stretches {
				c.keep(pt, iv)
			}
			pt.byKey[k] = &c
			continue
		}
		d.Frames += s.Frames
		d.XOFFFrames += s.XOFFFrames
		d.XONFrames += s.XONFrames
		d.Quanta += s.Quanta
		d.PausedNs += s.PausedNs
		d.LongestPauseNs = max(d.LongestPauseNs, s.LongestPauseNs)
		for _, iv := range s.stretches {
			d.keep(pt, iv)
		}
		if s.storm.count > 0 && (d.storm.count == 0 || s.storm.frame < d.storm.frame) {
			d.storm.frame, d.storm.at, d.storm.from, d.storm.to = s.storm.frame, s.storm.at, s.storm.from, s.storm.to
		}
		d.storm.count += s.storm.count
	}
}

// keys are the senders and priorities of pt in order, so that merges
// that reach the bounds keep the same ones whatever the map's order.
func (pt *pauseTrack) keys() []pauseKey {
	ks := make([]pauseKey, 0, len(pt.byKey))
	for k := range pt.byKey {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(x, y pauseKey) int {
		return cmp.Or(bytes.Compare(x.mac[:], y.mac[:]), cmp.Compare(x.prio, y.prio))
	})
	return ks
}

// stats lists the pause of each sender and priority, by MAC, kind and
// priority.
func (pt *pauseTrack) stats() []Pause {
	if pt == nil {
		return nil
	}
	out := make([]Pause, 0, len(pt.byKey))
	for _, s := range pt.byKey {
		out = append(out, s.Pause)
	}
	slices.SortFunc(out, func(x, y Pause) int {
		return cmp.Or(cmp.Compare(x.SrcMAC, y.SrcMAC), cmp.Compare(x.Kind, y.Kind), cmp.Compare(prioOr(x.Priority), prioOr(y.Priority)))
	})
	return out
}

func prioOr(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// findings are the pause_storm findings, one per sender and priority.
func (pt *pauseTrack) findings(file string) []Finding {
	if pt == nil {
		return nil
	}
	var out []Finding
	for _, s := range pt.byKey {
		st := s.storm
		if st.count == 0 {
			continue
		}
		what := "every priority (802.3x PAUSE)"
		if s.Priority != nil {
			what = fmt.Sprintf("priority %d", *s.Priority)
		}
		more := ""
		if st.count > 1 {
			more = fmt.Sprintf("; %d such stretches, the longest %s", st.count, time.Duration(s.LongestPauseNs))
		}
		out = append(out, Finding{Frame: st.frame, Time: st.at, Kind: KindPauseStorm, Severity: SeverityWarning, File: file,
			Detail: fmt.Sprintf("pause storm: %s paused by %s without a break for %s, beyond %s (--pause-storm)%s", what, s.SrcMAC, time.Duration(st.to-st.from), time.Duration(pt.stormNs), more)})
	}
	slices.SortFunc(out, func(x, y Finding) int { return cmp.Or(cmp.Compare(x.Frame, y.Frame), cmp.Compare(x.Detail, y.Detail)) })
	return out
}

// addPause merges o's pause frames into r's (Report.Merge, the combined
// report of shards): their figures and the flows' paused times.
func (r *Report) addPause(o *Report) {
	if o.pause == nil {
		return
	}
	if r.pause == nil {
		r.pause = &pauseTrack{byKey: map[pauseKey]*pauseState{}, quantum: o.pause.quantum, stormNs: o.pause.stormNs}
	}
	r.pause.add(o.pause)
	r.Pause = r.pause.stats()
	r.Capture.LinkSpeedBps, r.Capture.PauseFramesUnlisted = o.Capture.LinkSpeedBps, r.pause.unlisted
}
