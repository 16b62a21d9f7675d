package analyze_test

import (
	"slices"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestCaptureSpan checks the capture's first and last times against the
// earliest and latest of the frames' times (the oracle: the times sorted
// by the test), whatever order the frames come in; a frame without a
// time leaves the span alone.
func TestCaptureSpan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms ...int) []time.Time {
		ts := make([]time.Time, len(ms))
		for i, m := range ms {
			if m >= 0 {
				ts[i] = t0.Add(time.Duration(m) * time.Millisecond)
			} // -1: no time
		}
		return ts
	}
	for _, tc := range []struct {
		name  string
		times []time.Time
	}{
		{"in order", at(0, 1, 2, 3)},
		{"reversed", at(3, 2, 1, 0)},
		{"one earlier than the first, later", at(5, 6, 7, 1, 8)},
		{"equal times", at(4, 4, 4)},
		{"no time first", at(-1, 5, 2, 9)},
		{"no time between", at(5, -1, 2, -1, 9)},
		{"before the zero time", []time.Time{t0, time.Time{}.Add(-time.Hour), t0.Add(time.Second)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := analyze.New(analyze.Options{})
			var timed []time.Time
			for _, ts := range tc.times {
				// Not RDMA: the span counts every frame.
				a.Feed(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: 4, Length: 4}, gplayers.LinkTypeEthernet, []byte{1, 2, 3, 4})
				if !ts.IsZero() {
					timed = append(timed, ts)
				}
			}
			r := a.Finish()
			slices.SortFunc(timed, time.Time.Compare)
			require.NotNil(t, r.Capture.FirstTime)
			require.NotNil(t, r.Capture.LastTime)
			assert.True(t, timed[0].Equal(*r.Capture.FirstTime), "first %v, want %v", *r.Capture.FirstTime, timed[0])
			assert.True(t, timed[len(timed)-1].Equal(*r.Capture.LastTime), "last %v, want %v", *r.Capture.LastTime, timed[len(timed)-1])
		})
	}
}
