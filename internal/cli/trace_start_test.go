package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTraceNeverBeforeCapture: a flow's first throughput sample belongs
// to an interval that began before the capture's first frame when that
// frame is not on an interval's boundary; its counter value is placed at
// the capture's start, never at a negative timestamp (Perfetto refuses
// those).
func TestTraceNeverBeforeCapture(t *testing.T) {
	for _, shift := range []time.Duration{0, 700*time.Microsecond + 123, 999 * time.Millisecond} {
		t.Run(shift.String(), func(t *testing.T) {
			dir := t.TempDir()
			in, out := filepath.Join(dir, "mix.pcap"), filepath.Join(dir, "t.json")
			shiftCapture(t, "../../testdata/mix_small.pcap", in, shift)
			var stdout, stderr bytes.Buffer
			require.Equal(t, ExitOK, Run(context.Background(), []string{"--trace", out, in}, &stdout, &stderr), stderr.String())
			b, err := os.ReadFile(out)
			require.NoError(t, err)
			var tr struct {
				TraceEvents []struct {
					Ph   string  `json:"ph"`
					Name string  `json:"name"`
					Ts   float64 `json:"ts"`
				} `json:"traceEvents"`
			}
			require.NoError(t, json.Unmarshal(b, &tr))
			firsts := 0
			seen := map[string]bool{}
			for _, ev := range tr.TraceEvents {
				if ev.Ph == "M" {
					continue
				}
				assert.GreaterOrEqual(t, ev.Ts, 0.0, "%s %s", ev.Ph, ev.Name)
				if ev.Ph == "C" && !seen[ev.Name] {
					seen[ev.Name] = true
					if ev.Ts == 0 {
						firsts++
					}
				}
			}
			assert.NotZero(t, firsts, "a flow that starts with the capture has its first value at 0")
		})
	}
}
