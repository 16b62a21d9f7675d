package analyze

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
)

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
	orphans := make([]conn.Orphan, conn.MaxOrphans)
	for i := range orphans {
		// RTUs of connections near the end of the list, and of none.
		id := uint32(n - i) // connection n-1-i
		if i%2 == 1 {
			id = 1<<31 + uint32(i)
		}
		orphans[i] = conn.Orphan{Kind: conn.RTU, LocalComm: id, RemoteComm: id, Frame: uint64(i + 1)}
	}
	merge := func(orphans []conn.Orphan) time.Duration {
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
	base, orph := merge([]conn.Orphan{{Kind: conn.RTU, LocalComm: n, RemoteComm: n, Frame: 1}}), merge(orphans)
	t.Logf("Merge into %d connections: 1 orphan %v, %d orphans %v", n, base, len(orphans), orph)
	assert.Less(t, float64(orph), 10*float64(base), "merging orphans scans the connections (a scan took 100 times as long)")
}
