package nccl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/nccl"
)

// goldenEntries are one CTS entry per layout, written byte by byte from
// NCCL.md's table (little-endian): addr 0x00007f1234560000, size 0x80000
// (512 KiB), rkeys 0x1a2b and 0x3c4d (as many as the layout has), nreqs 1,
// tag 2, idx 5; the bytes between fields are padding (0xee).
var goldenEntries = map[string][]byte{
	// addr u64 @0, size i32 @8, rkey u32 @12, nreqs i32 @16, tag i32 @20, idx u64 @24; 32 bytes.
	"2.19": {
		0x00, 0x00, 0x56, 0x34, 0x12, 0x7f, 0x00, 0x00, // addr
		0x00, 0x00, 0x08, 0x00, // size
		0x2b, 0x1a, 0x00, 0x00, // rkey
		0x01, 0x00, 0x00, 0x00, // nreqs
		0x02, 0x00, 0x00, 0x00, // tag
		0x05, 0, 0, 0, 0, 0, 0, 0, // idx
	},
	// addr @0, size i32 @8, rkeys[2] @12, nreqs @20, tag @24, idx u64 @32; 64 bytes.
	"2.20": {
		0x00, 0x00, 0x56, 0x34, 0x12, 0x7f, 0x00, 0x00, // addr
		0x00, 0x00, 0x08, 0x00, // size
		0x2b, 0x1a, 0x00, 0x00, 0x4d, 0x3c, 0x00, 0x00, // rkeys
		0x01, 0x00, 0x00, 0x00, // nreqs
		0x02, 0x00, 0x00, 0x00, // tag
		0xee, 0xee, 0xee, 0xee, // padding
		0x05, 0, 0, 0, 0, 0, 0, 0, // idx
		0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee,
		0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee,
	},
	// addr @0, size u64 @8, rkeys[4] @16, nreqs @32, tag @36, idx u64 @40; 64 bytes.
	"2.25": {
		0x00, 0x00, 0x56, 0x34, 0x12, 0x7f, 0x00, 0x00, // addr
		0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, // size
		0x2b, 0x1a, 0x00, 0x00, 0x4d, 0x3c, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, // rkeys
		0x01, 0x00, 0x00, 0x00, // nreqs
		0x02, 0x00, 0x00, 0x00, // tag
		0x05, 0, 0, 0, 0, 0, 0, 0, // idx
		0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee,
	},
	// addr @0, size u64 @8, rkeys[8] @16, nreqs @48, tag @52, idx u64 @56; 64 bytes.
	"2.30": {
		0x00, 0x00, 0x56, 0x34, 0x12, 0x7f, 0x00, 0x00, // addr
		0x00, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, // size
		0x2b, 0x1a, 0x00, 0x00, 0x4d, 0x3c, 0x00, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, // rkeys[0..3]
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // rkeys[4..7]
		0x01, 0x00, 0x00, 0x00, // nreqs
		0x02, 0x00, 0x00, 0x00, // tag
		0x05, 0, 0, 0, 0, 0, 0, 0, // idx
	},
}

func TestDecodeCTSGolden(t *testing.T) {
	for _, l := range nccl.Layouts() {
		t.Run(l.Name, func(t *testing.T) {
			b := goldenEntries[l.Name]
			require.Len(t, b, l.EntrySize)
			entries, err := l.DecodeCTS(nil, len(b), b)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			e := entries[0]
			assert.Equal(t, uint64(0x00007f1234560000), e.Addr)
			assert.Equal(t, uint64(512<<10), e.Size)
			assert.Equal(t, uint32(0x1a2b), e.Rkeys[0])
			if l.NRkeys > 1 {
				assert.Equal(t, uint32(0x3c4d), e.Rkeys[1])
			}
			assert.Equal(t, 1, e.NReqs)
			assert.Equal(t, 2, e.Tag)
			assert.Equal(t, uint64(5), e.Idx)
			// The slot of idx 5 is 4: the FIFO starts 4 strides below.
			fifo, ok := l.FIFOAddr(0x10000+4*uint64(l.Stride), e.Idx)
			assert.True(t, ok)
			assert.Equal(t, uint64(0x10000), fifo)

			// Cut through idx it still decodes; one byte shorter it does not.
			_, err = l.DecodeCTS(nil, len(b), b[:l.Idx+8])
			require.NoError(t, err)
			_, err = l.DecodeCTS(nil, len(b), b[:l.Idx+7])
			require.ErrorIs(t, err, nccl.ErrNotCTS)
		})
	}
}

func TestDecodeCTSRefuses(t *testing.T) {
	l := nccl.Layouts()[1] // 2.20
	entry := func(edit func(b []byte)) []byte {
		b := append([]byte(nil), goldenEntries["2.20"]...)
		edit(b)
		return b
	}
	for _, tc := range []struct {
		name string
		b    []byte
		len  int
	}{
		{"two entries claiming nreqs 1", append(entry(func([]byte) {}), entry(func([]byte) {})...), 128},
		{"length not a whole entry", entry(func([]byte) {}), 48},
		{"more than 8 entries", make([]byte, 9*64), 9 * 64},
		{"negative tag", entry(func(b []byte) { b[27] = 0x80 }), 64},
		{"idx 0", entry(func(b []byte) { b[32] = 0 }), 64},
		{"negative size", entry(func(b []byte) { b[11] = 0x80 }), 64},
		{"no address", entry(func(b []byte) { copy(b[0:8], make([]byte, 8)) }), 64},
		{"no rkey", entry(func(b []byte) { copy(b[12:16], make([]byte, 4)) }), 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := l.DecodeCTS(nil, tc.len, tc.b)
			require.ErrorIs(t, err, nccl.ErrNotCTS)
		})
	}
}
