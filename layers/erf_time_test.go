package layers_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestERFTime checks the ERF fixed-point timestamp against values worked
// out by hand from its definition (seconds in the high 32 bits, the
// fraction of a second in units of 2^-32 in the low 32).
func TestERFTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		ts   uint64
		want time.Time
	}{
		{"zero", 0, time.Unix(0, 0)},
		{"one and a half seconds", 1<<32 | 0x8000_0000, time.Unix(1, 500_000_000)},
		{"a quarter second", 0x4000_0000, time.Unix(0, 250_000_000)},
		// 2^-32 s = 0.2328 ns: rounds to 0 ns.
		{"smallest fraction", 1, time.Unix(0, 0)},
		// 3 × 2^-32 s = 0.698 ns: rounds to 1 ns.
		{"rounds to the nearest nanosecond", 3, time.Unix(0, 1)},
		{"last second before 2106", 0xFFFF_FFFF<<32 | 0xFFFF_FFFF, time.Unix(0xFFFF_FFFF, 999_999_999+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := layers.ERF{Timestamp: tc.ts}
			assert.True(t, tc.want.Equal(e.Time()), "got %s, want %s", e.Time(), tc.want.UTC())
			assert.Equal(t, time.UTC, e.Time().Location())
		})
	}
}

// TestERFTimestampRoundTrip checks that ERFTimestamp is ERF.Time's inverse
// to the nanosecond.
func TestERFTimestampRoundTrip(t *testing.T) {
	base := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for ns := int64(0); ns < 1_000_000_000; ns += 999_983 {
		for _, off := range []int64{0, 1, 2, 999} {
			want := base.Add(time.Duration(ns + off))
			e := layers.ERF{Timestamp: layers.ERFTimestamp(want)}
			assert.True(t, want.Equal(e.Time()), "%s came back as %s", want, e.Time())
		}
	}
}
