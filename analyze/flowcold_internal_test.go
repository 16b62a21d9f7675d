package analyze

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// maxIdleFlowBytes bounds the analyzer state of an idle flow, one with a
// single request packet, as the command keeps it for one file (no
// throughput series, no head log for Merge; docs/robustness.md, "Scale"):
// the 400 bytes issue 14 asks for. 394 bytes measured, of which the flow
// state is 352 (its size class and its size), its one request awaiting an
// ACK 16, and its QP in its direction's map the rest. Before: 2,100 (RTT
// histogram, CNP candidates and series held from the start), 1,479 (NIC
// state from the first request), 999 (flow state 768 bytes: two
// addresses, two time.Time, counts of anomalies, gaps, orphan and pending
// messages, series held in every flow), 489 (flow state 448 bytes: request
// and ICRC counts the others give, retransmit causes, incomplete messages,
// DMA length mismatches, recovered ports and READ responses held in every
// flow).
const maxIdleFlowBytes = 400

// headLogBytes is what the head log Merge reads costs an idle flow (one
// request, its completed message, the log): kept when reports are merged.
const headLogBytes = 128

// seriesSampleBytes is what the series costs an idle flow: its holder
// (flowSeries, 32 bytes) and one slice of four samples.
const seriesSampleBytes = 32 + 4*48

// idleFlowBytes feeds n one-packet flows (a SEND ONLY to each of n QPs)
// with opts and returns the heap the analyzer holds per flow.
func idleFlowBytes(t testing.TB, n int, opts Options) int64 {
	only := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, AckReq: true}, gopacket.Payload(make([]byte, 64)))
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a := New(opts)
	for i := range n {
		setQP(only, uint32(0x100+i))
		setPSN(only, uint32(i))
		a.Feed(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(only), Length: len(only)}, gplayers.LinkTypeEthernet, only)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Len(t, a.flowList, n)
	runtime.KeepAlive(a)
	return (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(n)
}

// TestIdleFlowMemory checks that an idle flow costs at most
// maxIdleFlowBytes of analyzer state, with and without the throughput
// series.
func TestIdleFlowMemory(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	for _, tc := range []struct {
		name  string
		opts  Options
		bound int64
	}{
		{"one file, no series (text, CSV)", Options{NoICRC: true, NoSeries: true, NoMerge: true}, maxIdleFlowBytes},
		{"no series, merged (several files)", Options{NoICRC: true, NoSeries: true}, maxIdleFlowBytes + headLogBytes},
		{"one file, series (JSON, --plot, --html)", Options{NoICRC: true, NoMerge: true}, maxIdleFlowBytes + seriesSampleBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			per := idleFlowBytes(t, n, tc.opts)
			t.Logf("%d one-packet flows: %d bytes each", n, per)
			assert.LessOrEqual(t, per, tc.bound)
		})
	}
}

// TestRTTHistFew checks that a histogram holding its first samples as
// bucket numbers, then its used buckets as sparse pairs, gives the same
// figures and counts, merged or not, as one that counts every sample in
// its buckets from the first (the histogram as it was before it kept few
// samples): from one sample to thousands spread over more buckets than
// the sparse pairs hold.
func TestRTTHistFew(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 7, 8, 9, 15, 40, 129, 1000, 5000} {
		for _, m := range []int{0, 1, 5, 8, 30, 700} {
			xs, ys := make([]int64, n), make([]int64, m)
			for i := range xs {
				xs[i] = rng.Int64N(5_000_000) - 100
			}
			for i := range ys {
				ys[i] = rng.Int64N(80_000)
			}
			few, dense := &rttHist{}, &rttHist{counts: new([rttBuckets]uint32)}
			fewY, denseY := &rttHist{}, &rttHist{counts: new([rttBuckets]uint32)}
			for _, v := range xs {
				few.add(v)
				dense.add(v)
			}
			for _, v := range ys {
				fewY.add(v)
				denseY.add(v)
			}
			require.Equal(t, dense.summary(), few.summary(), "n=%d", n)
			assert.Equal(t, *dense.counts, *few.dense(), "n=%d", n)
			before := *few.dense()
			c := few.clone()
			c.merge(fewY)
			dense.merge(denseY)
			assert.Equal(t, before, *few.dense(), "the clone shares nothing with its source")
			require.Equal(t, dense.summary(), c.summary(), "n=%d m=%d", n, m)
			assert.Equal(t, *dense.counts, *c.dense(), "n=%d m=%d", n, m)
			assert.Equal(t, uint64(n), few.n, "the clone shares nothing with its source")
		}
	}
}

// TestRTTHistSparse checks which form a histogram takes: samples in few
// buckets stay sparse pairs up to rttDenseAt samples; more used buckets
// than rttSparseMax, or more samples, allocate the counts.
func TestRTTHistSparse(t *testing.T) {
	for _, tc := range []struct {
		name       string
		n, buckets int
		pairs      int
		counts     bool
	}{
		{"few samples", rttFew, 3, 0, false},
		{"samples up to rttDenseAt, three buckets", rttDenseAt, 3, 3, false},
		{"one sample more", rttDenseAt + 1, 3, 0, true},
		{"many samples, three buckets", 100_000, 3, 0, true},
		{"as many buckets as pairs", rttDenseAt, rttSparseMax, rttSparseMax, false},
		{"one bucket more", rttSparseMax + 1, rttSparseMax + 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h rttHist
			want := new([rttBuckets]uint32)
			for i := range tc.n {
				b := 16 + i%tc.buckets // buckets 16, 17, …: one value each
				h.add(bucketMid(b))
				want[b]++
			}
			assert.Len(t, h.sparse, tc.pairs)
			assert.Equal(t, tc.counts, h.counts != nil)
			assert.Equal(t, *want, *h.dense())
		})
	}
}
