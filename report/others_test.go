package report_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/report"
)

// TestWriteTextOtherProtocols checks the capture summary's line of the
// other frames by protocol against the line written out by hand.
func TestWriteTextOtherProtocols(t *testing.T) {
	port := func(p int) *int { return &p }
	for _, tc := range []struct {
		name     string
		capture  analyze.Capture
		wantLine string // "": no line
	}{
		{"none", analyze.Capture{Frames: 3, RoCEPackets: 3}, ""},
		{"listed", analyze.Capture{Frames: 10, OtherPackets: 10, OtherProtocols: []analyze.OtherProtocol{
			{Protocol: "tcp", Port: port(5201), Frames: 7, Bytes: 700},
			{Protocol: "arp", Frames: 2, Bytes: 120},
			{Protocol: "ethertype 0x88b5", Frames: 1, Bytes: 60},
		}}, "  10 other frames: tcp 5201 (7), arp (2), ethertype 0x88b5 (1)"},
		{"unlisted", analyze.Capture{Frames: 12, OtherPackets: 12, OtherFramesUnlisted: 3, OtherProtocols: []analyze.OtherProtocol{
			{Protocol: "udp", Port: port(0), Frames: 9, Bytes: 900},
		}}, "  12 other frames: udp 0 (9), 3 unlisted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, report.WriteText(&buf, &analyze.Report{Capture: tc.capture}, report.TextOptions{Title: "x.pcap"}))
			lines := strings.Split(buf.String(), "\n")
			require.Greater(t, len(lines), 2)
			require.True(t, strings.HasPrefix(lines[1], "  "), lines[1])
			if tc.wantLine == "" {
				assert.NotContains(t, buf.String(), "other frames:")
				return
			}
			assert.Equal(t, tc.wantLine, lines[2])
		})
	}
}
