package capture_test

import (
	"bytes"
	"io"
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
