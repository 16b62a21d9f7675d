package analyze

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/gopacket/gopacket"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestReleaser: the calls a releaser makes, on a heap whose sizes the
// test sets, in MB. Each step sets the heap, then calls, checks or ends;
// a call of fn collects down to the step's collected size. The level is
// the heap at the first call, before it collects.
func TestReleaser(t *testing.T) {
	type step struct {
		op        string // "call", "maybe", "last"
		heap      uint64 // the heap before the step
		collected uint64 // the heap after fn, if the step calls it
		calls     int    // fn's calls so far, after the step
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"the first call always", []step{{"call", 100, 90, 1}}},
		{"a report that grows the heap by little is not collected", []step{
			{"call", 100, 90, 1}, {"maybe", 91, 0, 1}, {"maybe", 92, 0, 1}, {"maybe", 95, 0, 1}, {"maybe", 97, 0, 1},
		}},
		{"the heap would pass the level by the next check", []step{
			{"call", 100, 90, 1}, {"maybe", 94, 0, 1}, {"maybe", 98, 80, 2}, // 98 + 4 ≥ 100
			{"maybe", 85, 0, 2}, {"maybe", 92, 0, 2}, {"maybe", 99, 70, 3}, // 99 + 7 ≥ 100
		}},
		{"the heap at the level", []step{{"call", 100, 90, 1}, {"maybe", 100, 50, 2}}},
		{"a collection between two checks grows nothing", []step{
			{"call", 100, 90, 1}, {"maybe", 93, 0, 1}, {"maybe", 60, 0, 1}, {"maybe", 61, 0, 1},
		}},
		{"the level is the largest heap at a call", []step{
			{"call", 100, 90, 1}, {"call", 120, 95, 2}, {"maybe", 105, 0, 2}, {"maybe", 113, 60, 3}, // 113 + 8 ≥ 120
		}},
		{"last calls once", []step{
			{"call", 100, 90, 1}, {"maybe", 91, 0, 1}, {"last", 91, 20, 2}, {"last", 20, 10, 2},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var heap, collected uint64
			calls := 0
			r := &releaser{
				fn:   func() { calls++; heap = collected },
				heap: func() uint64 { return heap << 20 },
			}
			for i, s := range tc.steps {
				heap, collected = s.heap, s.collected
				switch s.op {
				case "call":
					r.call()
				case "maybe":
					r.maybe()
				case "last":
					r.last()
				}
				require.Equal(t, s.calls, calls, "step %d: %s at %d MB", i, s.op, s.heap)
			}
		})
	}
}

// TestReleaserInherit: a combined stream's releaser does not pass the
// level of its shards' (the largest), and a nil releaser (no OnRelease,
// or too few flows) calls nothing.
func TestReleaserInherit(t *testing.T) {
	heap, calls := uint64(0), 0
	mk := func() *releaser {
		return &releaser{fn: func() { calls++ }, heap: func() uint64 { return heap }}
	}
	shards := []*releaser{mk(), mk(), nil}
	for i, h := range []uint64{300, 200} {
		heap = h
		shards[i].call()
	}
	r := mk()
	for _, s := range shards {
		r.inherit(s)
	}
	heap = 250
	r.call()
	assert.Equal(t, uint64(300), r.level)
	heap = 280
	r.maybe() // 280 + 30 ≥ 300
	assert.Equal(t, 4, calls)

	var none *releaser
	assert.NotPanics(t, func() { none.call(); none.maybe(); none.last(); none.inherit(r); r.inherit(none) })
	assert.Nil(t, newReleaser(nil, nil))
	assert.Equal(t, 4, calls)
}

// TestReleaserReadsHeap: the releaser of the runtime reads a heap that
// holds what the test allocated (no collection in between: one would
// shrink it).
func TestReleaserReadsHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	runtime.GC()
	r := newReleaser(func() {}, nil)
	before := r.heap()
	keep := make([]byte, 8<<20)
	after := r.heap()
	assert.GreaterOrEqual(t, after, before+uint64(len(keep))-1<<20, "an 8 MB allocation")
	keep[0] = 1
}

// TestReleaserInReports: Finish and a stream call OnRelease by the rule
// of their releaser (on a heap the test sets): at the start, at a check
// only when the heap would pass the level, and once after the last flow,
// when no flow is left in the flow table.
func TestReleaserInReports(t *testing.T) {
	const n = 2*releaseEvery + 1 // 8 checks
	only := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, AckReq: true}, gopacket.Payload(make([]byte, 16)))
	for _, tc := range []struct {
		name      string
		stream    bool
		collected uint64 // the heap after a call (100 before the first)
		calls     int
	}{
		{"Finish, the heap back below the level", false, 50, 1 + 1},
		{"Finish, the heap at the level", false, 100, 1 + n/releaseCheck + 1},
		{"FinishStream, the heap back below the level", true, 50, 2 + 1},
		{"FinishStream, the heap at the level", true, 100, 2 + n/releaseCheck + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a *Analyzer
			heap := uint64(100)
			var left []int // the flows in the flow table at each call
			release := func() {
				k := 0
				for _, f := range a.flowList {
					if f != nil {
						k++
					}
				}
				left = append(left, k)
				heap = tc.collected
			}
			a = New(Options{NoICRC: true, OnRelease: release, heap: func() uint64 { return heap }})
			feedIdleFlows(a, only, n)
			if tc.stream {
				s := a.FinishStream()
				var f Flow
				for s.Next(&f) {
					s.Reuse(&f)
				}
				s.End()
			} else {
				require.Len(t, a.Finish().Flows, n)
			}
			require.Len(t, left, tc.calls)
			assert.Equal(t, n, left[0], "the first call, before any flow is released")
			assert.Zero(t, left[len(left)-1], "the last call, every flow released")
		})
	}
}
