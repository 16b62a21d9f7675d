package analyze

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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
	assert.Nil(t, newReleaser(nil))
	assert.Equal(t, 4, calls)
}

// TestReleaserReadsHeap: the releaser of the runtime reads a heap that
// holds what the test allocated.
func TestReleaserReadsHeap(t *testing.T) {
	r := newReleaser(func() {})
	before := r.heap()
	keep := make([]byte, 8<<20)
	after := r.heap()
	assert.GreaterOrEqual(t, after, before+uint64(len(keep))-1<<20, "an 8 MB allocation")
	keep[0] = 1
}
