package analyze

import (
	"fmt"
	"slices"
	"sort"
	"time"
)

// The frames a capture tool cut, in shards.
//
// classifyShort judges an RDMA frame shorter than its length fields by
// what came before it in the capture (the cut length, the longest frame
// captured whole); a shard judges with its own frames only, and
// replayCut judges again over all shards in frame order. A shard records
// its judgements as runs: frames alike (the same captured length and
// judgement) one after another in the shard, which a capture cut at one
// length makes one run a shard, however many frames it cut.

// shortRun is a run of RDMA frames of one shard shorter than their length
// fields that classifyShort judged alike.
type shortRun struct {
	first, last uint64    // its first and last frame
	t           time.Time // the first frame's time
	capLen      int
	kind        shortFrame
}

// noteShort records a frame classifyShort judged. A frame whose length
// field is past maxRDMAPacketLen is malformed whatever came before it:
// there is nothing to replay.
func (s *shardFeed) noteShort(p *Packet, capLen, n int, kind shortFrame) {
	if !s.replay || n > maxRDMAPacketLen {
		return
	}
	if k := len(s.short); k > 0 {
		if r := &s.short[k-1]; r.capLen == capLen && r.kind == kind {
			r.last = p.Frame
			return
		}
	}
	if s.room(len(s.short)) {
		s.short = append(s.short, shortRun{first: p.Frame, last: p.Frame, t: p.Time, capLen: capLen, kind: kind})
	}
}

// replayCut replays, in frame order over all shards, the decisions
// classifyShort took in each shard with only its own frames (its
// decisions hang on the capture's cut length and longest whole frame so
// far). It returns the capture's cut state, or an error when a shard
// decided otherwise than the capture-wide rule does. A run's frames are
// judged alike as long as nothing of what the rule reads changes: it is
// judged at its first frame, and again at every event of another shard
// (a frame captured whole, another run's first frame) before its last.
func replayCut(parts []*Report) (cutState, error) {
	type ev struct {
		frame uint64
		run   *shortRun
		whole int
	}
	var evs []ev
	for _, p := range parts {
		f := p.shard.feed
		for i := range f.short {
			evs = append(evs, ev{frame: f.short[i].first, run: &f.short[i]})
		}
		for _, w := range f.whole {
			evs = append(evs, ev{frame: w.frame, whole: w.capLen})
		}
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].frame < evs[j].frame })
	var s cutState
	var active []*shortRun // runs begun before the event and not ended
	for _, e := range evs {
		active = slices.DeleteFunc(active, func(r *shortRun) bool { return r.last < e.frame })
		if e.run == nil {
			s.noteWhole(e.frame, e.whole)
		} else {
			r := e.run
			if classifyShort(r.capLen, 0, &s) != r.kind {
				return cutState{}, cutDisagrees(r.first)
			}
			if r.kind == shortToolCut && s.first == 0 {
				s.first, s.capLen, s.time = r.first, r.capLen, r.t
			}
		}
		// The rule's state may have changed at e: the frames after it of
		// the runs under way must still be judged as their shards did.
		for _, r := range active {
			if classifyShort(r.capLen, 0, &s) != r.kind {
				return cutState{}, cutDisagrees(e.frame + 1)
			}
		}
		if e.run != nil {
			active = append(active, e.run)
		}
	}
	return s, nil
}

// cutDisagrees is replayCut's error for a frame judged otherwise by its
// shard than by the capture-wide rule.
func cutDisagrees(frame uint64) error {
	return fmt.Errorf("%w: frame %d (or the next of its shard) is judged cut by the capture tool in one shard and not in the capture, or the other way round", ErrNotDisjoint, frame)
}
