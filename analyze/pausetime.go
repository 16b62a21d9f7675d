package analyze

import (
	"cmp"
	"slices"
)

// The flows' priorities and paused time: a frame's 802.1p priority, and
// per priority a timeline of the pause stretches of every sender
// (pause.go counts them), which gives each flow the time its priority was
// paused while the flow was active.

// pauseTimeline is, per priority, when it was paused by any sender (its
// PFC stretches and every 802.3x stretch), merged and sorted, with the
// paused time before each interval.
type pauseTimeline struct {
	ivs  [8][]interval
	sums [8][]int64
}

// timeline builds the timeline of the track's stretches; nil without
// pause frames.
func (pt *pauseTrack) timeline() *pauseTimeline {
	if pt == nil {
		return nil
	}
	tl := &pauseTimeline{}
	for k, s := range pt.byKey {
		for p := range 8 {
			if k.prio < 0 || int(k.prio) == p {
				tl.ivs[p] = append(tl.ivs[p], s.stretches...)
			}
		}
	}
	for p := range 8 {
		ivs := tl.ivs[p]
		slices.SortFunc(ivs, func(x, y interval) int { return cmp.Compare(x.from, y.from) })
		var merged []interval
		for _, iv := range ivs {
			if n := len(merged); n > 0 && iv.from <= merged[n-1].to {
				merged[n-1].to = max(merged[n-1].to, iv.to)
				continue
			}
			merged = append(merged, iv)
		}
		sums := make([]int64, len(merged)+1)
		for i, iv := range merged {
			sums[i+1] = sums[i] + iv.to - iv.from
		}
		tl.ivs[p], tl.sums[p] = merged, sums
	}
	return tl
}

// overlap is how long priority prio was paused within [from, to].
func (tl *pauseTimeline) overlap(prio int, from, to int64) int64 {
	ivs, sums := tl.ivs[prio], tl.sums[prio]
	i, _ := slices.BinarySearchFunc(ivs, from, func(iv interval, t int64) int { return cmp.Compare(iv.to, t) }) // first ending at or after from
	j, _ := slices.BinarySearchFunc(ivs, to, func(iv interval, t int64) int { return cmp.Compare(iv.from, t) }) // first starting at or after to
	if i >= j {
		return 0
	}
	n := sums[j] - sums[i]
	n -= max(0, from-ivs[i].from)
	n -= max(0, ivs[j-1].to-to)
	return max(n, 0)
}

// apply gives a flow its priority and the time that priority was paused
// while the flow was active (its first to its last packet).
func (tl *pauseTimeline) apply(f *Flow) {
	if tl == nil || f.prio < 0 {
		return
	}
	p := int(f.prio)
	f.Priority = &p
	if n := tl.overlap(p, f.FirstTime.UnixNano(), f.LastTime.UnixNano()); n > 0 {
		f.PausedNs = &n
	}
}

// PausedTime is how long PFC or 802.3x PAUSE frames paused the flow's
// priority while it was active: PausedNs, or 0 when they never did; ok
// is false when the figure is unknown (Priority nil: the capture holds no
// pause frames, or the flow has no priority), where the JSON report
// omits both keys. Tables use it to tell "not paused" (0) from "not
// known" (null).
func (f *Flow) PausedTime() (ns int64, ok bool) {
	switch {
	case f.Priority == nil:
		return 0, false
	case f.PausedNs == nil:
		return 0, true
	}
	return *f.PausedNs, true
}
