package cli

import (
	"fmt"
	"strings"

	"github.com/roce-dissect/roce-dissect/layers"
)

// PFC and 802.3x PAUSE frames in -P's lines and -V's tree.

// macControl shows a PAUSE or PFC frame, each pause time also in time at
// the link speed.
func (t *tree) macControl(v *layers.MACControl, linkBps float64) {
	t.title("MAC Control, %s", v.Opcode)
	t.field(1, "Opcode", "%s (0x%04x)", v.Opcode, uint16(v.Opcode))
	switch v.Opcode {
	case layers.MACControlOpcodePause:
		t.field(1, "Pause Time", "%d quanta (%s at %g Gb/s)", v.PauseTime, layers.PauseDuration(v.PauseTime, linkBps), linkBps/1e9)
	case layers.MACControlOpcodePFC:
		t.field(1, "Class-Enable Vector", "0x%04x", v.ClassEnableVector)
		for i := range 8 {
			if v.Enabled(i) {
				t.field(2, fmt.Sprintf("Priority %d", i), "%d quanta (%s at %g Gb/s)", v.PauseTimes[i], layers.PauseDuration(v.PauseTimes[i], linkBps), linkBps/1e9)
			}
		}
	}
}

// pauseSummary is -P's line of a PAUSE or PFC frame: "PFC prio 3: 65535
// quanta (335.539µs)"; XON for quanta 0.
func pauseSummary(v *layers.MACControl, linkBps float64) string {
	time := func(q uint16) string {
		if q == 0 {
			return "XON"
		}
		return fmt.Sprintf("%d quanta (%s)", q, layers.PauseDuration(q, linkBps))
	}
	switch v.Opcode {
	case layers.MACControlOpcodePause:
		return "802.3x PAUSE: " + time(v.PauseTime)
	case layers.MACControlOpcodePFC:
		var parts []string
		for i := range 8 {
			if v.Enabled(i) {
				parts = append(parts, fmt.Sprintf("prio %d %s", i, time(v.PauseTimes[i])))
			}
		}
		if len(parts) == 0 {
			return "PFC: no priority enabled"
		}
		return "PFC " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("MAC Control %s", v.Opcode)
}
