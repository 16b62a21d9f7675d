package pfc

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestStretchesBounded: the stretches kept for the timeline stay within
// MaxStretches however many there were, while every sender's own figures
// stay exact.
func TestStretchesBounded(t *testing.T) {
	pt := New(Config{LinkSpeed: 100e9, Storm: 200 * time.Millisecond})
	const pauses = MaxStretches + 1000
	xoff := &layers.MACControl{Opcode: layers.MACControlOpcodePFC, ClassEnableVector: 1 << 3}
	xoff.PauseTimes[3] = 1000
	xon := &layers.MACControl{Opcode: layers.MACControlOpcodePFC, ClassEnableVector: 1 << 3}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range pauses {
		src := net.HardwareAddr{2, 0, 0, 0, 0, byte(i % 2)}
		at := t0.Add(time.Duration(i) * 10 * time.Microsecond)
		pt.Frame(uint64(2*i+1), at, src, xoff)
		pt.Frame(uint64(2*i+2), at.Add(time.Microsecond), src, xon)
	}
	assert.Equal(t, MaxStretches, pt.stretches)
	n := 0
	for _, s := range pt.byKey {
		n += len(s.stretches)
		assert.Equal(t, int64(pauses/2)*int64(time.Microsecond), s.PausedNs, "the figures count every stretch")
	}
	assert.Equal(t, MaxStretches, n)
}
