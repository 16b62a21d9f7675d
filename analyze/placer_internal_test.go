package analyze

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPlacer: host pairs go to the shard with the least work, the reader's
// own shard 0 counting a quarter of a frame's analysis for the reading of
// every frame: a capture of one host pair is analyzed on another core than
// the one that reads it (it was on shard 0 by rounding, and -j 2 took
// 1.18× the time of -j 1), and shard 0 takes host pairs once the others
// have more work than the reading.
func TestPlacer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		frames []uint64 // the host pair of each frame, in order
		want   []uint64 // frames per shard
	}{
		{"one host pair, 2 shards", 2, []uint64{7, 7, 7, 7, 7, 7}, []uint64{0, 6}},
		{"one host pair, 4 shards", 4, []uint64{7, 7, 7}, []uint64{0, 3, 0, 0}},
		{"two host pairs, 2 shards", 2, []uint64{7, 7, 7, 7, 9, 9}, []uint64{2, 4}},
		{"frames of no host pair: the reader's", 2, []uint64{0, 0, 7}, []uint64{2, 1}},
		{"the reader's shard takes the third host pair, once the others have analyzed more than it read", 3, []uint64{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 4}, []uint64{4, 5, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlacer(tc.n)
			for _, k := range tc.frames {
				p.shard(k)
			}
			assert.Equal(t, tc.want, p.frames)
		})
	}
}
