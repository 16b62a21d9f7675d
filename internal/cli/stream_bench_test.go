package cli_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// BenchmarkManyFlowsReport writes the report (text, JSON, CSV; -j 1 and
// the default) of 200,000 one-packet flows, the report written while it
// is built (docs/robustness.md, "Scale: many flows"), and reports the
// peak heap of a run: peak-heap-B/op, and per flow peak-heap-B/flow.
func BenchmarkManyFlowsReport(b *testing.B) {
	const flows = 200_000
	path := filepath.Join(b.TempDir(), "flows.pcap")
	f, err := os.Create(path)
	require.NoError(b, err)
	require.NoError(b, writeManyQPs(f, flows))
	require.NoError(b, f.Close())
	for _, out := range []string{"text", "json", "csv"} {
		for _, j := range []string{"1", "2"} {
			b.Run(fmt.Sprintf("%s/j%s", out, j), func(b *testing.B) {
				b.ReportAllocs()
				var peak uint64
				for b.Loop() {
					p := testenv.PeakHeap(func() {
						if code := cli.Run(context.Background(), []string{"-j", j, "-o", out, path}, io.Discard, io.Discard); code != 0 {
							b.Fatalf("exit status %d", code)
						}
					})
					peak = max(peak, p)
				}
				b.ReportMetric(float64(peak), "peak-heap-B/op")
				b.ReportMetric(float64(peak)/flows, "peak-heap-B/flow")
			})
		}
	}
}

// BenchmarkRotation analyzes a 1 M-packet mix (roce-synth mix, 64 QPs)
// whole and cut into 4 pieces given in reverse order, which are
// read as one capture (source.go): at -j 1 and the default -j, the
// pieces cost what the whole file does. It reports the peak heap of a
// run (peak-heap-B/op) and its CPU time (cpu-ns/op).
// ROCE_BENCH_ROTATION names a folder that keeps the captures between runs.
func BenchmarkRotation(b *testing.B) {
	dir := os.Getenv("ROCE_BENCH_ROTATION")
	if dir == "" {
		dir = b.TempDir()
	}
	whole, pieces := rotationCaptures(b, dir)
	for _, j := range []string{"1", "0"} {
		for name, files := range map[string][]string{"whole": {whole}, "pieces": pieces} {
			b.Run(fmt.Sprintf("%s/j%s", name, j), func(b *testing.B) {
				args := append([]string{"-o", "json"}, files...)
				if j != "0" {
					args = append([]string{"-j", j}, args...)
				}
				runPeak(b, args...)
			})
		}
	}
}

// runPeak runs the command on args and reports, besides the wall time
// and allocations, the peak heap of a run (peak-heap-B/op) and its CPU
// time (cpu-ns/op); it returns the peak.
func runPeak(b *testing.B, args ...string) uint64 {
	b.Helper()
	b.ReportAllocs()
	var peak uint64
	cpu0, runs := testenv.CPUTime(), 0
	for b.Loop() {
		peak = max(peak, testenv.PeakHeap(func() {
			if code := cli.Run(context.Background(), args, io.Discard, io.Discard); code != 0 {
				b.Fatalf("exit status %d", code)
			}
		}))
		runs++
	}
	b.ReportMetric(float64(peak), "peak-heap-B/op")
	b.ReportMetric(float64(testenv.CPUTime()-cpu0)/float64(runs), "cpu-ns/op")
	return peak
}

// rotationCaptures writes (or finds in dir) the 1 M-packet mix and its 4
// pieces, the pieces in reverse order.
func rotationCaptures(b *testing.B, dir string) (string, []string) {
	b.Helper()
	whole := filepath.Join(dir, "mix1m.pcap")
	var pieces []string
	for i := 3; i >= 0; i-- {
		pieces = append(pieces, filepath.Join(dir, fmt.Sprintf("mix1m_%05d.pcap", i)))
	}
	if _, err := os.Stat(pieces[0]); err == nil {
		return whole, pieces
	}
	f, err := os.Create(whole)
	require.NoError(b, err)
	_, err = synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 1_000_000, QPs: 64, Seed: 4}, f, nil)
	require.NoError(b, err)
	require.NoError(b, f.Close())
	require.NoError(b, splitCapture(whole, pieces[3], pieces[2], pieces[1], pieces[0]))
	return whole, pieces
}

// splitCapture cuts a pcap file into pieces of about equal frames, as
// editcap -c would.
func splitCapture(whole string, pieces ...string) error {
	count, err := capture.Open(whole)
	if err != nil {
		return err
	}
	var n int
	for ; ; n++ {
		if _, _, _, err := count.Next(); err == io.EOF {
			break
		} else if err != nil {
			count.Close()
			return err
		}
	}
	count.Close()
	cr, err := capture.Open(whole)
	if err != nil {
		return err
	}
	defer cr.Close()
	for k, name := range pieces {
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		w := pcapgo.NewWriterNanos(f)
		for i := k * n / len(pieces); i < (k+1)*n/len(pieces); i++ {
			ci, data, lt, err := cr.Next()
			if err != nil {
				return err
			}
			if i == k*n/len(pieces) {
				if err := w.WriteFileHeader(262144, lt); err != nil {
					return err
				}
			}
			if err := w.WritePacket(ci, data); err != nil {
				return err
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkMergedByTime analyzes the 1 M-packet mix of BenchmarkRotation
// whole and as its odd and its even frames, two files merged by time
// (internal/cli/merge.go): the stream switches files at every frame, the
// most Pieces can cost (a run per frame), and each file is first sampled
// whole for the capture points' decision (wholeSamples). At -j 1 and the
// default -j; it reports the peak heap of a run and its CPU time.
// ROCE_BENCH_ROTATION names a folder that keeps the captures between runs.
func BenchmarkMergedByTime(b *testing.B) {
	dir := os.Getenv("ROCE_BENCH_ROTATION")
	if dir == "" {
		dir = b.TempDir()
	}
	whole, _ := rotationCaptures(b, dir)
	odd, even := filepath.Join(dir, "mix1m_odd.pcap"), filepath.Join(dir, "mix1m_even.pcap")
	if _, err := os.Stat(even); err != nil {
		require.NoError(b, alternateCapture(whole, odd, even))
	}
	for _, j := range []string{"1", "0"} {
		for name, files := range map[string][]string{"whole": {whole}, "merged": {odd, even}} {
			b.Run(fmt.Sprintf("%s/j%s", name, j), func(b *testing.B) {
				args := append([]string{"-o", "json"}, files...)
				if j != "0" {
					args = append([]string{"-j", j}, args...)
				}
				runPeak(b, args...)
			})
		}
	}
}

// alternateCapture writes the frames of a pcap file to files in turn:
// the first frame to the first file, the second to the second, and so on.
func alternateCapture(whole string, files ...string) error {
	cr, err := capture.Open(whole)
	if err != nil {
		return err
	}
	defer cr.Close()
	ws := make([]*pcapgo.Writer, len(files))
	for i, name := range files {
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		defer f.Close()
		ws[i] = pcapgo.NewWriterNanos(f)
	}
	for n := 0; ; n++ {
		ci, data, lt, err := cr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		w := ws[n%len(ws)]
		if n < len(ws) {
			if err := w.WriteFileHeader(262144, lt); err != nil {
				return err
			}
		}
		if err := w.WritePacket(ci, data); err != nil {
			return err
		}
	}
}
