package conn

import (
	"cmp"
	"slices"
)

// Part is what one part of a capture (a shard) paired by CommID: its
// connections and the CM messages it kept without their REQ (all of
// them: a part that kept only some cannot be checked).
type Part struct {
	Connections []Connection
	Orphans     []Orphan
}

// CommIDClash returns a CommID two parts both used, and false when
// there is none: the parts of a capture analyzed apart pair their CM
// messages as one table would only when no CommID ties two of them. Of
// the clashes, the one returned is the first use by a second part in
// the order the parts, their connections and their orphans come.
func CommIDClash(parts []Part) (uint32, bool) {
	// Every CommID a part used, in the order the parts and their
	// connections and orphans come: sorted by CommID, a CommID's first
	// user owns it, and the first use by another part in that order is
	// the clash reported.
	type use struct {
		id    uint32
		shard int32
		at    int32
	}
	n := 0
	for _, p := range parts {
		n += 2*len(p.Connections) + 2*len(p.Orphans)
	}
	uses := make([]use, 0, n)
	claim := func(id uint32, s int) {
		uses = append(uses, use{id, int32(s), int32(len(uses))})
	}
	for s, p := range parts {
		for _, c := range p.Connections {
			if c.State == StateInferred {
				continue // no CommID
			}
			claim(c.LocalCommID, s)
			if c.Frames.REP != 0 {
				claim(c.RemoteCommID, s)
			}
		}
		for _, o := range p.Orphans {
			ids, n := o.CommIDs()
			for _, id := range ids[:n] {
				claim(id, s)
			}
		}
	}
	slices.SortFunc(uses, func(a, b use) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.at, b.at)) })
	clash := use{at: -1}
	for i := 0; i < len(uses); {
		j := i + 1
		for ; j < len(uses) && uses[j].id == uses[i].id; j++ {
			if uses[j].shard != uses[i].shard && (clash.at < 0 || uses[j].at < clash.at) {
				clash = uses[j]
				break
			}
		}
		for j < len(uses) && uses[j].id == uses[i].id {
			j++
		}
		i = j
	}
	return clash.id, clash.at >= 0
}
