package analyze

import (
	"fmt"
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
	uses := make([]conn.Part, len(parts))
	for s, p := range parts {
		if p.shard.orphaned > uint64(len(p.cmOrphans)) {
			return fmt.Errorf("%w: %d CM messages without their REQ in one shard, more than are kept to check", ErrNotDisjoint, p.shard.orphaned)
		}
		uses[s] = conn.Part{Connections: p.Connections, Orphans: p.cmOrphans}
	}
	if id, ok := conn.CommIDClash(uses); ok {
		return fmt.Errorf("%w: CM CommID 0x%08x is used between two different host pairs", ErrNotDisjoint, id)
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
