package cli_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExportPieces: the export of pieces read as one capture names the
// file of each connection's CM frames (req_file, rep_file, dreq_file), as
// JSON's frames.files does, and writes a packets table per piece with its
// frames numbered in the piece (review: req_frame alone was ambiguous).
func TestExportPieces(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "rot_00000.pcap"), filepath.Join(dir, "rot_00001.pcap")
	require.NoError(t, splitCapture("../../testdata/mix_small.pcap", a, b))
	exp := filepath.Join(dir, "export")
	code, out, errs := run(t, nil, "-o", "json", "--export", exp, b, a)
	require.Equal(t, 0, code, errs)
	var rep struct {
		Capture struct {
			Files []struct {
				File   string `json:"file"`
				Frames uint64 `json:"frames"`
			} `json:"files"`
		} `json:"capture"`
		Connections []struct {
			Frames map[string]any `json:"frames"`
		} `json:"connections"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.Len(t, rep.Capture.Files, 2, "read as pieces")
	conns := readParquet(t, filepath.Join(exp, "connections.parquet"))
	require.Equal(t, len(rep.Connections), len(conns))
	inB := 0
	for i, c := range rep.Connections {
		files := c.Frames["files"].(map[string]any)
		for _, k := range []string{"req", "rep", "dreq"} {
			assert.Equal(t, c.Frames[k], conns[i][k+"_frame"], "connection %d %s", i+1, k)
			assert.Equal(t, files[k], conns[i][k+"_file"], "connection %d %s", i+1, k)
		}
		for _, f := range files {
			if f == b {
				inB++
			}
		}
	}
	assert.Positive(t, inB, "some CM frames (the DREPs) are in the second piece")
	for i, f := range rep.Capture.Files {
		rows := readParquet(t, filepath.Join(exp, "packets-0000"+string(rune('0'+i))+"-000.parquet"))
		require.NotEmpty(t, rows)
		assert.Equal(t, 1.0, rows[0]["frame"], "%s: numbered in the piece", f.File)
		assert.Equal(t, float64(f.Frames), rows[len(rows)-1]["frame"], "%s", f.File)
		assert.Equal(t, f.File, rows[0]["file"])
	}
}
