package layers

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

// Solving the UDP source port of a RoCE v2 packet from its ICRC.
//
// Some capture tools (the ConnectX NIC sniffer) write UDP source port 4791
// on RoCE v2 packets whose ICRC was computed over the real source port
// (the ECMP entropy port), so the ICRC fails as captured. A CRC is affine
// in the bits it covers: XORing δ into two covered bytes changes the CRC
// by the raw CRC (initial value 0, no final complement) of δ followed by
// m zero bytes, m being the number of covered bytes after them. In the
// ring GF(2)[x]/P that is A(δ)·x^(8m): A(δ) is the CRC register after
// the two bytes of δ (a fixed linear map of 16 bits into 32, injective
// since δ(x)·x^32 has degree below 48 and x^32 is a unit mod P), and
// x^(8m) is "shift by m zero bytes". The difference d between the ICRC
// on the wire and the one computed with the captured port is therefore
// d = A(δ)·x^(8m), 32 linear equations in the 16 unknown bits of δ.
// Instead of shifting the 16 columns of A forward by m bytes, the solver
// shifts d back (x is a unit mod P, P having a constant term): y =
// d·x^(−8m), an O(log m) product, and solves the fixed system A(δ) = y
// with a reduced echelon form built once. The system has a solution iff
// y lies in the 16-dimensional image of A, and then exactly one, since A
// is injective: exactly one port makes the ICRC verify. A d that is not
// a port rewrite (a corrupted packet) is a random 32-bit value, which
// lies in that image with probability 2^16/2^32 = 2^−16.

// crcX1 is x (the polynomial) in the reflected representation of
// hash/crc32 (bit 31 is the coefficient of x^0); crcOne is 1.
const (
	crcOne = uint32(1) << 31
	crcX1  = uint32(1) << 30
)

// crcMul multiplies a and b in GF(2)[x]/P, P the CRC-32 (IEEE)
// polynomial, both in the reflected representation.
func crcMul(a, b uint32) uint32 {
	var p uint32
	for ; a != 0; a <<= 1 {
		p ^= b & -(a >> 31)
		b = b>>1 ^ crc32.IEEE&-(b&1)
	}
	return p
}

// crcXInv is x^−1 mod P, reflected: (P + 1)/x, that is P's coefficients
// x^1 … x^31 moved down one power, plus x^31.
const crcXInv = crc32.IEEE<<1&0xFFFFFFFF | 1

// crcShiftBack holds x^(−8·2^k) mod P for k = 0…31: the inverse of a
// shift by 2^k zero bytes. Built once, only read afterwards.
var crcShiftBack = func() (t [32]uint32) {
	v := crcOne
	for range 8 {
		v = crcMul(v, crcXInv)
	}
	for k := range t {
		t[k] = v
		v = crcMul(v, v)
	}
	return t
}()

// crcShiftFwd holds x^(8·2^k) mod P for k = 0…31: a shift by 2^k zero
// bytes. Built once, only read afterwards.
var crcShiftFwd = func() (t [32]uint32) {
	v := crcOne >> 8 // x^8
	for k := range t {
		t[k] = v
		v = crcMul(v, v)
	}
	return t
}()

// crcPow returns the product of the table entries of the bits of n.
func crcPow(t *[32]uint32, n uint32) uint32 {
	v := crcOne
	for ; n != 0; n &= n - 1 {
		v = crcMul(v, t[bits.TrailingZeros32(n)])
	}
	return v
}

// portCRC is A(δ): the CRC register, from 0, after the two bytes of δ
// (big-endian, as the UDP header carries a port).
func portCRC(d uint16) uint32 {
	r := crc32.IEEETable[byte(d>>8)]
	return crc32.IEEETable[byte(r)^byte(d)] ^ r>>8
}

// portBasis is the reduced echelon form of the 32×16 system A(δ) = y:
// pivot[k] is a bit of y, and comb[k] the port bits whose images sum to
// the basis vector that alone among the basis has that bit set.
type portBasis struct {
	pivot [16]uint32
	comb  [16]uint16
}

