package toolcut_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/toolcut"
)

// TestRuns: a shard records the short frames it judged as runs of frames
// alike, so that a capture cut at one length is one run however many
// frames it cut (3 M cut frames one record each overflowed the records
// and sent -j back to a sequential pass); the only stage of a capture
// records none.
func TestRuns(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		shard    bool
		capLens  []int // each frame's captured length, short of 4156 declared bytes
		packet   int
		wantRuns int
		wantCut  uint64
	}{
		{"one length", true, repeat(128, 10000), 4142, 1, 10000},
		{"the only stage", false, repeat(128, 10000), 4142, 0, 10000},
		{"a lie after the cut", true, append(repeat(128, 5), repeat(100, 5)...), 4142, 2, 5},
		{"alternating", true, []int{128, 100, 128, 100}, 4142, 4, 2},
		{"past MaxPacketLen", true, repeat(128, 5), toolcut.MaxPacketLen + 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := toolcut.New(toolcut.Config{Shard: tt.shard})
			for i, n := range tt.capLens {
				s.Frame(uint64(2*i+1), t0, n, n, 4156, tt.packet)
			}
			assert.Equal(t, tt.wantRuns, s.Runs())
			assert.Equal(t, tt.wantCut, s.Facts().Frames)
			assert.False(t, s.Overflow())
		})
	}
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

// TestFrameAllocs: judging a frame allocates nothing, in a shard (within
// a run) or not.
func TestFrameAllocs(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, shard := range []bool{false, true} {
		s := toolcut.New(toolcut.Config{Shard: shard})
		s.Frame(1, t0, 500, 500, 500, 486)
		frame := uint64(2)
		allocs := testing.AllocsPerRun(1000, func() {
			s.Frame(frame, t0, 243, 243, 4156, 4142)
			s.Frame(frame+1, t0, 200, 200, 200, 186)
			frame += 2
		})
		require.Zero(t, allocs, "shard %v", shard)
	}
}
