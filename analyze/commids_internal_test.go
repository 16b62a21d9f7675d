package analyze

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
)

// commIDsDisjointByMap is the check as it was first written, with a map
// of each CommID's owner: the oracle of TestCommIDsDisjoint.
func commIDsDisjointByMap(parts []*Report) error {
	owner := map[uint32]int{}
	var clash []uint32
	claim := func(id uint32, s int) {
		if o, ok := owner[id]; ok && o != s {
			clash = append(clash, id)
			return
		}
		owner[id] = s
	}
	for s, p := range parts {
		if p.shard.orphaned > uint64(len(p.cmOrphans)) {
			return fmt.Errorf("%w: %d CM messages without their REQ in one shard, more than are kept to check", ErrNotDisjoint, p.shard.orphaned)
		}
		for _, c := range p.Connections {
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
	if len(clash) > 0 {
		return fmt.Errorf("%w: CM CommID 0x%08x is used between two different host pairs", ErrNotDisjoint, clash[0])
	}
	return nil
}

// TestCommIDsDisjoint checks the sorted check against the map's on shards
// whose connections and orphans draw CommIDs from ranges small enough to
// clash, within a shard and across shards: the same error, naming the
// same first clash, or none.
func TestCommIDsDisjoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name   string
		shards int
		ids    uint32 // CommIDs drawn from 1…ids
		conns  int
		clash  bool // some rounds clash
	}{
		{"one shard, repeated CommIDs", 1, 20, 30, false},
		{"two shards, no clash possible", 2, 1 << 30, 50, false},
		{"two shards, few CommIDs", 2, 40, 25, true},
		{"four shards, many clashes", 4, 16, 20, true},
		{"seven shards, some clashes", 7, 2000, 60, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clashes := 0
			defer func() { require.Equal(t, tc.clash, clashes > 0, "%d rounds clash", clashes) }()
			for round := range 200 {
				parts := make([]*Report, tc.shards)
				for s := range parts {
					p := &Report{shard: &shardInfo{}}
					for range rng.IntN(tc.conns + 1) {
						c := Connection{LocalCommID: 1 + rng.Uint32N(tc.ids), RemoteCommID: 1 + rng.Uint32N(tc.ids)}
						if rng.IntN(2) == 0 {
							c.Frames.REP = 7
						}
						p.Connections = append(p.Connections, c)
					}
					for range rng.IntN(4) {
						p.cmOrphans = append(p.cmOrphans, conn.Orphan{Kind: conn.Kind(rng.IntN(4)), LocalComm: 1 + rng.Uint32N(tc.ids), RemoteComm: 1 + rng.Uint32N(tc.ids)})
					}
					parts[s] = p
				}
				want := commIDsDisjointByMap(parts)
				got := commIDsDisjoint(parts)
				if want == nil {
					require.NoError(t, got, "round %d", round)
					continue
				}
				require.EqualError(t, got, want.Error(), "round %d", round)
				clashes++
			}
		})
	}
}
