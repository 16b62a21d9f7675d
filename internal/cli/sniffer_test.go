package cli_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestSnifferSrcPort runs the command over a capture whose UDP source
// ports the "NIC sniffer" overwrote with 4791 and checks the text report
// (one note, the recovered port per flow), the JSON report and the
// per-packet JSON against the same capture written with its real ports.
func TestSnifferSrcPort(t *testing.T) {
	dir := t.TempDir()
	cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 4, MsgSize: 2048, MTU: 1024}
	sentPath, sniffedPath := filepath.Join(dir, "sent.pcap"), filepath.Join(dir, "sniffed.pcap")
	require.NoError(t, synth.WriteFiles(cfg, sentPath, ""))
	cfg.SnifferSrcPort = true
	require.NoError(t, synth.WriteFiles(cfg, sniffedPath, sniffedPath+".truth.json"))

	// The oracle: the source port of each frame as sent.
	r, err := capture.Open(sentPath)
	require.NoError(t, err)
	var ports []uint16
	for {
		_, data, _, err := r.Next()
		if err != nil {
			break
		}
		ports = append(ports, binary.BigEndian.Uint16(data[14+20:]))
	}
	r.Close()
	var truth synth.Truth
	raw, err := os.ReadFile(sniffedPath + ".truth.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &truth))
	require.Equal(t, len(ports), truth.Capture.ICRCPortRewritten)

	code, out, errs := run(t, nil, "--color=never", sniffedPath)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, 1, strings.Count(out, "UDP source port rewritten by the capture tool (NIC sniffer)"), out)
	assert.Contains(t, out, fmt.Sprintf("the ICRCs of %d packets captured with source port 4791 verify", len(ports)))
	assert.Contains(t, out, "SRC PORT")
	assert.Contains(t, out, "No problems found.")
	for _, f := range truth.Flows {
		require.Len(t, f.ICRC.OriginalSrcPorts, 1)
		line := ""
		for l := range strings.SplitSeq(out, "\n") {
			if strings.Contains(l, f.Src+" → "+f.Dst) && strings.Contains(l, fmt.Sprintf("0x%06x", f.DestQP)) {
				line = l
			}
		}
		assert.True(t, strings.HasSuffix(line, fmt.Sprintf("  %d", f.ICRC.OriginalSrcPorts[0])), "flow line %q", line)
	}

	code, out, errs = run(t, nil, "-o", "json", sniffedPath)
	require.Equal(t, 0, code, errs)
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	assert.Equal(t, float64(len(ports)), rep["capture"].(map[string]any)["icrc_port_rewritten"])
	for _, f := range rep["flows"].([]any) {
		icrc := f.(map[string]any)["icrc"].(map[string]any)
		assert.Equal(t, icrc["ok"], icrc["port_rewritten"])
		assert.Len(t, icrc["original_src_ports"], 1)
	}

	code, out, errs = run(t, nil, "-P", "-o", "json", sniffedPath)
	require.Equal(t, 0, code, errs)
	sc := bufio.NewScanner(strings.NewReader(out))
	i := 0
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		icrc := m["icrc"].(map[string]any)
		assert.Equal(t, "ok", icrc["status"], "frame %d", i+1)
		assert.Equal(t, float64(ports[i]), icrc["original_src_port"], "frame %d", i+1)
		i++
	}
	assert.Equal(t, len(ports), i)

	// The same capture as sent says nothing of it.
	code, out, errs = run(t, nil, "--color=never", sentPath)
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, "NIC sniffer")
	assert.NotContains(t, out, "SRC PORT")
	code, out, _ = run(t, nil, "-P", "-o", "json", sentPath)
	require.Equal(t, 0, code)
	assert.NotContains(t, out, "original_src_port")
}
