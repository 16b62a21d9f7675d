package conn

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// applyOrphansScan is the definition ApplyOrphans implements: each
// orphan goes to the first connection that has its local or remote CommID.
func applyOrphansScan(conns []Connection, orphans []Orphan) {
	for _, o := range orphans {
		for i := range conns {
			c := &conns[i]
			ids := func(x uint32) bool { return x == c.LocalCommID || c.RemoteCommID != 0 && x == c.RemoteCommID }
			if ids(o.LocalComm) || ids(o.RemoteComm) {
				c.apply(o)
				break
			}
		}
	}
}

// TestApplyOrphansIndexed: on random connections and orphans from a
// small CommID space (so that CommIDs collide, REPs change remote
// CommIDs, and later orphans follow them), the indexed merge does what the
// scan does.
func TestApplyOrphansIndexed(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := []Kind{REP, RTU, REJ, DREQ, DREP}
	for round := range 200 {
		conns := make([]Connection, 1+rng.IntN(40))
		for i := range conns {
			conns[i] = Connection{ID: i + 1, LocalCommID: rng.Uint32N(16), State: StateRequested}
			if rng.IntN(2) == 0 {
				conns[i].RemoteCommID = rng.Uint32N(16)
			}
		}
		orphans := make([]Orphan, rng.IntN(40))
		for i := range orphans {
			orphans[i] = Orphan{Kind: kinds[rng.IntN(len(kinds))], LocalComm: rng.Uint32N(20), RemoteComm: rng.Uint32N(20), QPN: rng.Uint32N(1 << 24), Frame: uint64(i + 1), Reason: "r"}
		}
		want := append([]Connection(nil), conns...)
		applyOrphansScan(want, orphans)
		ApplyOrphans(conns, orphans)
		require.Equal(t, want, conns, "round %d", round)
	}
}
