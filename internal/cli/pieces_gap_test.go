package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPiecesFollowClosely: files are read as the pieces of one capture
// only when each begins soon after the one before it ends (within a
// minute, or within the time the files before it cover); two captures of
// different years, or of one day an hour apart, are merged by time with
// a note saying why, not glued into one capture spanning the pause.
func TestPiecesFollowClosely(t *testing.T) {
	const a, b = "../../testdata/write_bw_ipv4.pcap", "../../testdata/send_bw_ipv6.pcapng"
	for _, tc := range []struct {
		name   string
		shift  time.Duration // b's frames moved by
		pieces bool
		note   string
	}{
		{"a millisecond after", time.Millisecond, true, ""},
		{"30 s after: within a minute", 30 * time.Second, true, ""},
		{"an hour after", time.Hour, false, "a longer pause than the"},
		{"513 days after", 513 * 24 * time.Hour, false, "513 days after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			later := filepath.Join(dir, "b.pcap")
			shiftCapture(t, b, later, tc.shift)
			var out, errb bytes.Buffer
			require.Equal(t, ExitOK, Run(context.Background(), []string{"-o", "json", a, later}, &out, &errb), errb.String())
			var rep struct {
				Capture struct {
					Frames      uint64 `json:"frames"`
					Files       []any  `json:"files"`
					FilesMerged bool   `json:"files_merged"`
				} `json:"capture"`
			}
			require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
			assert.Len(t, rep.Capture.Files, 2)
			assert.Equal(t, !tc.pieces, rep.Capture.FilesMerged, "merged by time, not read as pieces")
			var text, errt bytes.Buffer
			require.Equal(t, ExitOK, Run(context.Background(), []string{"--color", "never", a, later}, &text, &errt), errt.String())
			if tc.note == "" {
				assert.NotContains(t, text.String(), "not the pieces of one capture")
				return
			}
			assert.Contains(t, text.String(), "not read one after another as the pieces of one capture: "+later+" begins at")
			assert.Contains(t, text.String(), tc.note)
		})
	}
}
