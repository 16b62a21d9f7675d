package analyze

import (
	"encoding/binary"
	"math"
	"math/bits"
)

// sketch estimates the number of distinct flow keys by linear counting
// over a fixed bitmap (128 KiB, allocated on first use): memory stays flat
// however many flows are dropped, and the estimate is within about 1 %
// up to a few million keys.
type sketch struct {
	bits []uint64
}

const sketchBits = 1 << 20

// addHash adds a key by its hash (flowKey.hash).
func (s *sketch) addHash(h uint64) {
	if s.bits == nil {
		s.bits = make([]uint64, sketchBits/64)
	}
	v := h % sketchBits
	s.bits[v/64] |= 1 << (v % 64)
}

// hash is a 64-bit hash of the flow key: its addresses, LIDs, tunnel and
// QP.
func (k flowKey) hash() uint64 {
	var buf [16 + 16 + 2 + 2 + 1 + 4 + 4]byte
	src, dst := k.src.IP.As16(), k.dst.IP.As16()
	copy(buf[0:16], src[:])
	copy(buf[16:32], dst[:])
	binary.BigEndian.PutUint16(buf[32:34], k.src.LID)
	binary.BigEndian.PutUint16(buf[34:36], k.dst.LID)
	buf[36] = byte(k.tun.kind)
	binary.BigEndian.PutUint32(buf[37:41], k.tun.id)
	binary.BigEndian.PutUint32(buf[41:45], k.qp)
	// FNV-1a, inline (hash/fnv's interface value would escape and
	// allocate for every packet of a dropped flow). It leaves keys that
	// differ in their last bytes (the QP) close together in the low bits:
	// fmix64 spreads them before the bit is taken.
	h := uint64(14695981039346656037)
	for _, c := range buf {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return fmix64(h)
}

func (s *sketch) estimate() uint64 {
	if s.bits == nil {
		return 0
	}
	zeros := 0
	for _, w := range s.bits {
		zeros += 64 - popcount(w)
	}
	if zeros == 0 {
		zeros = 1
	}
	return uint64(math.Round(-sketchBits * math.Log(float64(zeros)/sketchBits)))
}

// fmix64 is the finalizer of MurmurHash3: every input bit flips about
// half the output bits.
func fmix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

func popcount(w uint64) int { return bits.OnesCount64(w) }
