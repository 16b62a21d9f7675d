package cli_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// copyPoints writes n capture points of one write-bw stream into dir:
// copies of the stream (no delay, no loss, no TTL change), each with a
// clock 1 ms further ahead than the one before, so that they are not one
// capture given twice. It returns the file names and their frames in all.
func copyPoints(tb testing.TB, dir string, n, messages int) ([]string, int) {
	tb.Helper()
	pc := synth.PointsConfig{Base: synth.Config{Scenario: "write-bw", Messages: messages, Nanos: true}}
	ws := make([]io.Writer, n)
	bufs := make([]*bytes.Buffer, n)
	for i := range n {
		pc.Points = append(pc.Points, synth.Point{Name: fmt.Sprintf("p%02d", i), ClockOffset: time.Duration(i) * time.Millisecond})
		bufs[i] = &bytes.Buffer{}
		ws[i] = bufs[i]
	}
	tr, err := synth.WritePoints(pc, ws)
	require.NoError(tb, err)
	files := make([]string, n)
	for i, b := range bufs {
		files[i] = filepath.Join(dir, pc.Points[i].Name+".pcap")
		require.NoError(tb, os.WriteFile(files[i], b.Bytes(), 0o644))
	}
	return files, n * int(tr.Stream.Frames)
}

// BenchmarkCapturePointsScale runs the whole command (both passes) on 2,
// 16 and 64 capture points that are copies of one write stream (about
// 2,500 frames each): the input grows with the points, and so should the
// cost, no faster. ns/pkt, cpu-ns/pkt and B/pkt are the time, the CPU
// time of the process and the bytes allocated per frame of input (all
// files); they stay flat when the cost is linear in the input.
func BenchmarkCapturePointsScale(b *testing.B) {
	for _, n := range []int{2, 16, 64} {
		b.Run(fmt.Sprintf("points=%d", n), func(b *testing.B) {
			files, frames := copyPoints(b, b.TempDir(), n, 500)
			args := append([]string{"-o", "json", "--progress", "never"}, files...)
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu0 := testenv.CPUTime()
			runs := 0
			for b.Loop() {
				if code := cli.Run(context.Background(), args, io.Discard, io.Discard); code != cli.ExitOK {
					b.Fatalf("exit %d", code)
				}
				runs++
			}
			cpu := testenv.CPUTime() - cpu0
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(runs*frames), "ns/pkt")
			b.ReportMetric(float64(cpu)/float64(runs*frames), "cpu-ns/pkt")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(runs*frames), "B/pkt")
		})
	}
}
