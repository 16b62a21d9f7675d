package analyze

import (
	"encoding/binary"
	"hash/fnv"
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

func (s *sketch) add(k flowKey) {
	if s.bits == nil {
		s.bits = make([]uint64, sketchBits/64)
	}
	var buf [16 + 16 + 2 + 2 + 4]byte
	src, dst := k.src.IP.As16(), k.dst.IP.As16()
	copy(buf[0:16], src[:])
	copy(buf[16:32], dst[:])
	binary.BigEndian.PutUint16(buf[32:34], k.src.LID)
	binary.BigEndian.PutUint16(buf[34:36], k.dst.LID)
	binary.BigEndian.PutUint32(buf[36:40], k.qp)
	h := fnv.New64a()
	_, _ = h.Write(buf[:])
	v := h.Sum64() % sketchBits
	s.bits[v/64] |= 1 << (v % 64)
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

func popcount(w uint64) int { return bits.OnesCount64(w) }
