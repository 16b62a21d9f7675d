package pfc_test

import (
	"fmt"
	"net"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/pfc"
	"github.com/roce-dissect/roce-dissect/layers"
)

// A switch port pauses priority 3 with the longest pause time, refreshes
// the pause 100 µs later and releases it with an XON at 250 µs: one
// stretch of 250 µs, a storm beyond a threshold of 100 µs.
func Example() {
	t := pfc.New(pfc.Config{LinkSpeed: 100e9, Storm: 100 * time.Microsecond})
	src := net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	xoff := &layers.MACControl{Opcode: layers.MACControlOpcodePFC, ClassEnableVector: 1 << 3}
	xoff.PauseTimes[3] = 0xFFFF // 335.539 µs at 100 Gb/s
	xon := &layers.MACControl{Opcode: layers.MACControlOpcodePFC, ClassEnableVector: 1 << 3}
	t.Frame(1, t0, src, xoff)
	t.Frame(2, t0.Add(100*time.Microsecond), src, xoff)
	t.Frame(3, t0.Add(250*time.Microsecond), src, xon)

	s := t.Snapshot()
	for _, p := range s.Stats() {
		fmt.Printf("%s %s priority %d: %d frames (%d XOFF, %d XON), paused %s\n",
			p.SrcMAC, p.Kind, *p.Priority, p.Frames, p.XOFFFrames, p.XONFrames, time.Duration(p.PausedNs))
	}
	for _, st := range s.Storms() {
		fmt.Printf("storm from frame %d: %s without a break, beyond %s\n", st.Frame, st.Paused, st.Threshold)
	}
	from, to := t0.Add(200*time.Microsecond), t0.Add(time.Millisecond)
	fmt.Println("priority 3 paused between 200 µs and 1 ms:", time.Duration(s.Timeline().Overlap(3, from.UnixNano(), to.UnixNano())))
	// Output:
	// 02:00:00:00:00:01 pfc priority 3: 3 frames (2 XOFF, 1 XON), paused 250µs
	// storm from frame 1: 250µs without a break, beyond 100µs
	// priority 3 paused between 200 µs and 1 ms: 50µs
}
