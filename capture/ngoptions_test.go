package capture_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
)

// repeatReader yields b n times.
type repeatReader struct {
	b   []byte
	n   int
	off int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.n == 0 {
		return 0, io.EOF
	}
	k := copy(p, r.b[r.off:])
	r.off += k
	if r.off == len(r.b) {
		r.off, r.n = 0, r.n-1
	}
	return k, nil
}

// TestInterfaceOptionsBounded: pcapgo keeps every interface's name,
// description, filter, OS and comment as strings for the whole section.
// 256 interfaces with five 64,000-byte options each (82 MB of strings,
// 1.98 GiB at 4,096 interfaces) must cost a bounded amount each: the
// reader holds (and allocates) well under 16 MiB reading them.
func TestInterfaceOptionsBounded(t *testing.T) {
	const n = 256
	b := &ngBuilder{o: binary.LittleEndian}
	long := bytes.Repeat([]byte("x"), 64000)
	var opts [][]byte
	for _, code := range []uint16{1, 2, 3, 11, 12} { // comment, name, description, filter, OS
		opts = append(opts, b.opt(code, long))
	}
	b.idb(layers.LinkTypeEthernet, 0, opts...)
	idb := b.buf
	head := (&ngBuilder{o: binary.LittleEndian}).shb().buf
	f := testFrames(1, layers.LinkTypeEthernet)[0]
	f.ifIndex = n - 1
	tail := (&ngBuilder{o: binary.LittleEndian}).epb(f).buf

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := capture.NewReader(io.MultiReader(bytes.NewReader(head), &repeatReader{b: idb, n: n}, bytes.NewReader(tail)))
	require.NoError(t, err)
	got, err := readAll(t, r)
	require.ErrorIs(t, err, io.EOF)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(r)
	require.Len(t, got, 1)
	assert.Equal(t, f.data, got[0].data)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("%d interfaces of 5 × 64,000-byte options: %d KiB held, %d MiB allocated", n, held>>10, (after.TotalAlloc-before.TotalAlloc)>>20)
	assert.Less(t, held, int64(16<<20), "memory held for the interfaces")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(16<<20), "memory allocated reading them")
}

// TestLongInterfaceOptionCut: an option cut to 256 bytes leaves the
// options after it in place: the nanosecond if_tsresol after a 300-byte
// interface name still applies to the packet's timestamp.
func TestLongInterfaceOptionCut(t *testing.T) {
	for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, nameLen := range []int{257, 259, 260, 261, 300, 1000} {
			b := &ngBuilder{o: o}
			b.shb(b.opt(1, bytes.Repeat([]byte("c"), 5000)))
			b.idb(layers.LinkTypeEthernet, 0, b.opt(2, bytes.Repeat([]byte("n"), nameLen)), b.opt(9, []byte{9}))
			f := testFrames(1, layers.LinkTypeEthernet)[0]
			b.epb(f)
			r := mustReader(t, b.buf)
			got, err := readAll(t, r)
			require.ErrorIs(t, err, io.EOF)
			require.Len(t, got, 1)
			// epb writes the time in µs; with if_tsresol 9 it reads as ns.
			assert.Equal(t, time.Unix(0, f.ts.UnixMicro()).UTC(), got[0].ts, "name of %d bytes", nameLen)
			assert.Equal(t, f.data, got[0].data)
		}
	}
}
