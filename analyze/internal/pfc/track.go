package pfc

import (
	"net"
	"time"

	"github.com/roce-dissect/roce-dissect/layers"
)

// Config is what the stage needs of the analyzer's options.
type Config struct {
	// LinkSpeed is the link speed in bits per second at which pause
	// quanta (512 bit times) are timed; it must be positive.
	LinkSpeed float64
	// Storm is how long a priority may stay paused without a break
	// before it is a storm.
	Storm time.Duration
}

// Pause is what one sender's pause frames did to one priority
// (analyze.Report.Pause).
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

// MaxKeys bounds the senders and priorities followed (the rows of
// Stats); the frames of others are counted by Unlisted. MaxStretches
// bounds the stretches kept for the Timeline, all senders and priorities
// together (16 bytes each); beyond, a new stretch is joined to the last
// one its sender and priority kept (the timeline then over-counts the
// gaps between them). A hostile capture, a new source MAC in every pause
// frame, thus costs at most a few megabytes.
const (
	MaxKeys      = 1024
	MaxStretches = 1 << 18
)

// key is one sender's priority: prio -1 for 802.3x.
type key struct {
	mac  [6]byte
	prio int8
}

// interval is a stretch of pause, in Unix ns.
type interval struct{ from, to int64 }

// state is one sender's priority as frames arrive.
type state struct {
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

// Track is the pause frames of a capture, or of a part of one: the
// stage's state. Its zero value is not ready for use: see New.
type Track struct {
	cfg       Config
	byKey     map[key]*state
	quantum   float64 // ns per quantum at the link speed
	stretches int     // kept, all keys together
	unlisted  uint64  // frames of senders and priorities beyond MaxKeys
}

// New returns an empty Track timed by c.
func New(c Config) Track {
	return Track{cfg: c, quantum: layers.QuantumBits * 1e9 / c.LinkSpeed}
}

// Config is the configuration t was made with.
func (t *Track) Config() Config { return t.cfg }

// Frame accounts MAC Control frame number frame, from src at at. Frames
// of other opcodes than PAUSE and PFC count for nothing.
func (t *Track) Frame(frame uint64, at time.Time, src net.HardwareAddr, mc *layers.MACControl) {
	var mac [6]byte
	copy(mac[:], src)
	listed := true
	switch mc.Opcode {
	case layers.MACControlOpcodePause:
		if s := t.state(mac, -1); s != nil {
			s.note(t, frame, at, mc.PauseTime)
		} else {
			listed = false
		}
	case layers.MACControlOpcodePFC:
		for i := range 8 {
			if mc.ClassEnableVector&(1<<i) == 0 {
				continue
			}
			if s := t.state(mac, int8(i)); s != nil {
				s.note(t, frame, at, mc.PauseTimes[i])
			} else {
				listed = false
			}
		}
	}
	if !listed {
		t.unlisted++
	}
}

// state returns the state of a sender's priority (-1: 802.3x), nil when
// it is new and MaxKeys are followed already.
func (t *Track) state(mac [6]byte, prio int8) *state {
	if t.byKey == nil {
		t.byKey = make(map[key]*state)
	}
	k := key{mac, prio}
	s := t.byKey[k]
	if s == nil {
		if len(t.byKey) >= MaxKeys {
			return nil
		}
		s = &state{}
		s.SrcMAC, s.Kind = net.HardwareAddr(mac[:]).String(), "802.3x"
		if prio >= 0 {
			p := int(prio)
			s.Kind, s.Priority = "pfc", &p
		}
		t.byKey[k] = s
	}
	return s
}

// note accounts one frame of quanta q at at.
func (s *state) note(t *Track, frame uint64, at time.Time, q uint16) {
	now := at.UnixNano()
	s.Frames++
	if s.open && now > s.deadline {
		s.close(t, s.deadline)
	}
	if q == 0 {
		s.XONFrames++
		if s.open {
			s.close(t, now)
		}
		return
	}
	s.XOFFFrames++
	s.Quanta += uint64(q)
	if !s.open {
		s.open, s.start, s.startFrame, s.startT = true, now, frame, at
	}
	s.deadline = now + int64(float64(q)*t.quantum)
}

// close ends the open stretch at end.
func (s *state) close(t *Track, end int64) {
	s.open = false
	if end < s.start {
		return // the capture's clock went back: the stretch measures nothing
	}
	s.account(t, interval{s.start, end}, s.startFrame, s.startT)
}

// account adds a finished stretch that began at frame.
func (s *state) account(t *Track, iv interval, frame uint64, at time.Time) {
	n := iv.to - iv.from
	s.PausedNs += n
	s.LongestPauseNs = max(s.LongestPauseNs, n)
	if n > int64(t.cfg.Storm) {
		if s.storm.count == 0 {
			s.storm = storm{frame: frame, at: at, from: iv.from, to: iv.to}
		}
		s.storm.count++
	}
	s.keep(t, iv)
}

// keep keeps a stretch for the timeline, within MaxStretches.
func (s *state) keep(t *Track, iv interval) {
	if t.stretches >= MaxStretches && len(s.stretches) > 0 {
		last := &s.stretches[len(s.stretches)-1]
		last.from, last.to = min(last.from, iv.from), max(last.to, iv.to)
		return
	}
	s.stretches = append(s.stretches, iv)
	t.stretches++
}
