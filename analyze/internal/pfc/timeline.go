package pfc

import (
	"cmp"
	"slices"
)

// Timeline is, per priority, when it was paused by any sender (its PFC
// stretches and every 802.3x stretch), merged and sorted, with the
// paused time before each interval.
type Timeline struct {
	ivs  [8][]interval
	sums [8][]int64
}

// Timeline builds the timeline of t's stretches; nil for a nil t.
func (t *Track) Timeline() *Timeline {
	if t == nil {
		return nil
	}
	tl := &Timeline{}
	for k, s := range t.byKey {
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

// Overlap is how long priority prio (0–7) was paused within [from, to]
// (Unix ns); never negative.
func (tl *Timeline) Overlap(prio int, from, to int64) int64 {
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
