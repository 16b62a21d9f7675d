package nic

import (
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStateLazy checks that a request flow's NIC state waits for its
// second request, and that the first request, kept in the flow until
// then, enters the ring with the PSN, length and time it was fed with;
// and that its event state waits for a resend (a repeat of the last
// request is a capture duplicate, not a resend). The requests are those
// the analyzer fed before the stage moved out of it (its
// TestNICStateLazy): the orders are what its PSN tracker said of them.
func TestStateLazy(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	type req struct {
		psn   uint32
		order Order
		dup   bool
	}
	for _, tc := range []struct {
		name     string
		reqs     []req
		ringN    int
		events   bool
		timeouts uint64
	}{
		{"one request: no NIC state", []req{{7, InOrder, false}}, 0, false, 0},
		{"two requests: both in the ring", []req{{7, InOrder, false}, {8, InOrder, false}}, 2, false, 0},
		{"three requests", []req{{7, InOrder, false}, {8, InOrder, false}, {9, InOrder, false}}, 3, false, 0},
		{"a repeat second: a capture duplicate", []req{{7, InOrder, false}, {7, Old, true}}, 2, false, 0},
		{"a resend after a later request: a timeout", []req{{7, InOrder, false}, {8, InOrder, false}, {7, Old, false}}, 3, true, 1},
		{"a hole filled: a reordering", []req{{7, InOrder, false}, {9, Gap, false}, {8, Fill, false}}, 3, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Stage
			var f Flow
			for i, r := range tc.reqs {
				s.Request(&f, Request{T: t0 + int64(i)*1000, PSN: r.psn, Bytes: 106, Span: 1, High: 9, Order: r.order, Dup: r.dup})
				assert.False(t, s.Pending())
			}
			assert.True(t, f.Has())
			if tc.ringN == 0 {
				assert.Nil(t, f.s)
				nic, fs := s.Report(&f, In{Requests: 1}, nil)
				require.NotNil(t, nic, "a request flow has a NIC report from its first request")
				assert.Empty(t, fs)
				assert.Equal(t, uint64(1), nic.reqPackets)
				return
			}
			require.NotNil(t, f.s)
			assert.Zero(t, f.first.psn&held, "the first request moved into the ring")
			require.Equal(t, tc.ringN, f.s.ringN)
			assert.Equal(t, tc.events, f.s.events != nil, "event state")
			nic, _ := s.Report(&f, In{}, nil)
			require.NotNil(t, nic)
			assert.Equal(t, tc.timeouts, nic.TimeoutResends)
			for i, r := range tc.reqs {
				x := f.s.ring[i]
				assert.Equal(t, r.psn, x.psn, "ring %d", i)
				assert.Equal(t, uint32(106), x.bytes, "ring %d", i)
				assert.Equal(t, t0+int64(i)*1000, x.t, "ring %d", i)
			}
		})
	}
}

// TestFlowSize checks that a flow holds 24 bytes of NIC state, as the
// analyzer's flow did before the stage (a pointer and the first
// request), and that a flow's state is 160 bytes until its first NAK,
// resend, CNP or CE mark.
func TestFlowSize(t *testing.T) {
	assert.Equal(t, uintptr(24), unsafe.Sizeof(Flow{}))
	assert.Equal(t, uintptr(160), unsafe.Sizeof(state{}))
}

// TestWorstFlowMemory fills every figure of many flows with samples
// spread over every octave, so that each holds its whole histogram (4
// KiB of counts), and CNP candidates, and checks the heap they hold per flow against
// MaxFlowBytes, which the analyzer's TestWorstFlowMemory counts for the
// NIC part of its worst flow.
func TestWorstFlowMemory(t *testing.T) {
	const flows = 200
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fs := make([]Flow, flows)
	for i := range fs {
		n := fs[i].state()
		for fig := range figures {
			for range 5 { // past the histogram's sparse pairs: its counts
				for e := range 63 {
					n.add(fig, int64(1)<<e)
				}
			}
		}
		for c := range maxCands {
			n.addCand(cnpCand{ns: int64(c)})
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / flows
	t.Logf("per flow: %d bytes", per)
	for fig := range figures {
		require.NotNil(t, fs[0].s.stat(fig))
		assert.NotNil(t, fs[0].s.stat(fig).hist, "figure %d holds its histogram", fig)
	}
	assert.LessOrEqual(t, per, int64(MaxFlowBytes))
	runtime.KeepAlive(fs)
}

// TestQuiet checks which requests nic.Flow.Quiet takes, as its doc
// comment and Request's rules say (the analyzer feeds it every request
// first): only those of a flow with a state and no event so far, in
// order or a capture duplicate, not CE-marked; those enter the ring with
// their PSN, length and time, and the others leave the flow as it was.
func TestQuiet(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	two := []Request{{PSN: 7}, {PSN: 8}} // in order
	for _, tc := range []struct {
		name  string
		fed   []Request // fed to Request before: PSN, Order, Dup, CE
		r     Request
		quiet bool
	}{
		{"the first request: no state", nil, Request{PSN: 7}, false},
		{"the second: its state waits for Request", two[:1], Request{PSN: 8}, false},
		{"in order", two, Request{PSN: 9}, true},
		{"past a gap", two, Request{PSN: 11, Order: Gap}, true},
		{"a capture duplicate", two, Request{PSN: 8, Order: Old, Dup: true}, true},
		{"CE-marked", two, Request{PSN: 9, CE: true}, false},
		{"a resend", two, Request{PSN: 7, Order: Old}, false},
		{"a hole filled", []Request{{PSN: 7}, {PSN: 9, Order: Gap}}, Request{PSN: 8, Order: Fill}, false},
		{"after an event", append(two[:2:2], Request{PSN: 7, Order: Old}), Request{PSN: 9}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Stage
			var f Flow
			for i, r := range tc.fed {
				r.T, r.Bytes, r.Span, r.High = t0+int64(i)*1000, 106, 1, 9
				s.Request(&f, r)
			}
			before := f
			var was state
			if f.s != nil {
				was = *f.s
			}
			r := tc.r
			tq := t0 + int64(len(tc.fed))*1000
			require.Equal(t, tc.quiet, f.Quiet(tq, r.PSN, 200, r.Order, r.Dup, r.CE))
			if !tc.quiet {
				assert.Equal(t, before, f, "the flow as it was")
				if f.s != nil {
					assert.Equal(t, was, *f.s, "the state as it was")
				}
				return
			}
			require.NotNil(t, f.s)
			assert.Nil(t, f.s.events, "no event state")
			require.Equal(t, was.ringN+1, f.s.ringN)
			assert.Equal(t, txRec{psn: r.PSN, bytes: 200, t: tq}, f.s.ring[was.ringH])
		})
	}
}
