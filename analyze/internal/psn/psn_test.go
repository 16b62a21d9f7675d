package psn_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/analyze/internal/psn"
)

// TestSerial checks PSN arithmetic across the 24-bit wrap against the
// differences worked out by hand (IBTA 9.7.1: PSNs are modulo 2^24).
func TestSerial(t *testing.T) {
	for _, tc := range []struct {
		a, b uint32
		diff int32
	}{
		{5, 3, 2},
		{3, 5, -2},
		{2, 0xFFFFFF, 3},
		{0xFFFFFF, 2, -3},
		{0x800000, 0, -0x800000}, // half the space: the sign bit
		{0x7FFFFF, 0, 0x7FFFFF},
	} {
		assert.Equal(t, tc.diff, psn.Diff(tc.a, tc.b), "%#x − %#x", tc.a, tc.b)
		assert.Equal(t, tc.a, psn.Add(tc.b, int64(tc.diff)), "%#x + %d", tc.b, tc.diff)
	}
}
