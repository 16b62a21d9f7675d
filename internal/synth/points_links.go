package synth

import (
	"bytes"
	"math"
	"slices"
)

// ptSeen is a transmission at a point, as the links' truth sees it.
type ptSeen struct {
	t       int64
	bad     bool // a payload bit flipped on the way
	ce      bool // marked CE by a hop (Point.ECN)
	present bool
}

// ptFlowKey names a flow of a multi-point scenario.
type ptFlowKey struct {
	src, dst string
	qp       uint32
}

// pointLinks computes the links' truth from what each point captured: for
// each flow, in the order of its first frame, each hop from upstream to
// downstream.
func pointLinks(r *pointsRun, sights [][]ptSight) []PointLinkTruth {
	n := len(r.pc.Points)
	at := r.seenAt(sights)
	order, byFlow := ptFlows(r.frames)
	var out []PointLinkTruth
	for _, key := range order {
		ks := byFlow[key]
		fwd := r.frames[ks[0]].fwd
		for h := 0; h+1 < n; h++ {
			from, to := h, h+1
			if !fwd {
				from, to = n-1-h, n-2-h
			}
			if l, ok := r.link(key, ks, at, from, to); ok {
				out = append(out, l)
			}
		}
	}
	return out
}

// seenAt returns, by point and by transmission, what the point captured.
func (r *pointsRun) seenAt(sights [][]ptSight) [][]ptSeen {
	at := make([][]ptSeen, len(r.pc.Points))
	for i := range at {
		at[i] = make([]ptSeen, len(r.frames))
		for _, s := range sights[i] {
			at[i][s.k] = ptSeen{t: s.t, bad: payloadFlipped(s, &r.frames[s.k]), ce: i >= r.markFrom(s.k), present: true}
		}
	}
	return at
}

// payloadFlipped reports whether sight s of the whole frame f has the
// payload bit WritePoints flips to corrupt a transmission.
func payloadFlipped(s ptSight, f *ptFrame) bool {
	if len(s.data) != f.orig {
		return false
	}
	return !bytes.Equal(s.data[len(s.data)-5:len(s.data)-4], f.data[len(s.data)-5:len(s.data)-4])
}

// ptFlows returns the flows of frames in the order of their first frame,
// and each flow's transmissions.
func ptFlows(frames []ptFrame) ([]ptFlowKey, map[ptFlowKey][]int) {
	var order []ptFlowKey
	byFlow := map[ptFlowKey][]int{}
	for k, f := range frames {
		key := ptFlowKey{f.info.Src, f.info.Dst, f.info.DestQP}
		if _, ok := byFlow[key]; !ok {
			order = append(order, key)
		}
		byFlow[key] = append(byFlow[key], k)
	}
	return order, byFlow
}

// link returns the truth of flow key (transmissions ks) on the hop from
// point from to point to; false when no transmission crossed it.
func (r *pointsRun) link(key ptFlowKey, ks []int, at [][]ptSeen, from, to int) (PointLinkTruth, bool) {
	l := PointLinkTruth{Src: key.src, Dst: key.dst, DestQP: key.qp, From: r.pc.Points[from].Name, To: r.pc.Points[to].Name,
		LostPSNs: []uint32{}, CorruptedPSNs: []uint32{}}
	var delays []int64
	var arrivals []int // transmissions in arrival order at to
	for _, k := range ks {
		a, b := at[from][k], at[to][k]
		f := &r.frames[k]
		switch {
		case a.present && b.present:
			l.Matched++
			delays = append(delays, b.t-a.t)
			arrivals = append(arrivals, k)
			if !a.bad && b.bad && len(f.data) == f.orig {
				l.Corrupted++
				l.CorruptedPSNs = append(l.CorruptedPSNs, f.info.PSN)
			}
			if !a.ce && b.ce {
				l.ECNCEAdded++
			}
		case a.present && r.tapMissed(k, to):
			l.NotCaptured++
		case a.present:
			l.Lost++
			l.LostPSNs = append(l.LostPSNs, f.info.PSN)
		}
	}
	if l.Matched == 0 {
		return l, false
	}
	l.Reordered = reordered(arrivals, at[from], at[to])
	l.setDelays(delays)
	return l, true
}

// tapMissed reports whether point to's capture missed transmission k
// (Point.TapDrop) that the network delivered to it.
func (r *pointsRun) tapMissed(k, to int) bool {
	psn := r.frames[k].info.PSN
	return r.firstReq[k] && r.drops[to][psn] && !(r.nak[psn] && to >= r.pc.LossHop)
}

// reordered sorts arrivals by their time at the downstream point and
// counts those that left the upstream point before one arrived earlier.
func reordered(arrivals []int, from, to []ptSeen) int {
	slices.SortStableFunc(arrivals, func(x, y int) int { return int(to[x].t - to[y].t) })
	n := 0
	maxFrom := int64(math.MinInt64)
	for _, k := range arrivals {
		if from[k].t < maxFrom {
			n++
		} else {
			maxFrom = from[k].t
		}
	}
	return n
}

// setDelays sorts the one-way delays (at least one) and sets their
// minimum, median, 99th percentile (nearest rank) and maximum.
func (l *PointLinkTruth) setDelays(delays []int64) {
	slices.Sort(delays)
	rank := func(q float64) int64 {
		return delays[max(0, min(len(delays)-1, int(math.Ceil(q*float64(len(delays))))-1))]
	}
	l.OneWayDelayNs.Min, l.OneWayDelayNs.Median, l.OneWayDelayNs.P99, l.OneWayDelayNs.Max = delays[0], rank(0.5), rank(0.99), delays[len(delays)-1]
}
