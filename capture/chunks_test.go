package capture_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"unsafe"

	"github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
)

// chunkPool hands out buffers of size bytes for ReadChunks, each a new
// one filled with 0xEE, and keeps them all.
type chunkPool struct {
	size int
	got  [][]byte
}

func (p *chunkPool) get() []byte {
	b := bytes.Repeat([]byte{0xEE}, p.size)
	p.got = append(p.got, b)
	return b
}

// chunked opens b with ReadChunks on buffers of ChunkMin + extra bytes
// (when the reader takes chunks: a pcap file).
func chunked(t testing.TB, b []byte, extra int) (*capture.Reader, *chunkPool, error) {
	t.Helper()
	r, err := capture.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, nil, err
	}
	p := &chunkPool{size: r.ChunkMin() + extra}
	r.ReadChunks(p.get)
	return r, p, nil
}

// checkDamagedChunks reads a damaged file with ReadChunks, on chunks of
// every size from the smallest up to one past the file: the frames
// before the damage, then the error, as without chunks (checked by
// checkDamaged).
func checkDamagedChunks(t *testing.T, tc damaged) {
	for _, extra := range []int{0, 1, 7, 100, len(tc.file)} {
		r, _, err := chunked(t, tc.file, extra)
		checkDamagedRead(t, tc, r, err, fmt.Sprintf(", chunks of ChunkMin+%d", extra))
		if tc.frames < 0 {
			return
		}
	}
}

// TestReadChunks reads pcap files of both byte orders and timestamp
// units, plain and gzip, through ReadChunks on chunks from the smallest
// (ChunkMin: a record header and the snap length) up: the same frames
// and offsets as without chunks, each frame a slice of a chunk that
// stays as it was when later frames have been read (checked at the end),
// a record that does not fit moved whole to the next chunk.
func TestReadChunks(t *testing.T) {
	const snaplen = 1200 // ChunkMin 1216: a chunk holds one to a few frames
	frames := testFrames(40, layers.LinkTypeEthernet)
	nano := nanoFrames(40, layers.LinkTypeEthernet)
	le := writePcap(t, false, snaplen, layers.LinkTypeEthernet, frames)
	tests := []struct {
		name string
		file []byte
		want []testFrame
	}{
		{"pcap", le, frames},
		{"pcap nanoseconds", writePcap(t, true, snaplen, layers.LinkTypeEthernet, nano), nano},
		{"pcap big-endian nanoseconds", rawPcap(binary.BigEndian, true, snaplen, layers.LinkTypeEthernet, recordsOf(nano, true)), nano},
		{"pcap no frames", le[:24], nil},
		{"gzip", gz(t, le), frames},
	}
	for _, tc := range tests {
		for _, extra := range []int{0, 1, 15, 16, 17, 600, 1 << 20} {
			r, p, err := chunked(t, tc.file, extra)
			require.NoError(t, err)
			require.Equal(t, 16+snaplen, r.ChunkMin())
			offs := pcapOffsets(tc.want)
			var kept [][]byte // slices of the chunks, checked after reading on
			for i := range tc.want {
				ci, data, lt, err := r.Next()
				require.NoError(t, err, "%s, chunks of ChunkMin+%d", tc.name, extra)
				require.Equal(t, layers.LinkTypeEthernet, lt)
				require.Len(t, data, ci.CaptureLength)
				require.True(t, tc.want[i].ts.Equal(ci.Timestamp), "frame %d timestamp", i)
				require.Equal(t, tc.want[i].origLen, ci.Length)
				require.Equal(t, tc.want[i].data, data)
				require.Equal(t, offs[i+1], r.Offset(), "offset after frame %d", i)
				last := p.got[len(p.got)-1]
				at := uintptr(unsafe.Pointer(&data[0])) - uintptr(unsafe.Pointer(&last[0]))
				require.Less(t, at, uintptr(len(last)-len(data)+1), "frame %d is in the newest chunk", i)
				require.Equal(t, r.ChunkPos()-len(data), int(at), "ChunkPos of frame %d", i)
				kept = append(kept, data)
			}
			for i, data := range kept {
				require.Equal(t, tc.want[i].data, data, "frame %d after reading on", i)
			}
			_, data, _, err := r.Next()
			require.ErrorIs(t, err, io.EOF)
			require.Nil(t, data)
			if extra == 0 && len(tc.want) > 0 {
				assert.Greater(t, len(p.got), 10, "%s: frames moved over many chunks", tc.name)
			}
		}
	}
}

// TestReadChunksNot checks that a pcapng file, and a Reader that has
// started, do not take chunks, and that a chunk below ChunkMin panics.
func TestReadChunksNot(t *testing.T) {
	frames := testFrames(3, layers.LinkTypeEthernet)
	p := &chunkPool{size: 1 << 20}
	r := mustReader(t, writeNg(t, []layers.LinkType{layers.LinkTypeEthernet}, frames))
	require.False(t, r.ReadChunks(p.get))
	got, err := readAll(t, r)
	require.ErrorIs(t, err, io.EOF)
	requireFrames(t, frames, got)
	require.Len(t, got, 3)

	le := writePcap(t, false, 65535, layers.LinkTypeEthernet, frames)
	r = mustReader(t, le)
	_, _, _, err = r.Next()
	require.NoError(t, err)
	require.False(t, r.ReadChunks(p.get), "after Next")
	assert.Empty(t, p.got)

	r = mustReader(t, le)
	require.True(t, r.ReadChunks((&chunkPool{size: r.ChunkMin() - 1}).get))
	require.Panics(t, func() { _, _, _, _ = r.Next() })
}
