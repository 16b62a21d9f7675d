package points

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
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

// TestPairMissesOverHalfTheCircle: the PSNs both points saw of a flow
// may span more than half the 24-bit circle (8.4 M packets of one QP):
// a point that stopped earlier still meets (found by the second review:
// distances from one PSN of them took the other half of the circle, and
// b "lacked 50 of the 150"). arcOf is the shortest arc that holds them.
func TestPairMissesOverHalfTheCircle(t *testing.T) {
	var a, b []sampledTx
	for k := range 150 {
		psn := uint32(k) * 100_000
		tx := sampledTx{hash: uint64(psn) * 0x9E3779B97F4A7C15, t: int64(k) * 1000, psn: psn, payloadLen: 1024, count: 1, ipID: uint16(k), opcode: 10}
		a = append(a, tx)
		if k < 100 {
			tx.t += 500
			b = append(b, tx)
		}
	}
	order := func(x, y sampledTx) int { return cmp.Or(samePSN(&x, &y), cmp.Compare(x.ipID, y.ipID)) }
	slices.SortFunc(a, order)
	slices.SortFunc(b, order)
	e, c := estimatePair(a, b, newPairScratch(1))
	require.NotNil(t, e, c.why("a", "b"))
	require.Equal(t, 100, c.inA)
	require.Zero(t, c.missA+c.missB)

	for _, tc := range []struct {
		psns []uint32
		in   []uint32
		out  []uint32
	}{
		{[]uint32{0, 9_900_000, 5_000_000}, []uint32{0, 4_000_000, 9_900_000}, []uint32{12_000_000, 0xFFFFFF}},
		{[]uint32{0xFFFF00, 0x100}, []uint32{0xFFFFFF, 0, 0x100}, []uint32{0x101, 0x800000}},
		{[]uint32{7}, []uint32{7}, []uint32{6, 8}},
	} {
		arc := arcOf(slices.Clone(tc.psns))
		for _, p := range tc.in {
			assert.True(t, arc.has(p), "%v holds %#x", tc.psns, p)
		}
		for _, p := range tc.out {
			assert.False(t, arc.has(p), "%v does not hold %#x", tc.psns, p)
		}
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
