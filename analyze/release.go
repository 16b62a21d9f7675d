package analyze

import "runtime/metrics"

// A report calls Options.OnRelease only when it has releaseEvery flows
// or more, and may call it again every releaseCheck flows (releaser).
const (
	releaseEvery = 1 << 15
	releaseCheck = 1 << 13
)

// releaser calls Options.OnRelease for a report being built, whose flows
// are released one after another, so that the heap grows no larger than
// the largest it was at a call (the level; a combined stream takes the
// largest of its shards'):
//   - call: once the flow table is released, before the report is
//     allocated. The heap then is the first level;
//   - maybe: every releaseCheck flows, only when the heap (the objects
//     live and those not yet collected), growing by as much again as
//     since the last check, would pass that level. Until then the
//     flows released wait: a report that keeps few of its flows grows
//     the heap by little, and a collection would only mark the flows
//     not yet released. A report that keeps many of its flows (the
//     text report of many QPs) is collected about as often as by a call
//     every releaseEvery flows; one that keeps every flow (a library's
//     Report of a stream) may be collected more often, so that its peak
//     is no higher;
//   - last: once the last flow is released, for what the caller
//     allocates next (the text report's tables) to take the memory of
//     the flows released since the last call.
type releaser struct {
	fn    func()
	heap  func() uint64 // the bytes of the heap's objects, live or not yet collected
	level uint64        // the largest heap at a call, before fn
	prev  uint64        // the heap at the last check, or after the last call
	ended bool          // last called fn
}

// newReleaser returns the releaser of fn, which reads heap (nil: the
// runtime's metrics); nil when fn is nil.
func newReleaser(fn func(), heap func() uint64) *releaser {
	if fn == nil {
		return nil
	}
	if heap != nil {
		return &releaser{fn: fn, heap: heap}
	}
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap = func() uint64 {
		metrics.Read(samples)
		if samples[0].Value.Kind() != metrics.KindUint64 {
			return 0 // a runtime without it: maybe calls fn every time
		}
		return samples[0].Value.Uint64()
	}
	return &releaser{fn: fn, heap: heap}
}

// call calls fn, noting the heap before and after it.
func (r *releaser) call() {
	if r == nil {
		return
	}
	r.level = max(r.level, r.heap())
	r.fn()
	r.prev = r.heap()
}

// maybe calls fn when the heap, growing by as much again as since the
// last check, would pass the level.
func (r *releaser) maybe() {
	if r == nil {
		return
	}
	h := r.heap()
	grown := h - min(h, r.prev) // a collection since: 0
	r.prev = h
	if h+grown >= r.level {
		r.call()
	}
}

// inherit raises the level to o's (a shard's releaser, whose stream a
// combined one continues).
func (r *releaser) inherit(o *releaser) {
	if r != nil && o != nil {
		r.level = max(r.level, o.level)
	}
}

// last calls fn, the first time only.
func (r *releaser) last() {
	if r == nil || r.ended {
		return
	}
	r.ended = true
	r.call()
}
