package analyze

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// applyCMOrphansScan is the definition applyCMOrphans implements: each
// orphan goes to the first connection that has its local or remote CommID.
func applyCMOrphansScan(conns []Connection, orphans []cmOrphan) {
	for _, o := range orphans {
		for i := range conns {
			c := &conns[i]
			ids := func(x uint32) bool { return x == c.LocalCommID || c.RemoteCommID != 0 && x == c.RemoteCommID }
			if ids(o.localComm) || ids(o.remoteComm) {
				c.apply(o)
				break
			}
		}
	}
}

// TestApplyCMOrphansIndexed: on random connections and orphans from a
// small CommID space (so that CommIDs collide, REPs change remote
// CommIDs, and later orphans follow them), the indexed merge does what the
// scan does.
func TestApplyCMOrphansIndexed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []cmKind{cmREP, cmRTU, cmREJ, cmDREQ, cmDREP}
	for round := range 200 {
		conns := make([]Connection, 1+rng.IntN(40))
		for i := range conns {
			conns[i] = Connection{ID: i + 1, LocalCommID: rng.Uint32N(16), State: StateRequested}
			if rng.IntN(2) == 0 {
				conns[i].RemoteCommID = rng.Uint32N(16)
			}
		}
		orphans := make([]cmOrphan, rng.IntN(40))
		for i := range orphans {
			orphans[i] = cmOrphan{kind: kinds[rng.IntN(len(kinds))], localComm: rng.Uint32N(20), remoteComm: rng.Uint32N(20), qpn: rng.Uint32N(1 << 24), frame: uint64(i + 1), reason: "r"}
		}
		want := append([]Connection(nil), conns...)
		applyCMOrphansScan(want, orphans)
		applyCMOrphans(conns, orphans)
		require.Equal(t, want, conns, "round %d", round)
	}
}

// TestMergeOrphansLinear: merging a part with the most orphans a report
// keeps (1,024 CM messages whose REQ it did not see) into one of 100,000
// connections costs about what indexing the connections costs, not
// orphans × connections (1M connections + 1,024 orphans took 11.6 s more
// with a scan). The bound is generous for a loaded machine.
func TestMergeOrphansLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	const n = 100_000
	conns := make([]Connection, n)
	for i := range conns {
		conns[i] = Connection{ID: i + 1, LocalCommID: uint32(i + 1), RemoteCommID: uint32(n + 1 + i), State: StateRequested}
	}
	orphans := make([]cmOrphan, maxCMOrphans)
	for i := range orphans {
		// RTUs of connections near the end of the list, and of none.
		id := uint32(n - i) // connection n-1-i
		if i%2 == 1 {
			id = 1<<31 + uint32(i)
		}
		orphans[i] = cmOrphan{kind: cmRTU, localComm: id, remoteComm: id, frame: uint64(i + 1)}
	}
	merge := func(orphans []cmOrphan) time.Duration {
		best := time.Duration(1<<63 - 1)
		for range 3 {
			r := &Report{Connections: append([]Connection(nil), conns...), merge: true}
			o := &Report{cmOrphans: orphans, merge: true}
			runtime.GC()
			start := time.Now()
			require.NoError(t, r.Merge(o))
			best = min(best, time.Since(start))
			assert.Equal(t, StateEstablished, r.Connections[n-1].State)
		}
		return best
	}
	base, orph := merge([]cmOrphan{{kind: cmRTU, localComm: n, remoteComm: n, frame: 1}}), merge(orphans)
	t.Logf("Merge into %d connections: 1 orphan %v, %d orphans %v", n, base, len(orphans), orph)
	assert.Less(t, float64(orph), 10*float64(base), "merging orphans scans the connections (a scan took 100 times as long)")
}
