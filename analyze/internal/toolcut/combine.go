package toolcut

import (
	"slices"
	"sort"
	"time"
)

// The frames a capture tool cut, in shards.
//
// Stage.Frame judges a short frame by what came before it in the capture
// (the cut length, the longest frame captured whole); a shard's stage
// judges with its own frames only, and Combine judges again over all
// shards in frame order. A shard records its judgements as runs: frames
// alike (the same captured length and verdict) one after another in the
// shard, which a capture cut at one length makes one run a shard, however
// many frames it cut.

// MaxEvents bounds the runs, and the frames captured whole, that a
// shard's stage keeps for Combine; past it, Overflow says that Combine
// cannot check the shard.
const MaxEvents = 1 << 20

// run is a run of frames of one shard, shorter than their length fields,
// that Stage.Frame judged alike.
type run struct {
	first, last uint64    // its first and last frame
	t           time.Time // the first frame's time
	capLen      int
	v           Verdict
}

// wholeRec is a frame captured whole, longer than every one before it in
// the shard.
type wholeRec struct {
	frame  uint64
	capLen int
}

// room says whether a list of n events may grow.
func (s *Stage) room(n int) bool {
	if n >= MaxEvents {
		s.overflow = true
		return false
	}
	return true
}

// noteShort records a short frame judged v.
func (s *Stage) noteShort(frame uint64, t time.Time, capLen int, v Verdict) {
	if k := len(s.short); k > 0 {
		if r := &s.short[k-1]; r.capLen == capLen && r.v == v {
			r.last = frame
			return
		}
	}
	if s.room(len(s.short)) {
		s.short = append(s.short, run{first: frame, last: frame, t: t, capLen: capLen, v: v})
	}
}

// Overflow says that s, a shard's stage, kept fewer events than it saw
// (MaxEvents): Combine cannot check it.
func (s *Stage) Overflow() bool { return s.overflow }

// Runs is how many runs of short frames s, a shard's stage, keeps.
func (s *Stage) Runs() int { return len(s.short) }

// Combine returns the stage of a capture of which parts are the shards'
// (Config.Shard; the only part of a capture is its own). It judges the
// shards' short frames again, in frame order over all shards: disagree is
// 0 when every shard judged its frames as the capture-wide rule does, and
// else a frame that a shard judged otherwise (or the frame before the
// next of its shard), of which the returned stage knows only how many
// frames the shards cut. A run's frames are judged alike as long as
// nothing of what the rule reads changes: it is judged at its first
// frame, and again at every event of another shard (a frame captured
// whole, another run's first frame) before its last.
func Combine(parts []*Stage) (s *Stage, disagree uint64) {
	if len(parts) == 1 {
		return parts[0], 0
	}
	type ev struct {
		frame uint64
		run   *run
		whole int
	}
	var evs []ev
	var n uint64
	for _, p := range parts {
		n += p.n
		for i := range p.short {
			evs = append(evs, ev{frame: p.short[i].first, run: &p.short[i]})
		}
		for _, w := range p.whole {
			evs = append(evs, ev{frame: w.frame, whole: w.capLen})
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].frame < evs[j].frame })
	s = &Stage{n: n}
	var active []*run // runs begun before the event and not ended
	for _, e := range evs {
		active = slices.DeleteFunc(active, func(r *run) bool { return r.last < e.frame })
		if e.run == nil {
			s.noteWhole(e.frame, e.whole)
		} else {
			r := e.run
			if s.judge(r.capLen, 0) != r.v {
				return &Stage{n: n}, r.first
			}
			if r.v == Cut && s.first == 0 {
				s.first, s.capLen, s.time = r.first, r.capLen, r.t
			}
		}
		// The rule's state may have changed at e: the frames after it of
		// the runs under way must still be judged as their shards did.
		for _, r := range active {
			if s.judge(r.capLen, 0) != r.v {
				return &Stage{n: n}, e.frame + 1
			}
		}
		if e.run != nil {
			active = append(active, e.run)
		}
	}
	return s, 0
}
