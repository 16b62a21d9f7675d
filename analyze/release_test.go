package analyze_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/testenv"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestOnRelease: the library never collects garbage by itself; Finish
// and a report stream of 32,768 flows or more call the caller's
// OnRelease once the flow table is released, and once the last flow is.
// A stream calls it once more at its start: its Analyzer (each shard of
// 32,768 flows or more: here one host pair, so one shard, holds every
// flow) before its report is allocated, the combined stream once the
// combiner is (its startReport and newCombiner leave garbage, which
// the report would otherwise grow the heap past). In between, every
// 8,192 flows, it calls it only when the heap would grow past the
// largest it was at a call (release.go; TestReleaser and
// TestReleaserInReports run that rule on a heap they set): here the test's collector is the runtime's, so that many calls
// is the most.
func TestOnRelease(t *testing.T) {
	template := roceFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: 1, PSN: 1}, gopacket.Payload(make([]byte, 8)))
	// given counts the flows a stream gave; at each call, the test notes it
	var given int
	discard := func(st *analyze.ReportStream) int {
		var f analyze.Flow
		for st.Next(&f) {
			st.Reuse(&f)
			given++
		}
		st.End()
		return given
	}
	// each way to finish an analysis of n flows, returning the flows
	// reported; the calls it makes at its start; whether it gives its
	// flows one by one (given)
	type finish struct {
		run    func(opts analyze.Options, n int) int
		start  int
		stream bool
	}
	finishes := map[string]finish{
		"Finish": {func(opts analyze.Options, n int) int {
			a := analyze.New(opts)
			feedQPs(a, template, n)
			return len(a.Finish().Flows)
		}, 1, false},
		"FinishStream.Report": {func(opts analyze.Options, n int) int {
			a := analyze.New(opts)
			feedQPs(a, template, n)
			return len(a.FinishStream().Report().Flows)
		}, 2, false},
		"FinishStream.Next": {func(opts analyze.Options, n int) int {
			a := analyze.New(opts)
			feedQPs(a, template, n)
			return discard(a.FinishStream())
		}, 2, true},
		"Sharded.FinishStream.Next": {func(opts analyze.Options, n int) int {
			s := analyze.NewSharded(opts, 3)
			feedQPsTo(s.Feed, template, n)
			st, err := s.FinishStream()
			require.NoError(t, err)
			return discard(st)
		}, 2, true},
	}
	for _, tc := range []struct {
		name  string
		flows int
	}{
		{"few flows", 1_000},
		{"one batch", 32_768},
		{"two batches and one more", 2*32_768 + 1},
	} {
		for name, fin := range finishes {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				var at []int // given at each call
				given = 0
				collect := func() { at = append(at, given); runtime.GC() }
				assert.Equal(t, tc.flows, fin.run(analyze.Options{NoICRC: true, OnRelease: collect}, tc.flows))
				if tc.flows < 32_768 {
					assert.Empty(t, at)
					return
				}
				require.GreaterOrEqual(t, len(at), fin.start+1)
				assert.LessOrEqual(t, len(at), fin.start+1+tc.flows/8_192)
				if fin.stream {
					assert.Equal(t, make([]int, fin.start), at[:fin.start], "the calls at the start, before the first flow")
					assert.Equal(t, tc.flows, at[len(at)-1], "the last call, once every flow was given")
				}
			})
		}
	}
}

// BenchmarkOnReleasePeak analyzes a roce-synth mix of 500,000 packets
// over 65,536 QPs (about 135,000 flows), read from its file as the
// command reads it, and drains its report stream as the text report
// does (each flow handed back with Reuse), with OnRelease collecting the
// garbage (runtime.GC, as the command's) and without: the collections
// let the report reuse the flow table's memory rather than grow the heap
// past both. It reports the peak heap of a run (peak-heap-B/op).
func BenchmarkOnReleasePeak(b *testing.B) {
	path := filepath.Join(b.TempDir(), "mix65k.pcap")
	f, err := os.Create(path)
	require.NoError(b, err)
	_, err = synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 500_000, QPs: 65536}, f, nil)
	require.NoError(b, errors.Join(err, f.Close()))
	for _, tc := range []struct {
		name      string
		onRelease func()
	}{{"gc", runtime.GC}, {"none", nil}} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var peak uint64
			flows := 0
			for b.Loop() {
				peak = max(peak, testenv.PeakHeap(func() {
					r, err := capture.Open(path)
					require.NoError(b, err)
					defer r.Close()
					a := analyze.New(analyze.Options{NoSeries: true, NoMerge: true, OnRelease: tc.onRelease})
					for {
						ci, data, lt, err := r.Next()
						if err == io.EOF {
							break
						}
						require.NoError(b, err)
						a.Feed(ci, lt, data)
					}
					s := a.FinishStream()
					var fl analyze.Flow
					for flows = 0; s.Next(&fl); flows++ {
						s.Reuse(&fl)
					}
				}))
			}
			require.Greater(b, flows, 100_000)
			b.ReportMetric(float64(peak), "peak-heap-B/op")
		})
	}
}
