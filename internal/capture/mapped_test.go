package capture_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/capture"
)

// writeTemp writes b to a new file in a temporary folder.
func writeTemp(t testing.TB, b []byte) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "c")
	require.NoError(t, os.WriteFile(name, b, 0o600))
	return name
}

// mappable reports whether OpenMapped maps b: a plain pcap file of at
// least a file header, on a system with mmap.
func mappable(b []byte) bool {
	if len(b) < 24 || runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		return false
	}
	switch binary.BigEndian.Uint32(b) {
	case 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1:
		return true
	}
	return false
}

// checkDamagedMapped reads a damaged file through OpenMapped: the frames
// before the damage, then the error, as NewReader gives them (checked by
// checkDamaged).
func checkDamagedMapped(t *testing.T, tc damaged) {
	r, err := capture.OpenMapped(writeTemp(t, tc.file))
	if tc.frames < 0 {
		require.Error(t, err)
		assert.Nil(t, r)
		checkError(t, err, tc)
		return
	}
	require.NoError(t, err)
	defer r.Close()
	assert.Equal(t, mappable(tc.file), r.Mapped() != nil, "mapped")
	got, err := readAll(t, r)
	require.Len(t, got, tc.frames, "frames before the error %v", err)
	requireFrames(t, tc.want, got)
	checkError(t, err, tc)
	_, data, _, err2 := r.Next()
	assert.Nil(t, data)
	assert.Equal(t, err, err2, "the error again")
}

// TestOpenMapped reads pcap files of both byte orders and timestamp
// units, pcapng and gzip through OpenMapped: the same frames as
// NewReader, a pcap file mapped with every frame a slice of the mapping
// that stays valid after the next call, the others read.
func TestOpenMapped(t *testing.T) {
	frames := testFrames(40, layers.LinkTypeEthernet)
	nano := nanoFrames(40, layers.LinkTypeEthernet)
	le := writePcap(t, false, 65535, layers.LinkTypeEthernet, frames)
	tests := []struct {
		name   string
		file   []byte
		want   []testFrame
		mapped bool
	}{
		{"pcap", le, frames, true},
		{"pcap nanoseconds", writePcap(t, true, 65535, layers.LinkTypeEthernet, nano), nano, true},
		{"pcap big-endian nanoseconds", rawPcap(binary.BigEndian, true, 65535, layers.LinkTypeEthernet, recordsOf(nano, true)), nano, true},
		{"pcap no frames", le[:24], nil, true},
		{"pcapng", writeNg(t, []layers.LinkType{layers.LinkTypeEthernet}, frames), frames, false},
		{"gzip", gz(t, le), frames, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := capture.OpenMapped(writeTemp(t, tc.file))
			require.NoError(t, err)
			defer func() { require.NoError(t, r.Close()) }()
			m := r.Mapped()
			require.Equal(t, tc.mapped, m != nil)
			if tc.mapped {
				require.Equal(t, tc.file, m, "the mapping is the file")
			}
			offs := pcapOffsets(tc.want)
			var kept [][]byte // slices of the mapping, checked after reading on
			for i := range tc.want {
				ci, data, lt, err := r.Next()
				require.NoError(t, err)
				require.Equal(t, layers.LinkTypeEthernet, lt)
				require.Len(t, data, ci.CaptureLength)
				require.True(t, tc.want[i].ts.Equal(ci.Timestamp), "frame %d timestamp", i)
				require.Equal(t, tc.want[i].origLen, ci.Length)
				require.Equal(t, tc.want[i].data, data)
				if tc.mapped {
					off := r.Offset() - int64(len(data))
					require.Equal(t, offs[i+1], r.Offset())
					require.Same(t, &m[off], &data[0], "frame %d is the mapping's bytes", i)
					kept = append(kept, data)
				}
			}
			for i, data := range kept {
				require.Equal(t, tc.want[i].data, data, "frame %d after reading on", i)
			}
			_, data, _, err := r.Next()
			require.ErrorIs(t, err, io.EOF)
			require.Nil(t, data)
		})
	}
}

// TestOpenMappedErrors checks what OpenMapped says of a missing file and
// of standard input, and that Next fails after Close.
func TestOpenMappedErrors(t *testing.T) {
	_, err := capture.OpenMapped(filepath.Join(t.TempDir(), "nope.pcap"))
	require.ErrorIs(t, err, os.ErrNotExist)
	assert.Contains(t, err.Error(), "capture: open ")

	le := writePcap(t, false, 65535, layers.LinkTypeEthernet, testFrames(3, layers.LinkTypeEthernet))
	r, err := capture.OpenMapped(writeTemp(t, le))
	require.NoError(t, err)
	require.NotNil(t, r.Mapped())
	require.NoError(t, r.Close())
	require.NoError(t, r.Close(), "twice")
	_, _, _, err = r.Next()
	require.ErrorIs(t, err, os.ErrClosed)

	// A file too short for a header is read, and fails as Open's does.
	_, err = capture.OpenMapped(writeTemp(t, le[:10]))
	require.ErrorIs(t, err, capture.ErrTruncated)
	_, err = capture.OpenMapped(writeTemp(t, bytes.Repeat([]byte{7}, 40)))
	require.ErrorIs(t, err, capture.ErrNotCapture)
}
