package analyze

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
)

// flowIndex finds a flow by its key in one probe: an open-addressing
// table (linear probing) of flow indices, each slot 8 bytes: the key's
// 32-bit hash and the flow's index. A packet reads one slot (the next
// ones of its probe are mostly in the same cache line), then the flow it
// names, which it checks against the key. Before, a 4,096-slot flow
// cache stood in front of a map of directions and, in each direction, a
// map of QPs: with 65,536 QP pairs, each between hosts of their own,
// nearly every packet missed the cache and took three to four cache
// misses more in the maps (issue 24).
//
// The index is at most 7/8 full, as a Go map: an idle flow costs 10 to
// 20 bytes of it, within the bound TestIdleFlowMemory sets. A
// lookup reads 1.4 to 4.5 slots on average (7/16 to 7/8 full; linear
// probing), a new flow 2 to 32.
//
// The hash is keyed by a seed of each Analyzer's own, so that a crafted
// capture cannot choose keys that share a probe sequence.
type flowIndex struct {
	slots []flowSlot
	used  int
	seed  [6]uint64
}

// flowSlot is a slot of the flow index.
type flowSlot struct {
	hash uint32 // the low 32 bits of the key's hash: where it goes, and a check before the flow is read
	idx  int32  // the flow's index plus one; 0: empty
}

// flowIndexMin is the size of the index when it holds its first flow.
const flowIndexMin = 64

// newFlowIndex returns an empty index with a fresh seed.
func newFlowIndex() flowIndex {
	var x flowIndex
	for i := range x.seed {
		x.seed[i] = rand.Uint64()
	}
	return x
}

// hash hashes a flow key as flows are told apart: what hostsOf keeps of
// the addresses (without building it), the tunnel and the destination QP.
func (x *flowIndex) hash(src, dst *Addr, tun flowTunnel, qp uint32) uint32 {
	s, d := src.IP.As16(), dst.IP.As16()
	be := binary.BigEndian
	tail := uint64(src.LID) | uint64(dst.LID)<<16 | uint64(addrKind(*src)<<2|addrKind(*dst))<<32 | uint64(tun.kind)<<40
	h := mum(be.Uint64(s[:8])^x.seed[0], be.Uint64(s[8:])^x.seed[1]) ^
		mum(be.Uint64(d[:8])^x.seed[2], be.Uint64(d[8:])^x.seed[3]) ^
		mum(tail^x.seed[4], (uint64(qp)|uint64(tun.id)<<32)^x.seed[5])
	return uint32(mum(h, 0x9E3779B97F4A7C15))
}

// mum multiplies a and b into 128 bits and folds them (wyhash's mix).
func mum(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// find returns the index of the flow of key k, whose key hashes to h, if
// there is one.
func (a *Analyzer) find(k *flowKey, h uint32) (int32, bool) {
	x := &a.index
	if len(x.slots) == 0 {
		return 0, false
	}
	mask := uint32(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s.idx == 0 {
			return 0, false
		}
		if s.hash != h {
			continue
		}
		f := a.flowList[s.idx-1]
		// Equal addresses have equal hosts' keys; unequal ones (an IPv6
		// zone) may still have, and those are compared.
		if f.qp == k.qp && f.dir.tun == k.tun && (f.dir.src == k.src && f.dir.dst == k.dst || hostsOf(f.dir.src, f.dir.dst, k.tun) == hostsOf(k.src, k.dst, k.tun)) {
			return s.idx - 1, true
		}
	}
}

// add puts the flow of index idx, whose key hashes to h, in the index.
func (x *flowIndex) add(h uint32, idx int32) {
	if (x.used+1)*8 > len(x.slots)*7 {
		x.grow()
	}
	x.put(flowSlot{hash: h, idx: idx + 1})
	x.used++
}

// put places s in the first free slot of its probe sequence.
func (x *flowIndex) put(s flowSlot) {
	mask := uint32(len(x.slots) - 1)
	i := s.hash & mask
	for x.slots[i].idx != 0 {
		i = (i + 1) & mask
	}
	x.slots[i] = s
}

// grow doubles the index (flowIndexMin at first), placing its flows
// again by the hashes it holds.
func (x *flowIndex) grow() {
	old := x.slots
	x.slots = make([]flowSlot, max(flowIndexMin, 2*len(old)))
	for _, s := range old {
		if s.idx != 0 {
			x.put(s)
		}
	}
}
