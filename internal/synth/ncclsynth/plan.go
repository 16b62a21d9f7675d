package ncclsynth

// NCCL's buffers and steps (src/include/collectives.h, device.h): a
// connection's receive buffer is NCCL_STEPS steps of 512 KiB (Simple,
// buffSize/NCCL_STEPS); a receive (one CTS entry) takes sliceSteps of
// them.
const (
	ncclSteps = 8
	stepBytes = 512 << 10
	// alignBytes is the alignment of a ring AllReduce's chunk (nthreads ×
	// 8 bytes, 512 threads).
	alignBytes = 4096
)

// algo is how a collective kind runs on the ring.
type algo struct {
	chunkSteps, sliceSteps int
	// stepsPerLoop is the sends of a rank per loop (n ranks).
	stepsPerLoop func(n int) int
	// busFactor is nccl-tests' busbw/algbw.
	busFactor func(n int) float64
}

var algos = map[string]algo{
	AllReduce:     {4, 2, func(n int) int { return 2 * (n - 1) }, func(n int) float64 { return 2 * float64(n-1) / float64(n) }},
	AllGather:     {4, 2, func(n int) int { return n - 1 }, func(n int) float64 { return float64(n-1) / float64(n) }},
	ReduceScatter: {4, 2, func(n int) int { return n - 1 }, func(n int) float64 { return float64(n-1) / float64(n) }},
	Broadcast:     {1, 1, func(n int) int { return 1 }, func(int) float64 { return 1 }},
}

// slicesPerChunk is the data messages of one step of a chunk.
func (a algo) slicesPerChunk() int { return a.chunkSteps / a.sliceSteps }

// send is one data message a rank sends in a collective, on one channel.
type send struct {
	bytes int64
	step  int // the step of the algorithm (chunk send), from 0 per channel
	// dep is the receive of the same collective and channel (counted
	// from 0 on the rank's incoming connection) whose data this send
	// reduces or forwards; -1 for none (the rank's own data).
	dep int
}

// elemSize is the datatype's size: float32 when the per-rank count is
// whole, else bytes.
func elemSize(perRank int64) int64 {
	if perRank%4 == 0 {
		return 4
	}
	return 1
}

// channelShare splits e elements over channels: the part of channel ch
// (channels used: min(channels, e); the others get nothing).
func channelShare(e int64, channels, ch int) int64 {
	used := min(int64(channels), e)
	if int64(ch) >= used {
		return 0
	}
	return (int64(ch)+1)*e/used - int64(ch)*e/used
}

// simpleSlices returns the sizes (elements) of the spc slices of a step
// of nelem elements, as prims_simple.h cuts them: each slice
// max(⌈nelem/(16·spc)⌉·16, sliceMax/32) elements, empty ones included.
func simpleSlices(nelem, spc, sliceMax int64) []int64 {
	slice := max((nelem+16*spc-1)/(16*spc)*16, sliceMax/32)
	out := make([]int64, spc)
	for i := range spc {
		out[i] = min(max(nelem-i*slice, 0), slice)
	}
	return out
}

// ringSends returns the data messages rank r (ring position r of n)
// sends on one channel carrying e elements of esize bytes (AllGather,
// ReduceScatter: e of each rank's part) in a collective of kind.
func ringSends(kind string, n, r int, e, esize int64) []send {
	a := algos[kind]
	spc := int64(a.slicesPerChunk())
	chunk := int64(a.chunkSteps*stepBytes) / esize
	sliceMax := int64(a.sliceSteps*stepBytes) / esize
	var out []send
	step := 0
	add := func(nelem int64, first bool, dep func(i int) int) {
		for i, s := range simpleSlices(nelem, spc, sliceMax) {
			d := -1
			if !first {
				d = dep(i)
			}
			out = append(out, send{bytes: s * esize, step: step, dep: d})
		}
		step++
	}
	switch kind {
	case AllReduce:
		align := max(1, alignBytes/esize)
		for off := int64(0); off < e; off += int64(n) * chunk {
			real := min(chunk, (((e-off)+int64(n)-1)/int64(n)+align-1)/align*align)
			for j := range a.stepsPerLoop(n) {
				c := int64(((r-1-j)%n + n) % n)
				nelem := min(max(e-(off+c*real), 0), real)
				base := len(out)
				// Step j reduces (or copies) what step j-1 received.
				add(nelem, j == 0, func(i int) int { return base - int(spc) + i })
			}
		}
	case AllGather, ReduceScatter:
		for off := int64(0); off < e; off += chunk {
			nelem := min(chunk, e-off)
			for j := range a.stepsPerLoop(n) {
				base := len(out)
				add(nelem, j == 0, func(i int) int { return base - int(spc) + i })
			}
		}
	case Broadcast: // from rank 0: the last rank of the ring only receives
		if r == n-1 {
			return nil
		}
		for off := int64(0); off < e; off += chunk {
			base := len(out)
			add(min(chunk, e-off), r == 0, func(i int) int { return base + i })
		}
	}
	return out
}

// perRank returns the elements each rank contributes per channel
// computation: the whole buffer (AllReduce, Broadcast) or one rank's
// part (AllGather, ReduceScatter), and the datatype's size.
func perRank(co Collective, n int) (elems, esize int64) {
	b := co.Size
	if co.Kind == AllGather || co.Kind == ReduceScatter {
		b /= int64(n)
	}
	esize = elemSize(b)
	return b / esize, esize
}
