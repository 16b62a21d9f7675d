package analyze_test

import (
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
)

// TestShardedMisuse: a Sharded finished twice says so (ErrFinished)
// instead of crashing its process from a goroutine, Feed after Finish
// panics with a message, and Close ends the shards' goroutines of a
// Sharded abandoned (found by review: 10 abandoned at n=4 left 30
// goroutines).
func TestShardedMisuse(t *testing.T) {
	frames, cis, lt := readTestdata(t, "../testdata/mix_small.pcap")
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

// readTestdata returns a capture's frames.
func readTestdata(t *testing.T, path string) ([][]byte, []gopacket.CaptureInfo, gplayers.LinkType) {
	t.Helper()
	r, err := capture.Open(path)
	require.NoError(t, err)
	defer r.Close()
	var frames [][]byte
	var cis []gopacket.CaptureInfo
	var lt gplayers.LinkType
	for {
		ci, data, l, err := r.Next()
		if err == io.EOF {
			return frames, cis, lt
		}
		require.NoError(t, err)
		frames, cis, lt = append(frames, append([]byte(nil), data...)), append(cis, ci), l
	}
}
