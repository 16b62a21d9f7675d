package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// TestSwitchMirrorCLI: a capture a switch mirror wrapped, and one with
// PFC frames, as a user sees them: the capture summary names the
// encapsulation and the tunnels, -P marks each packet's, -V shows the
// outer headers and the pause frames, the text report has its Pause
// section and the JSON its pause array; -j 1 and -j 4 agree.
func TestSwitchMirrorCLI(t *testing.T) {
	dir := t.TempDir()
	chain, err := wrap.Parse("erspan3,vxlan")
	require.NoError(t, err)
	wrapped := generate(t, dir, "mirror.pcap", synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 8, Wrap: chain})
	ps, err := synth.ParsePauseSpec(synth.PausePFC, false, "3,episodes=2")
	require.NoError(t, err)
	pfc := generate(t, dir, "pfc.pcap", synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 8, Pause: synth.PauseConfig{Streams: []synth.PauseStream{ps}, LinkSpeedGbps: 25}})

	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{wrapped}, []string{"arrived encapsulated:", "in erspan3/vxlan", "erspan3 session 1, 192.0.2.1 → 192.0.2.2:", "vxlan VNI 5001, 172.16.0.1 → 172.16.0.2:"}},
		{[]string{"-P", "-c", "5", wrapped}, []string{"[in erspan3 session 1 / vxlan VNI 5001] ICRC=ok"}},
		{[]string{"-V", "-c", "1", wrapped}, []string{"Generic Routing Encapsulation", "Encapsulated Remote Switch Packet ANalysis Type III, Session 1", "Virtual eXtensible Local Area Network, VNI: 5001", "Invariant CRC"}},
		{[]string{"--link-speed", "25", pfc}, []string{"Pause (PFC)", "timed at 25.00 Gb/s", "02:50:46:43:01:01  pfc", "flows on a priority while it was paused:"}},
		{[]string{"--link-speed", "25", "-P", "-c", "1", pfc}, []string{"PFC prio 3 65535 quanta (1.342157ms)"}},
		{[]string{"-V", "-c", "1", pfc}, []string{"MAC Control, PFC", "Class-Enable Vector: 0x0008", "Priority 3: 65535 quanta (335.539µs at 100 Gb/s)"}},
	} {
		t.Run(strings.Join(tc.args[:len(tc.args)-1], " "), func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"--color", "never"}, tc.args...)...)
			require.Equal(t, 0, code, errOut)
			for _, w := range tc.want {
				assert.True(t, strings.Contains(out, w), "output lacks %q:\n%s", w, out)
			}
		})
	}

	var reps [2]analyze.Report
	for i, j := range []string{"1", "4"} {
		code, out, errOut := runCLI("-o", "json", "-j", j, "--link-speed", "25", pfc)
		require.Equal(t, 0, code, errOut)
		require.NoError(t, json.Unmarshal([]byte(out), &reps[i]))
	}
	require.Len(t, reps[0].Pause, 1)
	assert.Equal(t, uint64(4), reps[0].Pause[0].Frames)
	assert.Equal(t, 25e9, reps[0].Capture.LinkSpeedBps)
	assert.Equal(t, reps[0].Pause, reps[1].Pause)
}

// TestSwitchFlagsRefused: the pause flags' bad values are usage errors.
func TestSwitchFlagsRefused(t *testing.T) {
	dir := t.TempDir()
	file := generate(t, dir, "w.pcap", synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 2})
	for _, args := range [][]string{
		{"--link-speed", "0"}, {"--link-speed", "-5"}, {"--link-speed", "NaN"}, {"--link-speed", "2e6"},
		{"--pause-storm", "0s"}, {"--pause-storm", "-1ms"},
		{"--dscp-priority", "64=1"}, {"--dscp-priority", "26=8"}, {"--dscp-priority", "26"}, {"--dscp-priority", "x=1"},
	} {
		code, _, errOut := runCLI(append(args, file)...)
		assert.Equal(t, 2, code, "%v: %s", args, errOut)
		assert.NotEmpty(t, errOut)
	}
	code, _, errOut := runCLI("--dscp-priority", "26=5,48=6", "--pause-storm", "1s", "--link-speed", "400", file)
	assert.Equal(t, 0, code, errOut)
}
