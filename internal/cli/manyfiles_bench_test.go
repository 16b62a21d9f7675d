package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// manyFilesCapture writes (or finds in dir) one write-bw flow of about
// 1 M frames, header-only (64 bytes a frame captured), as one file.
func manyFilesCapture(b *testing.B, dir string) string {
	b.Helper()
	whole := filepath.Join(dir, "flow1m.pcap")
	if _, err := os.Stat(whole); err == nil {
		return whole
	}
	f, err := os.Create(whole)
	require.NoError(b, err)
	_, err = synth.Generate(synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 500_000, MTU: 1024, MsgSize: 1024, SnapLen: 64, Nanos: true, Seed: 7}, f, nil)
	require.NoError(b, err)
	require.NoError(b, f.Close())
	return whole
}

// BenchmarkManyFiles analyzes one write-bw flow of about 1 M frames as
// one file, as 250 to 2,000 pieces of a rotation (read as one capture:
// source.go) and as 20 to 2,000 files its frames alternate over (merged
// by time: merge.go, after every file is sampled whole). The cost should
// follow the frames, not the files: each reports the peak heap of a run
// (peak-heap-B/op) and its CPU time (cpu-ns/op) besides the wall time and
// allocations. ROCE_BENCH_MANY names a folder that keeps the captures
// between runs.
func BenchmarkManyFiles(b *testing.B) {
	dir := os.Getenv("ROCE_BENCH_MANY")
	if dir == "" {
		dir = b.TempDir()
	}
	whole := manyFilesCapture(b, dir)
	b.Run("one", func(b *testing.B) { runPeak(b, "-o", "json", "--progress", "never", whole) })
	for _, n := range []int{250, 500, 1000, 2000} {
		b.Run(fmt.Sprintf("pieces=%d", n), func(b *testing.B) {
			files := manyFiles(b, dir, fmt.Sprintf("piece%d", n), n, func(files []string) error { return splitCapture(whole, files...) })
			runPeak(b, append([]string{"-o", "json", "--progress", "never"}, files...)...)
		})
	}
	for _, n := range []int{20, 200, 2000} {
		b.Run(fmt.Sprintf("alternating=%d", n), func(b *testing.B) {
			files := manyFiles(b, dir, fmt.Sprintf("alt%d", n), n, func(files []string) error { return alternateCapture(whole, files...) })
			runPeak(b, append([]string{"-o", "json", "--progress", "never"}, files...)...)
		})
	}
}

// manyFiles returns the names of n files in dir/sub, written by write
// unless the last is there.
func manyFiles(b *testing.B, dir, sub string, n int, write func([]string) error) []string {
	b.Helper()
	require.NoError(b, os.MkdirAll(filepath.Join(dir, sub), 0o755))
	files := make([]string, n)
	for i := range files {
		files[i] = filepath.Join(dir, sub, fmt.Sprintf("f_%05d.pcap", i))
	}
	if _, err := os.Stat(files[n-1]); err != nil {
		require.NoError(b, write(files))
	}
	return files
}
