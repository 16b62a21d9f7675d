package capture_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
)

// TestNewReaderSize: a Reader that starts with a buffer of 4 KiB reads
// records larger than it (9,000 bytes, and 200,000) as NewReader does:
// the frames the test wrote, each offset the sum of the records before
// it, plain, gzip-compressed and a byte a Read; a record cut short is the
// same error as NewReader's.
func TestNewReaderSize(t *testing.T) {
	frames := testFrames(40, layers.LinkTypeEthernet)
	for i, n := range map[int]int{3: 9000, 4: 4096, 11: 200_000, 12: 4081, 30: 9000} {
		frames[i].data = frameData(i, n)
		frames[i].origLen = n
	}
	file := writePcap(t, false, capture.MaxCaptureLength, layers.LinkTypeEthernet, frames)
	offs := pcapOffsets(frames)
	for name, in := range map[string]func() io.Reader{
		"plain":       func() io.Reader { return bytes.NewReader(file) },
		"gzip":        func() io.Reader { return bytes.NewReader(gz(t, file)) },
		"byte a Read": func() io.Reader { return oneByteReader{bytes.NewReader(file)} },
	} {
		t.Run(name, func(t *testing.T) {
			r, err := capture.NewReaderSize(in(), capture.MinBufferSize)
			require.NoError(t, err)
			for i, want := range frames {
				ci, data, _, err := r.Next()
				require.NoError(t, err, "frame %d", i)
				require.Equal(t, want.data, data, "frame %d", i)
				require.True(t, want.ts.Equal(ci.Timestamp), "frame %d", i)
				require.Equal(t, offs[i+1], r.Offset(), "frame %d", i)
			}
			_, _, _, err = r.Next()
			require.ErrorIs(t, err, io.EOF)
		})
	}
	cut := file[:offs[12]-100] // within frame 11's 200,000 bytes
	whole, err := capture.NewReader(bytes.NewReader(cut))
	require.NoError(t, err)
	small, err := capture.NewReaderSize(bytes.NewReader(cut), capture.MinBufferSize)
	require.NoError(t, err)
	want, wantErr := readAll(t, whole)
	got, gotErr := readAll(t, small)
	requireFrames(t, frames, got)
	assert.Len(t, got, 11)
	assert.Len(t, want, 11)
	require.Error(t, gotErr)
	assert.Equal(t, wantErr.Error(), gotErr.Error())
}

// TestOpenSmallFileGrows: Open gives a small file a buffer no larger than
// the file, and a file that grows while it is read (a capture still being
// written) is read to its new end, a record of 100,000 bytes appended
// after the Open included, with its offsets.
func TestOpenSmallFileGrows(t *testing.T) {
	frames := testFrames(3, layers.LinkTypeEthernet)
	frames[2].data = frameData(2, 100_000)
	frames[2].origLen = 100_000
	file := writePcap(t, false, capture.MaxCaptureLength, layers.LinkTypeEthernet, frames)
	offs := pcapOffsets(frames)
	name := filepath.Join(t.TempDir(), "growing.pcap")
	require.NoError(t, os.WriteFile(name, file[:offs[1]], 0o644)) // the header and frame 0
	r, err := capture.Open(name)
	require.NoError(t, err)
	defer r.Close()
	_, data, _, err := r.Next()
	require.NoError(t, err)
	require.Equal(t, frames[0].data, data)
	f, err := os.OpenFile(name, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write(file[offs[1]:])
	require.NoError(t, err)
	require.NoError(t, f.Close())
	for i := 1; i < len(frames); i++ {
		_, data, _, err := r.Next()
		require.NoError(t, err, "frame %d", i)
		require.Equal(t, frames[i].data, data, "frame %d", i)
		require.Equal(t, offs[i+1], r.Offset(), "frame %d", i)
	}
	_, _, _, err = r.Next()
	require.ErrorIs(t, err, io.EOF)
}
