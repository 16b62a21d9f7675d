package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestCollector follows the collector over heaps that a report's release
// of flows could show: it collects at the first call, and later only when
// the heap, growing by its last growth, would pass its level at the first.
// The heap model frees what a collection frees (garbage) and nothing else.
func TestCollector(t *testing.T) {
	type call struct {
		heap, garbage uint64 // the heap's bytes before the call, and how many of them a collection frees
		collects      bool
	}
	for _, tc := range []struct {
		name  string
		calls []call
	}{
		{"the first call collects", []call{{heap: 100, garbage: 20, collects: true}}},
		{"a call right after the first does not", []call{
			{heap: 100, garbage: 20, collects: true},
			{heap: 82, garbage: 2, collects: false},
		}},
		{"a heap growing toward the level collects before it would pass it", []call{
			{heap: 100, garbage: 20, collects: true}, // 80 after
			{heap: 88, garbage: 10, collects: false}, // 88 + 8 ≤ 100
			{heap: 96, garbage: 20, collects: true},  // 96 + 8 > 100: 76 after
			{heap: 86, garbage: 10, collects: false}, // 86 + 10 ≤ 100
			{heap: 96, garbage: 30, collects: true},  // 96 + 10 > 100
		}},
		{"a heap shrinking never collects", []call{
			{heap: 100, garbage: 50, collects: true},
			{heap: 40, garbage: 5, collects: false},
			{heap: 30, garbage: 5, collects: false},
		}},
		{"a report larger than the flow table collects every time", []call{
			{heap: 100, garbage: 10, collects: true},
			{heap: 120, collects: true},
			{heap: 140, collects: true},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var heap, garbage uint64
			collections := 0
			c := &collector{heap: func() uint64 { return heap }, gc: func() { heap -= garbage; garbage = 0; collections++ }}
			for i, cl := range tc.calls {
				heap, garbage = cl.heap, cl.garbage
				before := collections
				c.release()
				assert.Equal(t, cl.collects, collections > before, "call %d", i)
			}
		})
	}
}
