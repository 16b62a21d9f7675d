package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCaptureBeginsMidMessage: a capture that begins inside a message
// (tcpdump started while a WRITE was on the wire) has seen its MIDDLE and
// LAST but not its FIRST. That is said as such, an info finding naming
// the PSN the message ended at (from the generator's truth: the
// requester's first PSN plus a message's packets, less one), never as a
// message of PSNs "0–N" (the unknown start printed as PSN 0) nor as a
// warning of loss.
func TestCaptureBeginsMidMessage(t *testing.T) {
	const in = "../../testdata/write_bw_ipv4.pcap"
	b, err := os.ReadFile(in + ".truth.json")
	require.NoError(t, err)
	var truth struct {
		Connections []struct {
			Requester struct {
				SendPSN uint32 `json:"send_psn"`
			} `json:"requester"`
			PathMTU int `json:"path_mtu"`
		} `json:"connections"`
		Flows []struct {
			DestQP   uint32 `json:"dest_qp"`
			Messages struct {
				Count int `json:"count"`
				Bytes int `json:"bytes"`
			} `json:"messages"`
		} `json:"flows"`
	}
	require.NoError(t, json.Unmarshal(b, &truth))
	c := truth.Connections[0]
	perMsg := 0
	for _, f := range truth.Flows {
		if f.DestQP != 1 && f.Messages.Count > 0 {
			perMsg = f.Messages.Bytes / f.Messages.Count / c.PathMTU
		}
	}
	require.Equal(t, 4, perMsg, "the test cuts the first message after its FIRST and a MIDDLE")
	lastPSN := c.Requester.SendPSN + uint32(perMsg) - 1

	// Frames 1–3 are the CM handshake, 4 the first message's FIRST, 5 a
	// MIDDLE: the capture begins at its second MIDDLE.
	cut := filepath.Join(t.TempDir(), "mid.pcap")
	rewriteCapture(t, in, cut, func(n int, _ *gopacket.CaptureInfo) bool { return n >= 5 })
	var stdout, stderr bytes.Buffer
	require.Equal(t, ExitOK, Run(context.Background(), []string{"-o", "json", cut}, &stdout, &stderr), stderr.String())
	var rep struct {
		Findings []struct {
			Kind, Severity, Detail string
		} `json:"findings"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep))
	var got []string
	for _, fd := range rep.Findings {
		assert.NotContains(t, fd.Detail, "PSNs 0–")
		if fd.Kind == "incomplete_message" {
			got = append(got, fd.Severity+" "+fd.Detail)
		}
	}
	assert.Equal(t, []string{"info message ending at PSN " + strconv.FormatUint(uint64(lastPSN), 10) +
		" began before the flow's first captured packet (2048 bytes seen): its FIRST is not in the capture (the capture began inside it, or missed the flow's first packets)"}, got)
	assert.False(t, strings.Contains(stdout.String(), `"severity": "warning"`), "no warning: nothing was lost")
}
