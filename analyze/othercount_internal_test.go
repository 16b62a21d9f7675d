package analyze

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOtherCountsOrder checks that past maxOtherKeys keys of a level the
// counts do not depend on the order of the frames nor on how they were
// split and merged: the oracle keeps the maxOtherKeys smallest keys of
// each level, computed directly, so that many keys of one level (TCP
// ports) never crowd out those of another (a busy UDP port).
func TestOtherCountsOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type frame struct {
		k otherKey
		n uint64
	}
	var frames []frame
	want := map[otherKey]otherCount{}
	for range 20_000 {
		k := otherKey{otherLevel(1 + rng.IntN(5)), uint16(rng.IntN(300))}
		n := uint64(60 + rng.IntN(1400))
		frames = append(frames, frame{k, n})
		c := want[k]
		c.add(otherCount{1, n})
		want[k] = c
	}
	require.Greater(t, len(want), 5*maxOtherKeys/2)
	// The oracle: the maxOtherKeys smallest keys of each level.
	var oracle otherCounts
	oracle.keys = map[otherKey]otherCount{}
	for level := otherLink; level <= otherUDP; level++ {
		kept := 0
		for num := range 1 << 16 {
			k := otherKey{level, uint16(num)}
			c, ok := want[k]
			switch {
			case !ok:
			case kept < maxOtherKeys:
				oracle.keys[k] = c
				kept++
			default:
				oracle.unlisted.add(c)
			}
		}
	}
	var wantCapture Capture
	oracle.list(&wantCapture)

	orders := map[string]func() otherCounts{
		"forward": func() (t otherCounts) {
			for _, f := range frames {
				t.add(f.k, otherCount{1, f.n})
			}
			return t
		},
		"backward": func() (t otherCounts) {
			for i := range frames {
				f := frames[len(frames)-1-i]
				t.add(f.k, otherCount{1, f.n})
			}
			return t
		},
		"three merged": func() (t otherCounts) {
			var parts [3]otherCounts
			for i, f := range frames {
				parts[i%3].add(f.k, otherCount{1, f.n})
			}
			for i := range parts {
				t.merge(&parts[i])
			}
			return t
		},
	}
	for name, count := range orders {
		t.Run(name, func(t *testing.T) {
			got := count()
			assert.Equal(t, oracle.keys, got.keys)
			assert.Equal(t, oracle.unlisted, got.unlisted)
			var c Capture
			got.list(&c)
			assert.Equal(t, wantCapture.OtherProtocols, c.OtherProtocols)
			assert.Equal(t, wantCapture.OtherFramesUnlisted, c.OtherFramesUnlisted)
			assert.Len(t, c.OtherProtocols, listedOthers)
		})
	}
}
