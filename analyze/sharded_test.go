package analyze_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestShardedMisuse: a Sharded finished twice says so (ErrFinished)
// instead of crashing its process from a goroutine, Feed after Finish
// panics with a message, and Close ends the shards' goroutines of a
// Sharded abandoned (found by review: 10 abandoned at n=4 left 30
// goroutines).
func TestShardedMisuse(t *testing.T) {
	frames, cis, lt, err := loadFrames("../testdata/mix_small.pcap")
	require.NoError(t, err)
	feed := func(s *analyze.Sharded) {
		for i, f := range frames {
			s.Feed(cis[i], lt, f)
		}
	}
	s := analyze.NewSharded(analyze.Options{}, 4)
	feed(s)
	rep, err := s.Finish()
	require.NoError(t, err)
	require.Equal(t, uint64(len(frames)), rep.Capture.Frames)
	_, err = s.Finish()
	assert.ErrorIs(t, err, analyze.ErrFinished)
	_, err = s.FinishStream()
	assert.ErrorIs(t, err, analyze.ErrFinished)
	assert.PanicsWithValue(t, "analyze: Sharded.Feed after Finish or Close", func() { s.Feed(cis[0], lt, frames[0]) })
	s.Close() // after Finish: nothing

	before := runtime.NumGoroutine()
	for range 10 {
		s := analyze.NewSharded(analyze.Options{}, 4)
		feed(s)
		s.Close()
	}
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, runtime.NumGoroutine(), before, "abandoned shards' goroutines end")
}
