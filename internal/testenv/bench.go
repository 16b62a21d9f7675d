package testenv

import (
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"time"
)

// PeakHeap runs fn and returns the most heap its objects held meanwhile
// (sampled every millisecond, plus at the end). It collects the garbage
// first, so that the garbage of the run before (a benchmark's iteration
// before, which the command leaves to the collector as it ends) does not
// count as this run's.
func PeakHeap(fn func()) uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	var peak uint64
	var mu sync.Mutex
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			v := read()
			mu.Lock()
			peak = max(peak, v)
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return max(peak, read())
}

// CPUTime returns the CPU time the process has used (user and system),
// in nanoseconds: what a benchmark costs when other work shares the cores.
func CPUTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
