package points

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPairMissesAcrossPSNWrap: a point that started capturing later
// meets the one that saw the whole flow, also when the PSNs both saw
// cross 0xFFFFFF → 0 (found by review: the PSN range both saw, taken by
// plain min and max, then spanned every PSN, and the later point lacked
// "200 of the 512").
func TestPairMissesAcrossPSNWrap(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start uint32
	}{{"no wrap", 0x100000}, {"a wrap in the PSNs both saw", 0xFFFF00}, {"a wrap before them", 0xFFFFF0}} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := laterPointLists(tc.start, 512, 200)
			e, c := estimatePair(a, b, newPairScratch(1))
			require.NotNil(t, e, "a point that started later: %s", c.why("a", "b"))
			require.Equal(t, 312, c.inA, "a's transmissions within the PSNs both saw")
			require.Zero(t, c.missA+c.missB)
		})
	}
}

// laterPointLists are the sampled lists of one flow of n transmissions
// from PSN start (wrapping at 2^24): a sees them all, b from the late-th
// on, 500 ns later.
func laterPointLists(start uint32, n, late int) (a, b []sampledTx) {
	for k := range n {
		psn := (start + uint32(k)) & 0xFFFFFF
		tx := sampledTx{hash: uint64(psn) * 0x9E3779B97F4A7C15, t: int64(k) * 1000, psn: psn, payloadLen: 1024, count: 1, ipID: uint16(k), opcode: 10}
		a = append(a, tx)
		if k >= late {
			tx.t += 500
			b = append(b, tx)
		}
	}
	order := func(x, y sampledTx) int { return cmp.Or(samePSN(&x, &y), cmp.Compare(x.ipID, y.ipID)) }
	slices.SortFunc(a, order)
	slices.SortFunc(b, order)
	return a, b
}
