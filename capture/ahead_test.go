package capture_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"

	"github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
)

// TestAhead reads pcap files (both byte orders, plain and gzip, with and
// without chunks) and, after every frame, asks Ahead for up to 5 frames:
// they are, byte for byte, the frames Next returns next (the oracle is
// the frames written), as many as the buffer holds whole, and some
// frames see several ahead. A pcapng file, a damaged record and a Reader
// in error give none.
func TestAhead(t *testing.T) {
	const snaplen = 1200
	frames := testFrames(60, layers.LinkTypeEthernet)
	le := writePcap(t, false, snaplen, layers.LinkTypeEthernet, frames)
	// Each way of reading, and the most frames it holds ahead at some
	// frame: a chunk of ChunkMin+100 bytes holds up to two of these.
	open := map[string]struct {
		open func(b []byte) (*capture.Reader, error)
		most int
	}{
		"buffered": {func(b []byte) (*capture.Reader, error) { return capture.NewReader(bytes.NewReader(b)) }, 5},
		"chunks of ChunkMin+100": {func(b []byte) (*capture.Reader, error) {
			r, _, err := chunked(t, b, 100)
			return r, err
		}, 2},
		"chunks of 1 MiB": {func(b []byte) (*capture.Reader, error) {
			r, _, err := chunked(t, b, 1<<20)
			return r, err
		}, 5},
	}
	tests := []struct {
		name string
		file []byte
		want []testFrame
	}{
		{"pcap", le, frames},
		{"pcap big-endian", rawPcap(binary.BigEndian, false, snaplen, layers.LinkTypeEthernet, recordsOf(frames, false)), frames},
		{"gzip", gz(t, le), frames},
	}
	for _, tc := range tests {
		for how, o := range open {
			r, err := o.open(tc.file)
			require.NoError(t, err)
			seen := 0
			for i := range tc.want {
				_, data, _, err := r.Next()
				require.NoError(t, err)
				require.Equal(t, tc.want[i].data, data)
				ahead := r.Ahead(make([][]byte, 0, 5))
				require.LessOrEqual(t, len(ahead), len(tc.want)-i-1, "%s, %s: frame %d", tc.name, how, i)
				for j, d := range ahead {
					require.Equal(t, tc.want[i+1+j].data, d, "%s, %s: frame %d, %d ahead", tc.name, how, i, j+1)
				}
				seen = max(seen, len(ahead))
			}
			assert.Equal(t, o.most, seen, "%s, %s: up to cap(dst) ahead, as the buffer holds them", tc.name, how)
			require.Empty(t, r.Ahead(make([][]byte, 0, 5)), "%s, %s: none after the last", tc.name, how)
			_, _, _, err = r.Next()
			require.ErrorIs(t, err, io.EOF)
		}
	}

	ng := mustReader(t, writeNg(t, []layers.LinkType{layers.LinkTypeEthernet}, frames[:3]))
	_, _, _, err := ng.Next()
	require.NoError(t, err)
	assert.Empty(t, ng.Ahead(make([][]byte, 0, 5)), "pcapng")

	// The third record claims more than the snap length: Ahead stops
	// before it, and Next reports it.
	recs := recordsOf(frames[:4], false)
	recs[2].capLen = snaplen + 1
	bad := rawPcap(binary.LittleEndian, false, snaplen, layers.LinkTypeEthernet, recs)
	r, err := capture.NewReader(bytes.NewReader(bad))
	require.NoError(t, err)
	_, _, _, err = r.Next()
	require.NoError(t, err)
	ahead := r.Ahead(make([][]byte, 0, 5))
	require.Len(t, ahead, 1)
	assert.Equal(t, frames[1].data, ahead[0])
	_, _, _, err = r.Next()
	require.NoError(t, err)
	_, _, _, err = r.Next()
	require.Error(t, err)
	assert.Empty(t, r.Ahead(make([][]byte, 0, 5)), "a Reader in error")
}
