package cli

import "sync/atomic"

// collectBeside returns the command's analyze.Options.OnRelease, which
// Finish and a report stream call once the flow table is released and
// after every 32,768 flows reported: a collection by gc (runtime.GC), so
// that the memory of the flows released goes to what the report
// allocates, started on a goroutine of its own. The report goes on being
// built while the collector marks, on another core (-j 1 leaves one
// idle, and the shards are done by then), where runtime.GC called in
// place stopped it until the collection ended: the text report of
// 200,000 one-packet flows waited for seven. A call while a collection
// runs starts no other.
func collectBeside(gc func()) func() {
	var running atomic.Bool
	return func() {
		if running.Swap(true) {
			return
		}
		go func() {
			defer running.Store(false)
			gc()
		}()
	}
}
