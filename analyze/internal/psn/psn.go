// Package psn is the arithmetic of packet sequence numbers: 24-bit serial
// numbers, which wrap and compare by the sign of their 24-bit difference.
//
//	psn.Diff(2, 0xFFFFFF) // 3: 2 comes 3 after 0xFFFFFF
//	psn.Add(0xFFFFFF, 1)  // 0
package psn

// Mask is the bits of a PSN.
const Mask = 0xFFFFFF

// Diff returns a − b as a signed 24-bit serial difference.
func Diff(a, b uint32) int32 { return int32((a-b)<<8) >> 8 }

// Add returns p + n modulo 2^24.
func Add(p uint32, n int64) uint32 { return uint32(int64(p)+n) & Mask }
