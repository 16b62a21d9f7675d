package analyze

import "unsafe"

// slab hands out zeroed values of T from arrays allocated together: the
// parts most flows allocate (direction, head log, responses, RTT
// histogram, series) cost one allocation per array, not one each. Each
// array takes twice the bytes of the one before, from slabMin to slabMax
// bytes, so that an analyzer of few flows holds few spare values; slabMax
// is the runtime's largest size class, so that no array is rounded up to
// whole pages.
//
// A value lives as long as any value of its array is referenced. That is
// why the flow state and the NIC state are not in slabs: a report
// releases each flow once no later flow reads it as its peer, and an
// array of them stayed until the last of its flows went (65,536 QPs,
// text report: peak RSS 266 → 297 MiB with both, 272 with the NIC state
// alone), for no time gained.
type slab[T any] struct {
	free  []T     // the values not yet handed out
	bytes uintptr // the size of the last array
}

// slabMin and slabMax bound the size of a slab's arrays, in bytes.
const (
	slabMin = 1 << 10
	slabMax = 32 << 10
)

// get returns a zeroed T.
func (s *slab[T]) get() *T {
	if len(s.free) == 0 {
		var zero T
		s.bytes = min(max(2*s.bytes, slabMin), slabMax)
		s.free = make([]T, max(s.bytes/unsafe.Sizeof(zero), 1))
	}
	v := &s.free[0]
	s.free = s.free[1:]
	return v
}

// slabs are the analyzer's slabs, one for each type a flow allocates,
// and the connections: as one list of values, they were copied at every
// growth of the list (append grows a large slice by a quarter: 117 MB
// allocated and copied for 65,536 connections, a tenth of that run's
// time).
type slabs struct {
	dirs   slab[hostDir]
	logs   slab[headLog]
	resps  slab[Responses]
	rtts   slab[rttHist]
	series slab[flowSeries]
	mixes  slab[flowMix]
	conns  slab[Connection]
}
