package analyze

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGrowSeries: a series starts with room for one sample and doubles
// up to maxSeries+1, keeping its samples.
func TestGrowSeries(t *testing.T) {
	var s []Sample
	var caps []int
	for n := 1; n <= maxSeries+1; n++ {
		before := cap(s)
		s = growSeries(s)
		require.Len(t, s, n)
		s[n-1].Packets = uint64(n)
		if cap(s) != before {
			caps = append(caps, cap(s))
		}
	}
	assert.Equal(t, []int{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 513}, caps)
	for i, x := range s {
		require.Equal(t, uint64(i+1), x.Packets, "sample %d", i)
	}
}
