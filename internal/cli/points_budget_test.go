package cli

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestCapturePointsOwnBudget: two capture points of the same traffic
// (a mix of 2,000 QPs: 2,000 CM connections and 2,697 flows, and
// the same packets 2 µs later at a second tap) with --max-connections
// 3000 and --max-flows 4000: the first pass reads both files (twice the
// connections and flows, more than the caps of the run), but the combined report, whose budget is its own, tracks
// every connection and flow of the traffic, as the one file's report
// does, and says no table was full.
func TestCapturePointsOwnBudget(t *testing.T) {
	dir := t.TempDir()
	a := generate(t, dir, "a.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 12000, QPs: 2000, Seed: 7})
	b := filepath.Join(dir, "b.pcap")
	shiftCapture(t, a, b, 2*time.Microsecond)
	caps := []string{"--max-connections", "3000", "--max-flows", "4000", "-o", "json"}
	type report struct {
		Capture struct {
			ConnectionsDropped uint64 `json:"connections_dropped"`
			FlowsDropped       uint64 `json:"flows_dropped"`
		} `json:"capture"`
		Connections []any `json:"connections"`
		Flows       []any `json:"flows"`
		Findings    []struct {
			Kind string `json:"kind"`
		} `json:"findings"`
		Points *struct{} `json:"points"`
	}
	read := func(files ...string) report {
		code, out, errs := runCLI(append(caps, files...)...)
		require.Equal(t, 0, code, errs)
		var r report
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		return r
	}
	one := read(a)
	require.Equal(t, 2000, len(one.Connections))
	require.Greater(t, len(one.Flows), 2000)
	require.Zero(t, one.Capture.ConnectionsDropped)
	require.Zero(t, one.Capture.FlowsDropped)
	both := read(a, b)
	require.NotNil(t, both.Points, "the files are capture points")
	// Their heads (CM handshakes) did not say so; their whole samples did.
	_, text, _ := runCLI(append(caps[:4:4], "--color=never", a, b)...)
	assert.Contains(t, text, "\n  matched as capture points of one traffic: their packets share transmissions\n")
	assert.Equal(t, len(one.Connections), len(both.Connections))
	assert.Equal(t, len(one.Flows), len(both.Flows))
	assert.Zero(t, both.Capture.ConnectionsDropped)
	assert.Zero(t, both.Capture.FlowsDropped)
	for _, f := range both.Findings {
		assert.NotContains(t, []string{"connection_table_full", "flow_table_full"}, f.Kind)
	}
}

// shiftCapture writes the frames of in to out with their times moved by d.
func shiftCapture(t *testing.T, in, out string, d time.Duration) {
	t.Helper()
	rewriteCapture(t, in, out, func(_ int, ci *gopacket.CaptureInfo) bool {
		ci.Timestamp = ci.Timestamp.Add(d)
		return true
	})
}

// rewriteCapture writes the frames of in to out (pcap, ns), each as edit
// changes its CaptureInfo, leaving out the frames (numbered from 0) edit
// says false of.
func rewriteCapture(t *testing.T, in, out string, edit func(n int, ci *gopacket.CaptureInfo) bool) {
	t.Helper()
	copyCaptures(t, out, edit, in)
}

// copyCaptures writes the frames of the captures ins, one after another,
// to out (pcap, ns), each as edit (when not nil) changes its CaptureInfo,
// leaving out the frames (numbered from 0 in their file) edit says false
// of.
func copyCaptures(t *testing.T, out string, edit func(n int, ci *gopacket.CaptureInfo) bool, ins ...string) {
	t.Helper()
	f, err := os.Create(out)
	require.NoError(t, err)
	w := pcapgo.NewWriterNanos(f)
	header := false
	for _, in := range ins {
		cr, err := capture.Open(in)
		require.NoError(t, err)
		for n := 0; ; n++ {
			ci, data, lt, err := cr.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			if !header {
				require.NoError(t, w.WriteFileHeader(262144, lt))
				header = true
			}
			if edit == nil || edit(n, &ci) {
				require.NoError(t, w.WritePacket(ci, data))
			}
		}
		require.NoError(t, cr.Close())
	}
	require.NoError(t, f.Close())
}
