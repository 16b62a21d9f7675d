package cli_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// bigCapture writes a roce-synth mix capture of about 1.1 GB (1.9 M
// frames, 256 QPs between 64 host pairs) into the benchmark's temporary
// folder, or skips the benchmark when the disk has less than 4 GB free.
// ROCE_BENCH_CAPTURE names an existing capture to use instead (made by
// roce-synth mix --packets 1900000 --qps 256), which saves writing it.
func bigCapture(b *testing.B) string {
	b.Helper()
	if path := os.Getenv("ROCE_BENCH_CAPTURE"); path != "" {
		return path
	}
	dir := b.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Bavail*uint64(st.Bsize) < 4<<30 {
		b.Skipf("less than 4 GB free in %s: the 1 GB capture is not written", dir)
	}
	path := filepath.Join(dir, "mix1g.pcap")
	f, err := os.Create(path)
	require.NoError(b, err)
	_, err = synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 1_900_000, QPs: 256}, f, nil)
	require.NoError(b, err)
	require.NoError(b, f.Close())
	return path
}

// runBench runs the command on args; besides the wall time it reports
// the CPU time of the process (user + system) per run, cpu-ns/op, which
// says what a run costs when other work shares the cores.
func runBench(b *testing.B, args ...string) {
	b.Helper()
	b.ReportAllocs()
	cpu0 := testenv.CPUTime()
	runs := 0
	for b.Loop() {
		if code := cli.Run(context.Background(), args, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit status %d", code)
		}
		runs++
	}
	b.ReportMetric(float64(testenv.CPUTime()-cpu0)/float64(runs), "cpu-ns/op")
}

// BenchmarkJobs analyzes a 1.1 GB capture with -j 1, 2, … up to the
// cores available, sharded by host pair from -j 2 on (docs/parallel.md
// has the curve).
func BenchmarkJobs(b *testing.B) {
	path := bigCapture(b)
	st, err := os.Stat(path)
	require.NoError(b, err)
	for j := 1; j <= max(2, runtime.NumCPU()); j++ {
		b.Run(fmt.Sprintf("j%d", j), func(b *testing.B) {
			b.SetBytes(st.Size())
			runBench(b, "-j", fmt.Sprint(j), "-o", "json", path)
		})
	}
}

// BenchmarkExportPackets compares the analysis alone (-o json) with the
// analysis and the Parquet export (-o parquet --export) of a 1.1 GB
// capture, on one core each (-j 1). Each iteration runs both, one after
// the other, so that the ratio export/analysis (wall time) and
// cpu-export/analysis (CPU time of the process) compare runs under the
// same load of the shared machine; analysis-ns/op and export-ns/op are
// the two wall times.
func BenchmarkExportPackets(b *testing.B) {
	path := bigCapture(b)
	dir := b.TempDir()
	runs := [2][]string{
		{"-j", "1", "-o", "json", path},
		{"-j", "1", "-o", "parquet", "--export", dir, path},
	}
	var wall, cpu [2]int64
	b.ReportAllocs()
	for b.Loop() {
		for k, args := range runs {
			t0, c0 := time.Now(), testenv.CPUTime()
			if code := cli.Run(context.Background(), args, io.Discard, io.Discard); code != 0 {
				b.Fatalf("%v: exit status %d", args, code)
			}
			wall[k] += time.Since(t0).Nanoseconds()
			cpu[k] += testenv.CPUTime() - c0
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(wall[0])/n, "analysis-ns/op")
	b.ReportMetric(float64(wall[1])/n, "export-ns/op")
	b.ReportMetric(float64(wall[1])/float64(wall[0]), "export/analysis")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "cpu-export/analysis")
}
