package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// mixCapture writes a roce-synth mix capture of packets frames over 64
// QPs (16 host pairs) into dir.
func mixCapture(t testing.TB, dir string, packets int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("mix%d.pcap", packets))
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: packets, QPs: 64}, f, nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path
}

// mallocs runs the command on args once and returns the heap
// allocations it made (every goroutine's).
func mallocs(t testing.TB, args ...string) uint64 {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code := Run(context.Background(), args, io.Discard, io.Discard)
	runtime.ReadMemStats(&after)
	require.Zero(t, code)
	return after.Mallocs - before.Mallocs
}

// TestShardNoAllocsPerFrame: the sharded analysis of a pcap file (the
// reader, its chunks, the batches, the shards) allocates nothing per
// frame: a capture of the same flows with 40,000 frames more costs as
// many allocations more with -j 2 and 3 as with -j 1 (the analyzer's
// own: messages, series samples; about 0.03 per frame), give or take 80.
func TestShardNoAllocsPerFrame(t *testing.T) {
	if testing.Short() {
		t.Skip("writes two captures of 40,000 and 80,000 frames")
	}
	dir := t.TempDir()
	small, large := mixCapture(t, dir, 40_000), mixCapture(t, dir, 80_000)
	mallocs(t, "-j", "2", "-o", "json", small) // what the first run in a process sets up
	more := func(jobs string) float64 {
		a := mallocs(t, "-j", jobs, "-o", "json", small)
		b := mallocs(t, "-j", jobs, "-o", "json", large)
		return float64(b) - float64(a)
	}
	seq := more("1")
	require.Less(t, seq/40_000, 0.1, "-j 1 allocates about nothing per frame")
	for _, jobs := range []string{"2", "3"} {
		got := more(jobs)
		t.Logf("-j %s: %.0f allocations more for 40,000 frames more (-j 1: %.0f)", jobs, got, seq)
		require.InDelta(t, seq, got, 80, "-j %s against -j 1", jobs)
	}
}

// BenchmarkShardAllocs analyzes an 80,000-frame capture with -j 2 and
// reports its allocations per frame (b.ReportAllocs: per run).
func BenchmarkShardAllocs(b *testing.B) {
	path := mixCapture(b, b.TempDir(), 80_000)
	b.ReportAllocs()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	runs := 0
	for b.Loop() {
		if code := Run(context.Background(), []string{"-j", "2", "-o", "json", path}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit status %d", code)
		}
		runs++
	}
	runtime.ReadMemStats(&m1)
	b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(runs)/80_000, "allocs/frame")
}
