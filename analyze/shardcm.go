package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
)

// The CM across shards: CommIDs must not tie host pairs of two shards
// (commIDsDisjoint), connections are renumbered in the combined report
// (connRemap), and the CM flood check is replayed over all shards
// (replayFlood).

// commIDsDisjoint checks that no CommID a shard's CM messages used is
// also one of another shard's: the sequential analysis pairs CM messages
// by CommID across every host pair.
func commIDsDisjoint(parts []*Report) error {
	// Every CommID a shard used, in the order the shards and their
	// connections and orphans come: sorted by CommID, a CommID's first
	// user owns it, and the first use by another shard in that order is
	// the clash reported.
	type use struct {
		id    uint32
		shard int32
		at    int32
	}
	n := 0
	for _, p := range parts {
		n += 2*len(p.Connections) + 2*len(p.cmOrphans)
	}
	uses := make([]use, 0, n)
	claim := func(id uint32, s int) {
		uses = append(uses, use{id, int32(s), int32(len(uses))})
	}
	for s, p := range parts {
		if p.shard.orphaned > uint64(len(p.cmOrphans)) {
			return fmt.Errorf("%w: %d CM messages without their REQ in one shard, more than are kept to check", ErrNotDisjoint, p.shard.orphaned)
		}
		for _, c := range p.Connections {
			if c.State == StateInferred {
				continue // no CommID
			}
			claim(c.LocalCommID, s)
			if c.Frames.REP != 0 {
				claim(c.RemoteCommID, s)
			}
		}
		for _, o := range p.cmOrphans {
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
	if clash.at >= 0 {
		return fmt.Errorf("%w: CM CommID 0x%08x is used between two different host pairs", ErrNotDisjoint, clash.id)
	}
	return nil
}

// connRemap maps a shard's connection IDs (1…) to the combined report's;
// 0 for none (beyond the connection cap).
type connRemap []int

// set maps the shard's connection id to the combined report's to.
func (m *connRemap) set(id, to int) {
	if id <= 0 {
		return
	}
	if id >= len(*m) {
		*m = append(*m, make([]int, id+1-len(*m))...)
	}
	(*m)[id] = to
}

// id returns the combined report's ID of the shard's connection id, 0
// for none.
func (m connRemap) id(id int) int {
	if id <= 0 || id >= len(m) {
		return 0
	}
	return m[id]
}

// renumberFinding rewrites the connection ID a finding names (a shard's)
// to the combined report's.
func renumberFinding(fd Finding, remap connRemap) Finding {
	if fd.Connection == 0 {
		return fd
	}
	return fd.withConnection(remap.id(fd.Connection))
}

// replayFlood replays the CM messages of all shards in frame order and
// returns the frame (and time) at which they first outnumber what the
// connections explain, as cmFlood decides (0: never).
func replayFlood(parts []*Report) (uint64, time.Time) {
	// Before the logs begin (shardShared.logFrom) one shard had every
	// frame: its flood then is the capture's, and its counts are where
	// the replay starts.
	var from conn.Counts
	logs := make([]*conn.Log, len(parts))
	for i, p := range parts {
		f := p.shard.feed
		start := f.logFrom()
		if st := p.shard.cmStats; st.FloodAt != 0 && (start == 0 || st.FloodAt < start) {
			return st.FloodAt, st.FloodT
		}
		from.Msgs, from.Grew = from.Msgs+f.pre.Msgs, from.Grew+f.pre.Grew
		logs[i] = &f.cm
	}
	e, _ := conn.FirstFlood(from, logs)
	return e.Frame, e.Time
}
