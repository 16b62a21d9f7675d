package points

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/testenv"
	"github.com/roce-dissect/roce-dissect/layers"
)

// copyStream returns a stream of n RDMA WRITEs on four flows (two QPs
// each way between two hosts), one every microsecond, each acknowledged by
// the receiver 2 µs later, in time order.
func copyStream(n int) []*analyze.Packet {
	var ps []*analyze.Packet
	for i := range n {
		at := time.Duration(i) * time.Microsecond
		psn := uint32(i/4) & 0xFFFFFF
		src, dst := hostA, hostB
		if i%4 >= 2 {
			src, dst = hostB, hostA
		}
		qp := uint32(0x100 + i%4)
		icrc := uint32(i)*2654435761 + 1
		w := packet(src, dst, qp, psn, layers.OpcodeRCRDMAWriteMiddle, at, uint64(2*i+1), icrc, layers.ICRCOK)
		a := packet(dst, src, qp+0x10, psn, layers.OpcodeRCAcknowledge, at+2*time.Microsecond, uint64(2*i+2), ^icrc, layers.ICRCOK)
		ps = append(ps, w, a)
	}
	// The acknowledgements interleave with later writes.
	slices.SortStableFunc(ps, func(x, y *analyze.Packet) int { return x.Time.Compare(y.Time) })
	return ps
}

// TestMatcherMemoryLinear: copies of one stream (8,192 writes and their
// acknowledgements) at 64 points hold at most twice the bytes per
// sighting they hold at 2 (the window's transmissions and the flows'
// pairs, after a garbage collection, when Finish has accounted every
// transmission): memory grows with the input, not with the pairs of
// points.
func TestMatcherMemoryLinear(t *testing.T) {
	stream := copyStream(1 << 13)
	held := func(n int) float64 {
		files := make([]string, n)
		for i := range files {
			files[i] = fmt.Sprintf("p%02d", i)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := New(Options{Files: files})
		for _, p := range stream {
			for f := range n {
				m.Add(f, p)
			}
		}
		rep := m.Finish()
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(m)
		runtime.KeepAlive(rep)
		return float64(after.HeapAlloc-before.HeapAlloc) / float64(n*len(stream))
	}
	two, many := held(2), held(64)
	t.Logf("bytes held per sighting: %.0f at 2 points, %.0f at 64", two, many)
	assert.LessOrEqual(t, many, 2*two)
}

// BenchmarkMatcherPoints feeds 2, 16 and 64 capture points that are
// copies of one stream of 65,536 writes and their acknowledgements (every
// packet seen at every point at the same time) and finishes the report:
// the input, and so the cost, grows with the points. ns/sighting,
// cpu-ns/sighting and B/sighting are the time, the CPU time and the bytes
// allocated per packet given to Add; they stay flat when the cost is
// linear in the input.
func BenchmarkMatcherPoints(b *testing.B) {
	stream := copyStream(1 << 16)
	for _, n := range []int{2, 16, 64} {
		b.Run(fmt.Sprintf("points=%d", n), func(b *testing.B) {
			files := make([]string, n)
			for i := range files {
				files[i] = fmt.Sprintf("p%02d", i)
			}
			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			cpu0 := testenv.CPUTime()
			runs := 0
			for b.Loop() {
				m := New(Options{Files: files})
				for _, p := range stream {
					for f := range n {
						m.Add(f, p)
					}
				}
				if rep := m.Finish(); len(rep.Links) != 8*(n-1) {
					b.Fatalf("%d links, want %d", len(rep.Links), 8*(n-1))
				}
				runs++
			}
			cpu := testenv.CPUTime() - cpu0
			runtime.ReadMemStats(&after)
			sightings := float64(runs * n * len(stream))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/sightings, "ns/sighting")
			b.ReportMetric(float64(cpu)/sightings, "cpu-ns/sighting")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/sightings, "B/sighting")
		})
	}
}