// srcPortBasis is built once, only read afterwards.
var srcPortBasis = func() (pb portBasis) {
	var vec [16]uint32
	for i := range 16 {
		v, c := portCRC(1<<i), uint16(1)<<i
		for k := range i {
			if v&pb.pivot[k] != 0 {
				v, c = v^vec[k], c^pb.comb[k]
			}
		}
		if v == 0 {
			panic("icrc: the port map of CRC-32 is not injective") // cannot happen: see above
		}
		p := v & -v
		for k := range i {
			if vec[k]&p != 0 {
				vec[k], pb.comb[k] = vec[k]^v, pb.comb[k]^c
			}
		}
		vec[i], pb.pivot[i], pb.comb[i] = v, p, c
	}
	return pb
}()

// srcPortTail is the number of covered bytes after the UDP source port
// of a RoCE v2 packet: the rest of the UDP header (6) and the bytes from
// the BTH through the pad.
func srcPortTail(covered int) uint32 { return uint32(6 + covered) }

// ICRCSrcPortDelta returns how the ICRC of a RoCE v2 packet changes when
// delta is XORed into its UDP source port: the CRC is affine in the
// bits it covers, so the change depends only on delta and on covered,
// the number of bytes the ICRC covers after the UDP header (the length
// of BTH.ICRCCovered()). It costs O(log covered) multiplications in
// GF(2)[x]/P and allocates nothing.
func ICRCSrcPortDelta(covered int, delta uint16) uint32 {
	return crcMul(portCRC(delta), crcPow(&crcShiftFwd, srcPortTail(covered)))
}

// ICRCSrcPortShift returns the factor that SolveICRCSrcPortDelta and
// VerifyICRCSrcPort need for packets with covered bytes after the UDP
// header: x^(−8(covered+6)) mod P, the inverse of shifting the CRC
// register over those bytes. Callers that see many packets of one length
// compute it once.
func ICRCSrcPortShift(covered int) uint32 {
	return crcPow(&crcShiftBack, srcPortTail(covered))
}

// SolveICRCSrcPortDelta returns the δ that, XORed into the UDP source
// port of a RoCE v2 packet, changes its ICRC by diff (the ICRC on the
// wire XOR the one computed with the port as captured), and whether
// there is one; shift is ICRCSrcPortShift of the packet's length. When
// there is one it is the only one (see the comment at the top of this
// file); a diff of 0 gives δ 0. One multiplication, no allocation.
func SolveICRCSrcPortDelta(diff, shift uint32) (delta uint16, ok bool) {
	y := crcMul(diff, shift)
	pb := &srcPortBasis
	for k := range pb.pivot {
		if y&pb.pivot[k] != 0 {
			delta ^= pb.comb[k]
		}
	}
	return delta, portCRC(delta) == y
}

// VerifyICRCSrcPort reports whether the ICRC result r of a RoCE v2 packet
// (Value and Expected as CheckICRC gives them with the captured UDP
// source port captured) verifies with source port port instead; shift is
// ICRCSrcPortShift of the packet's length. One multiplication, no
// allocation.
func VerifyICRCSrcPort(r ICRCResult, captured, port uint16, shift uint32) bool {
	return portCRC(port^captured) == crcMul(r.Value^r.Expected, shift)
}

// SolveICRCSrcPort returns the UDP source port that makes the ICRC of a
// RoCE v2 packet verify, and whether exactly one port does. r is what
// CheckICRC returned for the packet with its UDP header udpHdr (the port
// as captured) and its BTH bth. A packet whose ICRC verifies as captured
// gives its captured port; an unverifiable one, or one that no port
// explains, gives false. The answer, when there is one, is unique: the
// ICRC is affine in the 16 port bits and distinct ports give distinct
// ICRCs (see the comment at the top of this file). A packet damaged
// elsewhere is explained by some port with probability 2^−16. It costs
// O(log n) multiplications in GF(2)[x]/P for a packet of n bytes, not a
// CRC per candidate port, and allocates nothing.
func SolveICRCSrcPort(r ICRCResult, udpHdr []byte, bth *BTH) (port uint16, ok bool) {
	if len(udpHdr) < 8 || bth == nil {
		return 0, false
	}
	captured := binary.BigEndian.Uint16(udpHdr)
	switch r.Status {
	case ICRCOK:
		return captured, true
	case ICRCBad:
	default:
		return 0, false
	}
	delta, ok := SolveICRCSrcPortDelta(r.Value^r.Expected, ICRCSrcPortShift(len(bth.covered)))
	if !ok {
		return 0, false
	}
	return captured ^ delta, true
}
