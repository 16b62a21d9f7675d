package toolcut

import "time"

// MaxPacketLen is the longest packet a network header of an RDMA frame
// can declare: the largest IB payload (4,096 bytes, the largest path MTU)
// and 256 bytes of headers (IPv6 40 + UDP 8 + BTH 12 + extension headers
// 28 + ICRC 4, or LRH 8 + GRH 40 + … + VCRC 2, with room to spare). A
// longer length field is a lie, never a cut.
const MaxPacketLen = 4096 + 256

// Verdict is what Stage.Frame makes of a frame.
type Verdict uint8

const (
	// Cut: the capture tool cut the frame without recording its length.
	Cut Verdict = iota
	// Lie: the frame's length fields lie (it is malformed).
	Lie
	// Whole: the frame's length fields fit what was captured, or its
	// record says it was cut.
	Whole
)

// Config configures a Stage.
type Config struct {
	// Shard: the stage judges one shard of a capture among others, and
	// records its judgements for Combine. The only stage of a capture
	// judges it whole and records nothing.
	Shard bool
}

// Stage judges the RDMA frames of a capture, or of a shard of it, that
// are shorter than their length fields.
type Stage struct {
	shard bool
	n     uint64 // frames cut

	first  uint64 // the first frame cut (0: none)
	capLen int    // the cut length: the captured length of the first frame cut
	time   time.Time
	// maxWhole is the longest captured length of the RDMA frames that were
	// not shorter than their length fields.
	maxWhole int
	// broken is the first frame captured longer than the cut length (0:
	// none), brokenLen its captured length.
	broken    uint64
	brokenLen int

	short    []run      // Config.Shard: the frames judged, as runs
	whole    []wholeRec // Config.Shard: each frame captured whole longer than all before it
	overflow bool       // more than MaxEvents of either
}

// New returns a Stage.
func New(c Config) *Stage { return &Stage{shard: c.Shard} }

// Frame judges RDMA frame number frame of time t, which decoded: capLen
// bytes captured, recorded bytes long by its record (its original
// length), declared bytes long by its length fields (the outermost
// network header's end), packet bytes long by its innermost network
// header. It is Whole unless it was recorded whole (recorded = capLen)
// and is shorter than declared; such a frame is
//
//   - a Lie when packet is past MaxPacketLen;
//   - else Cut when it is the first such frame, unless an RDMA frame
//     before it was captured longer: its captured length becomes the
//     capture's cut length;
//   - a later one is Cut when its captured length is the cut length and
//     no RDMA frame so far was captured longer than that; else a Lie.
//
// Once an RDMA frame longer than the cut length has been seen, no tool
// cut the capture at that length: every short frame after it is a Lie,
// and Facts names that frame (Broken) for those cut before it (they stay
// counted as cut: a streaming analyzer has already accounted them).
func (s *Stage) Frame(frame uint64, t time.Time, capLen, recorded, declared, packet int) Verdict {
	if recorded != capLen || declared <= capLen {
		if s.shard && capLen > s.maxWhole && s.room(len(s.whole)) {
			s.whole = append(s.whole, wholeRec{frame, capLen})
		}
		s.noteWhole(frame, capLen)
		return Whole
	}
	v := s.judge(capLen, packet)
	if s.shard && packet <= MaxPacketLen { // past it, a Lie whatever came before
		s.noteShort(frame, t, capLen, v)
	}
	if v == Cut {
		s.n++
		if s.first == 0 {
			s.first, s.capLen, s.time = frame, capLen, t
		}
	}
	return v
}

// judge is the rule of Frame for a short frame of capLen bytes whose
// innermost network header declares packet bytes: the one place that
// decides it.
func (s *Stage) judge(capLen, packet int) Verdict {
	switch {
	case packet > MaxPacketLen:
		return Lie
	case s.maxWhole > capLen:
		return Lie
	case s.capLen != 0 && capLen != s.capLen:
		return Lie
	}
	return Cut
}

// noteWhole records an RDMA frame whose length fields fit what was
// captured (or whose record says it was cut).
func (s *Stage) noteWhole(frame uint64, capLen int) {
	s.maxWhole = max(s.maxWhole, capLen)
	if s.capLen != 0 && capLen > s.capLen && s.broken == 0 {
		s.broken, s.brokenLen = frame, capLen
	}
}

// Facts are what a Stage found.
type Facts struct {
	// Frames is how many frames the capture tool cut (Cut).
	Frames uint64
	// First is the first of them (0: none), Time its time, Len its
	// captured length: the cut length.
	First uint64
	Time  time.Time
	Len   int
	// Broken is the first frame captured whole longer than the cut length
	// (0: none), BrokenLen its captured length: no tool cut the capture at
	// Len bytes.
	Broken    uint64
	BrokenLen int
}

// Facts returns what s found so far.
func (s *Stage) Facts() Facts {
	return Facts{Frames: s.n, First: s.first, Time: s.time, Len: s.capLen, Broken: s.broken, BrokenLen: s.brokenLen}
}

// Snapshot returns s as a report sees it; s may be fed on.
func (s *Stage) Snapshot() *Stage {
	c := *s
	return &c
}

// String names v.
func (v Verdict) String() string {
	switch v {
	case Cut:
		return "cut"
	case Lie:
		return "lie"
	case Whole:
		return "whole"
	}
	return "verdict?"
}
