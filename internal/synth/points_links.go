package synth

import (
	"bytes"
	"math"
	"slices"
)

// pointLinks computes the links' truth from what each point captured.
func pointLinks(pc PointsConfig, frames []ptFrame, sights [][]ptSight, firstReq map[int]bool, drops []map[uint32]bool, nak map[uint32]bool) []PointLinkTruth {
	n := len(pc.Points)
	type seen struct {
		t       int64
		bad     bool
		present bool
	}
	at := make([][]seen, n) // by point, by transmission
	for i := range n {
		at[i] = make([]seen, len(frames))
		for _, s := range sights[i] {
			bad := false
			if len(s.data) == frames[s.k].orig {
				bad = !bytes.Equal(s.data[len(s.data)-5:len(s.data)-4], frames[s.k].data[len(s.data)-5:len(s.data)-4])
			}
			at[i][s.k] = seen{t: s.t, bad: bad, present: true}
		}
	}
	type fk struct {
		src, dst string
		qp       uint32
	}
	var order []fk
	byFlow := map[fk][]int{}
	for k, f := range frames {
		key := fk{f.info.Src, f.info.Dst, f.info.DestQP}
		if _, ok := byFlow[key]; !ok {
			order = append(order, key)
		}
		byFlow[key] = append(byFlow[key], k)
	}
	var out []PointLinkTruth
	for _, key := range order {
		ks := byFlow[key]
		fwd := frames[ks[0]].fwd
		for h := 0; h+1 < n; h++ {
			from, to := h, h+1
			if !fwd {
				from, to = n-1-h, n-2-h
			}
			l := PointLinkTruth{Src: key.src, Dst: key.dst, DestQP: key.qp, From: pc.Points[from].Name, To: pc.Points[to].Name,
				LostPSNs: []uint32{}, CorruptedPSNs: []uint32{}}
			var delays []int64
			var arrivals []int // transmissions in arrival order at to
			for _, k := range ks {
				a, b := at[from][k], at[to][k]
				switch {
				case a.present && b.present:
					l.Matched++
					delays = append(delays, b.t-a.t)
					arrivals = append(arrivals, k)
					if !a.bad && b.bad && len(frames[k].data) == frames[k].orig {
						l.Corrupted++
						l.CorruptedPSNs = append(l.CorruptedPSNs, frames[k].info.PSN)
					}
				case a.present && firstReq[k] && drops[to][frames[k].info.PSN] && !(nak[frames[k].info.PSN] && to >= pc.LossHop):
					l.NotCaptured++
				case a.present:
					l.Lost++
					l.LostPSNs = append(l.LostPSNs, frames[k].info.PSN)
				}
			}
			if l.Matched == 0 {
				continue
			}
			slices.SortStableFunc(arrivals, func(x, y int) int { return int(at[to][x].t - at[to][y].t) })
			maxFrom := int64(math.MinInt64)
			for _, k := range arrivals {
				if at[from][k].t < maxFrom {
					l.Reordered++
				} else {
					maxFrom = at[from][k].t
				}
			}
			slices.Sort(delays)
			rank := func(q float64) int64 {
				return delays[max(0, min(len(delays)-1, int(math.Ceil(q*float64(len(delays))))-1))]
			}
			l.OneWayDelayNs.Min, l.OneWayDelayNs.Median, l.OneWayDelayNs.P99, l.OneWayDelayNs.Max = delays[0], rank(0.5), rank(0.99), delays[len(delays)-1]
			out = append(out, l)
		}
	}
	return out
}
