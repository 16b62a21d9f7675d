package cli

import (
	"runtime"
	"runtime/metrics"
	"sync"
)

// collector is the command's analyze.Options.OnRelease. Finish and a
// report stream call it once the flow table is released, then after every
// 32,768 flows turned into reports, so that the memory of the flows
// released goes to what the report allocates and the heap peaks at about
// the larger of the flow table and the report rather than their sum.
//
// A collection marks every flow not yet released: one at every call cost
// the text report of 200,000 one-packet flows eight collections, a fifth
// of its time. So the collector collects at the first call, the heap at
// its fullest, and then only when the heap, growing as much again as it
// grew since the last call, would pass where it stood at the first: the
// heap peaks where it did, with the collections that needs (four there).
type collector struct {
	mu          sync.Mutex
	limit, last uint64 // the heap at the first call, before it collected, and at the last call, after
	heap        func() uint64
	gc          func()
}

// newCollector returns a collector of the process's heap.
func newCollector() *collector {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}} // live and not yet swept
	return &collector{
		heap: func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() },
		gc:   runtime.GC,
	}
}

// release collects the garbage at the first call, and later when the
// heap could pass its level at the first call before the next.
func (c *collector) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.heap()
	first := c.limit == 0
	if first {
		c.limit = now
	}
	if grown := now - min(c.last, now); first || now+grown > c.limit {
		c.gc()
		now = c.heap()
	}
	c.last = now
}
