package points

import "slices"

// path is a flow's capture points in the order its transmissions pass
// them, upstream first, with an accumulator for each two points next to
// each other (links[k]: pts[k] and pts[k+1]) and for each two with one
// point between them (skips[k]: pts[k] and pts[k+2]). The report shows
// only consecutive points, so the Matcher's work and memory per
// transmission grow with the points that see the flow, not with their
// pairs; the skips let the order be mended (two points next to each
// other swapped, see order) without losing what the new neighbours
// shared, and with three points or fewer they make every pair.
//
// A point joins the path with the first of the flow's transmissions that
// it sees after a point already on it (see Matcher.place). With three
// points or fewer the path holds them all from the start, in file order:
// every pair is kept, and the report orders them (see order).
type path struct {
	pts    []uint8
	links  []*pairAcc
	skips  []*pairAcc
	at     []int8 // position in pts by point; -1 while off the path
	placed uint64 // the points on the path
}

// newPath returns the path of a new flow among n points.
func newPath(n int) path {
	p := path{at: make([]int8, n)}
	for i := range p.at {
		p.at[i] = -1
	}
	if n <= 3 {
		p.set([]uint8{0, 1, 2}[:n], n)
	}
	return p
}

// on says whether point q is on the path.
func (p *path) on(q int) bool { return p.placed>>q&1 != 0 }

// insert puts point q at position k (0 … len(pts)).
func (p *path) insert(q, k, n int) {
	p.set(slices.Insert(slices.Clone(p.pts), k, uint8(q)), n)
}

// set makes pts (the path's points, and maybe more) the path: the pairs
// that stay within two positions of each other keep their accumulators,
// the others get new ones, and pairs further apart are dropped.
func (p *path) set(pts []uint8, n int) {
	keep := func(a, b uint8) *pairAcc {
		if acc := p.acc(int(a), int(b)); acc != nil {
			return acc
		}
		return newLink(n, int(a), int(b))
	}
	links := make([]*pairAcc, max(len(pts)-1, 0))
	for k := range links {
		links[k] = keep(pts[k], pts[k+1])
	}
	skips := make([]*pairAcc, max(len(pts)-2, 0))
	for k := range skips {
		skips[k] = keep(pts[k], pts[k+2])
	}
	for k, q := range pts {
		p.at[q] = int8(k)
		p.placed |= 1 << q
	}
	p.pts, p.links, p.skips = pts, links, skips
}

// newLink returns the accumulator of points a and b of n (either order);
// its sampling seed is the pair's own, whatever the path.
func newLink(n, a, b int) *pairAcc {
	i, j := min(a, b), max(a, b)
	k := i*(2*n-i-1)/2 + (j - i - 1) // the pair's index among all pairs i < j
	return &pairAcc{i: i, j: j, delays: reservoir{rng: uint64(k)*0x9e3779b97f4a7c15 + 1}}
}

// acc returns the accumulator of points a and b, nil unless both are on
// the path within two positions of each other.
func (p *path) acc(a, b int) *pairAcc {
	ka, kb := int(p.at[a]), int(p.at[b])
	if ka < 0 || kb < 0 {
		return nil
	}
	switch lo := min(ka, kb); max(ka, kb) - lo {
	case 1:
		return p.links[lo]
	case 2:
		return p.skips[lo]
	}
	return nil
}

// expect is the flow's recent delay from point a to point b (0 unknown,
// or off the path): the pair's own average when the path keeps the pair,
// else the sum of the links' along the path between them.
func (p *path) expect(a, b int) int64 {
	if a == b {
		return 0
	}
	if acc := p.acc(a, b); acc != nil {
		return acc.ewmaFrom(a)
	}
	ka, kb := int(p.at[a]), int(p.at[b])
	if ka < 0 || kb < 0 {
		return 0
	}
	var d int64
	for k := min(ka, kb); k < max(ka, kb); k++ {
		d += p.links[k].ewmaFrom(int(p.pts[k]))
	}
	if ka > kb {
		d = -d
	}
	return d
}

// ewmaFrom is the pair's recent delay from its point from to the other
// (0 unknown).
func (a *pairAcc) ewmaFrom(from int) int64 {
	switch {
	case !a.hasEWMA:
		return 0
	case from == a.i:
		return a.ewma
	}
	return -a.ewma
}
