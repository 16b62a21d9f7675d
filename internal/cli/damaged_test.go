package cli_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// synthCapture writes a small RoCE v2 capture (every frame RDMA) and
// returns it with the byte offset of each record (pcap) or block (pcapng).
func synthCapture(t *testing.T, format synth.Format) ([]byte, []int) {
	t.Helper()
	var b bytes.Buffer
	_, err := synth.Generate(synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 4, MsgSize: 2048, Format: format}, &b, nil)
	require.NoError(t, err)
	data := b.Bytes()
	var offs []int
	if format == synth.FormatPcap {
		for off := 24; off < len(data); off += 16 + int(binary.LittleEndian.Uint32(data[off+8:])) {
			offs = append(offs, off)
		}
		return data, offs
	}
	for off := 0; off < len(data); off += int(binary.LittleEndian.Uint32(data[off+4:])) {
		if binary.LittleEndian.Uint32(data[off:]) == 6 { // enhanced packet block
			offs = append(offs, off)
		}
	}
	return data, offs
}

// TestDamagedCaptures runs the command on a capture damaged in each way a
// cut-short or corrupted file can be: the message names the file, the
// damage and its byte offset, the frames before the damage are analyzed
// and reported, and the exit status is 1.
func TestDamagedCaptures(t *testing.T) {
	pcap, recs := synthCapture(t, synth.FormatPcap)
	ng, blocks := synthCapture(t, synth.FormatPcapNG)
	require.Greater(t, len(recs), 10)
	require.Greater(t, len(blocks), 10)

	// A record of captured length n, in place of record 5.
	badCapLen := func(snaplen, n uint32) []byte {
		b := bytes.Clone(pcap[:recs[6]])
		binary.LittleEndian.PutUint32(b[16:], snaplen)
		binary.LittleEndian.PutUint32(b[recs[5]+8:], n)
		return b
	}
	badBlock := bytes.Clone(ng)
	binary.LittleEndian.PutUint32(badBlock[blocks[7]+4:], 13) // not a multiple of 4

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(pcap)
	require.NoError(t, zw.Close())
	gzCut := gz.Bytes()[:gz.Len()/2]
	// The frames of the decompressible part of the cut stream.
	var part bytes.Buffer
	zr, err := gzip.NewReader(bytes.NewReader(gzCut))
	require.NoError(t, err)
	_, _ = part.ReadFrom(zr)
	ends := append(slices.Clone(recs[1:]), len(pcap)) // where each record ends
	gzFrames := 0
	for gzFrames < len(ends) && ends[gzFrames] <= part.Len() {
		gzFrames++
	}
	require.Positive(t, gzFrames)
	require.Less(t, gzFrames, len(recs))

	tests := []struct {
		name   string
		file   []byte
		frames int    // analyzed and reported
		msg    string // on stderr after "roce-dissect: FILE: "
	}{
		{"cut in a record header", pcap[:recs[4]+9], 4,
			fmt.Sprintf("capture: truncated record at byte offset %d: record header has 9 of 16 bytes", recs[4])},
		{"cut in a packet", pcap[:recs[4]+16+30], 4,
			fmt.Sprintf("capture: truncated record at byte offset %d: packet data has 30 of %d bytes", recs[4], recs[5]-recs[4]-16)},
		{"captured length above the snap length", badCapLen(1500, 1600), 5,
			fmt.Sprintf("capture: corrupt record at byte offset %d: captured length 1600 exceeds the snap length 1500", recs[5])},
		{"captured length above 256 KiB", badCapLen(0, 1<<20), 5,
			fmt.Sprintf("capture: corrupt record at byte offset %d: captured length 1048576 exceeds the 262144-byte limit", recs[5])},
		{"pcapng block with a bad length", badBlock, 7,
			fmt.Sprintf("capture: corrupt block at byte offset %d", blocks[7])},
		{"zero-length file", nil, 0, "capture: empty file"},
		{"gzip stream cut short", gzCut, gzFrames,
			fmt.Sprintf("capture: truncated record at byte offset %d (packet data has %d of %d bytes): the gzip stream is cut short after %d bytes of data",
				recs[gzFrames], part.Len()-recs[gzFrames]-16, ends[gzFrames]-recs[gzFrames]-16, part.Len())},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "damaged.pcap")
			require.NoError(t, os.WriteFile(file, tc.file, 0o644))
			code, out, errs := run(t, nil, "--color=never", file)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, "roce-dissect: "+file+": "+tc.msg)
			assert.Equal(t, 1, bytes.Count([]byte(errs), []byte("\n")), "one line: %q", errs)
			if tc.file == nil {
				assert.Empty(t, out, "not a capture: no report")
				return
			}
			assert.Contains(t, out, "Capture "+file)
			assert.Contains(t, out, fmt.Sprintf("  %d frames: %d RDMA, 0 other, 0 malformed", tc.frames, tc.frames))

			code, out, _ = run(t, nil, "-o", "json", file)
			assert.Equal(t, 1, code)
			assert.Contains(t, out, fmt.Sprintf(`"frames": %d,`, tc.frames))
		})
	}
}
