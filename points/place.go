package points

import (
	"cmp"
	"math/bits"
	"slices"
)

// place puts on fs's path the points of e not on it yet, now that file
// (whose bit is in seen) sees e at t: file after the point that saw e
// last, or, file being on the path, the points that saw e before it
// before file, in the order they saw it. A point goes past the points
// next to it that did not see e and whose delay from the point that did
// (by the links' averages) is shorter than its own: a point that missed
// the transmission does not hide where the other one stands.
func (m *Matcher) place(fs *flowState, e *entry, slot uint64, file int, seen uint64, t int64) {
	p := &fs.path
	base := int(slot) * m.n
	switch {
	case !p.on(file) && e.seen&p.placed != 0:
		// Every point that saw e is on the path: the first of them
		// placed the ones before it, and each after it placed itself.
		last := int(e.last)
		k := int(p.at[last])
		if k < 0 {
			return
		}
		d, sum := t-m.times[base+last], int64(0)
		for k++; k < len(p.pts) && seen>>p.pts[k]&1 == 0; k++ {
			if sum += p.links[k-1].ewmaFrom(int(p.pts[k-1])); sum >= d {
				break
			}
		}
		p.insert(file, k, m.n)
	case p.on(file) && seen&^p.placed != 0:
		for _, q := range m.byTime(seen&^p.placed, slot) {
			k := int(p.at[file])
			d, sum := t-m.times[base+int(q)], int64(0)
			for ; k > 0 && seen>>p.pts[k-1]&1 == 0; k-- {
				if sum += p.links[k-1].ewmaFrom(int(p.pts[k-1])); sum >= d {
					break
				}
			}
			p.insert(int(q), k, m.n)
		}
	}
}

// extend puts the points of e, a transmission leaving the window that
// no point of fs's path saw but two or more others did, after the path's
// last point, in the order they saw it: the flow passed them on another
// stretch of its way.
func (m *Matcher) extend(fs *flowState, e *entry, slot uint64) {
	for _, q := range m.byTime(e.seen, slot) {
		fs.path.insert(int(q), len(fs.path.pts), m.n)
	}
}

// byTime returns the points in set in the order they saw the entry in
// slot (ties: the file given first).
func (m *Matcher) byTime(set uint64, slot uint64) []uint8 {
	out := make([]uint8, 0, bits.OnesCount64(set))
	for s := set; s != 0; s &= s - 1 {
		out = append(out, uint8(bits.TrailingZeros64(s)))
	}
	base := int(slot) * m.n
	slices.SortFunc(out, func(a, b uint8) int {
		return cmp.Or(cmp.Compare(m.times[base+int(a)], m.times[base+int(b)]), cmp.Compare(a, b))
	})
	return out
}
