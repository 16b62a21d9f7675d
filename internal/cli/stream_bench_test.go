package cli_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
)

// peakHeap runs fn and returns the most heap its objects held meanwhile
// (sampled every millisecond, plus at the end).
func peakHeap(fn func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			v := read()
			mu.Lock()
			peak = max(peak, v)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return max(peak, read())
}

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
					p := peakHeap(func() {
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
