package cli_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Offsets in a generated RoCE v2 frame (Ethernet, IPv4 without options,
// UDP): the IP header, the UDP header and its destination port, the BTH.
const (
	ipOff, udpOff, ibOff = 14, 34, 42
)

// onPort returns the frames of a generated RoCE v2 capture with UDP
// destination port 4791 changed to port, and the ICRC (which covers the
// UDP ports) recomputed; and the generator's truth.
func onPort(t *testing.T, port uint16) ([][]byte, map[string]any) {
	t.Helper()
	cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Encap: synth.EncapIPv4, Messages: 4, MsgSize: 2048, MTU: 1024,
		Impairments: synth.Impairments{Drop: []synth.PSNRef{{Value: 3, Relative: true}}}}
	var capBuf, truthBuf bytes.Buffer
	_, err := synth.Generate(cfg, &capBuf, &truthBuf)
	require.NoError(t, err)
	var truth map[string]any
	require.NoError(t, json.Unmarshal(truthBuf.Bytes(), &truth))
	r, err := capture.NewReader(&capBuf)
	require.NoError(t, err)
	var frames [][]byte
	for {
		_, data, _, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		f := bytes.Clone(data)
		require.Equal(t, uint16(4791), binary.BigEndian.Uint16(f[udpOff+2:]), "a RoCE v2 frame")
		require.Zero(t, binary.BigEndian.Uint16(f[udpOff+6:]), "no UDP checksum to fix")
		binary.BigEndian.PutUint16(f[udpOff+2:], port)
		end := len(f) - layers.ICRCLen
		crc, err := layers.ComputeICRC(layers.NetworkIPv4, f[ipOff:udpOff], f[udpOff:ibOff], f[ibOff:end])
		require.NoError(t, err)
		binary.LittleEndian.PutUint32(f[end:], crc)
		frames = append(frames, f)
	}
	return frames, truth
}

// TestDecodeAs: RoCE v2 on another UDP port is another protocol until
// --decode-as names the port (repeatable); then the report is the one
// the generator's truth describes. Port 4791 is always RoCE v2.
func TestDecodeAs(t *testing.T) {
	dir := t.TempDir()
	files := map[uint16]string{}
	var truth map[string]any
	var nframes int
	for _, port := range []uint16{4791, 4792} {
		frames, tr := onPort(t, port)
		truth, nframes = tr, len(frames)
		files[port] = filepath.Join(dir, "port"+strconv.Itoa(int(port))+".pcap")
		require.NoError(t, os.WriteFile(files[port], pcapBytes(1, frames), 0o644))
	}
	tests := []struct {
		name string
		port uint16
		args []string
		roce bool
	}{
		{"4792 without --decode-as", 4792, nil, false},
		{"4792 as another port", 4792, []string{"--decode-as", "udp.port=4793"}, false},
		{"4792 decoded as RoCE", 4792, []string{"--decode-as", "udp.port=4792"}, true},
		{"4792 among several ports", 4792, []string{"--decode-as", "udp.port=4793", "--decode-as", "udp.port=4792"}, true},
		{"4791 with another port named", 4791, []string{"--decode-as", "udp.port=4792"}, true},
		{"4791 alone", 4791, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"-o", "json"}, tc.args...), files[tc.port])
			code, out, errs := run(t, nil, args...)
			require.Equal(t, 0, code, errs)
			var rep struct {
				Capture struct {
					Frames       int `json:"frames"`
					RoCEPackets  int `json:"roce_packets"`
					OtherPackets int `json:"other_packets"`
					Malformed    int `json:"malformed"`
				} `json:"capture"`
				Flows       []map[string]any `json:"flows"`
				Connections []map[string]any `json:"connections"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			assert.Equal(t, nframes, rep.Capture.Frames)
			assert.Zero(t, rep.Capture.Malformed)
			if !tc.roce {
				assert.Zero(t, rep.Capture.RoCEPackets)
				assert.Equal(t, nframes, rep.Capture.OtherPackets)
				assert.Empty(t, rep.Flows)
				assert.Empty(t, rep.Connections)
				return
			}
			assert.Equal(t, truth["roce_packets"], float64(rep.Capture.RoCEPackets))
			assert.Zero(t, rep.Capture.OtherPackets)
			tflows := truth["flows"].([]any)
			require.Len(t, rep.Flows, len(tflows))
			for _, tf := range tflows {
				want := tf.(map[string]any)
				var got map[string]any
				for _, f := range rep.Flows {
					if f["src"] == want["src"] && f["dst"] == want["dst"] && f["dest_qp"] == want["dest_qp"] {
						got = f
					}
				}
				require.NotNil(t, got, "flow %v → %v QP %v", want["src"], want["dst"], want["dest_qp"])
				assertSubset(t, fmt.Sprintf("flow %v → %v QP %v", want["src"], want["dst"], want["dest_qp"]), want, got)
			}
			tconns := truth["connections"].([]any)
			require.Len(t, rep.Connections, len(tconns))
			for i, tc := range tconns {
				assertSubset(t, fmt.Sprintf("connection %d", i+1), tc, rep.Connections[i])
			}
		})
	}
}

// assertSubset asserts that every key of the truth (recursively, in
// objects and lists) has its value in the report, which may have more
// keys.
func assertSubset(t *testing.T, path string, want, got any) {
	t.Helper()
	if wl, ok := want.([]any); ok {
		gl, ok := got.([]any)
		if assert.True(t, ok, "%s: want a list, got %v", path, got) && assert.Len(t, gl, len(wl), path) {
			for i := range wl {
				assertSubset(t, fmt.Sprintf("%s[%d]", path, i), wl[i], gl[i])
			}
		}
		return
	}
	wm, ok := want.(map[string]any)
	if !ok {
		assert.Equal(t, want, got, path)
		return
	}
	gm, ok := got.(map[string]any)
	if !assert.True(t, ok, "%s: want an object, got %v", path, got) {
		return
	}
	for k, v := range wm {
		if l, isList := v.([]any); strings.HasPrefix(path, "flow ") && (v == nil || isList && len(l) == 0) {
			// docs/json.md: a flow's null and empty-list keys are absent
			assert.NotContains(t, gm, k, "%s.%s: written though it has nothing to say", path, k)
			continue
		}
		assertSubset(t, path+"."+k, v, gm[k])
	}
}
