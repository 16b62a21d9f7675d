package cli_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestTraceCapturePoints: the files of capture points are a process
// each, with a slice per message each saw, on the reference file's clock
// (the second runs 1 ms ahead), and every finding of the points' report
// is an instant.
func TestTraceCapturePoints(t *testing.T) {
	nak, err := synth.ParsePSNList("+5")
	require.NoError(t, err)
	files, _ := writePoints(t, synth.PointsConfig{Base: synth.Config{Scenario: "write-bw", Messages: 6, Nanos: true, Impairments: synth.Impairments{NAK: nak}},
		Points: []synth.Point{{Name: "a"}, {Name: "b", ClockOffset: time.Millisecond, Delay: 2 * time.Microsecond}}})
	rep, tr := runTrace(t, files[0], files[1])
	procs := map[string]int{}
	slices := map[int]int{}
	findings := 0
	for _, ev := range tr.TraceEvents {
		switch {
		case ev.Ph == "M" && ev.Name == "process_name":
			procs[ev.Args["name"].(string)] = ev.Pid
		case ev.Ph == "X":
			slices[ev.Pid]++
			assert.GreaterOrEqual(t, *ev.Ts, 0.0)
			// b sees the last packets 2 µs after the report's end, a's.
			assert.LessOrEqual(t, *ev.Ts+*ev.Dur, rep.Capture.Duration*1e6+2+1e-3, "within the capture's span, on its clock")
		case ev.Ph == "i":
			findings++
		}
	}
	assert.Equal(t, map[string]int{files[0]: 1, files[1]: 2}, procs, "a process per capture point")
	assert.Equal(t, len(rep.Findings), findings)
	messages := 0
	for _, f := range rep.Flows {
		messages += f.Messages.Count
	}
	require.NotZero(t, messages)
	assert.Equal(t, map[int]int{1: messages, 2: messages}, slices, "each point saw every message")
}
