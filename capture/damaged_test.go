package capture_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
)

// damaged is a capture that must fail: after frames good frames (or in
// NewReader when frames is -1) with an error of kind at offset (not checked
// when -1) whose message contains every string of msg.
type damaged struct {
	name   string
	file   []byte
	want   []testFrame // the frames the file starts with
	frames int
	kind   error
	offset int64
	msg    []string
}

func checkDamaged(t *testing.T, tc damaged) {
	t.Helper()
	t.Run("chunks", func(t *testing.T) { checkDamagedChunks(t, tc) })
	r, err := capture.NewReader(bytes.NewReader(tc.file))
	checkDamagedRead(t, tc, r, err, "")
}

// checkDamagedRead checks what an open reader of a damaged file gives:
// the open error, or the frames before the damage, then the error, again.
func checkDamagedRead(t *testing.T, tc damaged, r *capture.Reader, err error, how string) {
	t.Helper()
	if tc.frames < 0 {
		require.Error(t, err)
		assert.Nil(t, r)
		checkError(t, err, tc)
		return
	}
	require.NoError(t, err)
	got, err := readAll(t, r)
	require.Len(t, got, tc.frames, "frames before the error %v%s", err, how)
	requireFrames(t, tc.want, got)
	checkError(t, err, tc)
	_, data, _, err2 := r.Next()
	assert.Nil(t, data)
	assert.Equal(t, err, err2, "the error again")
}

func checkError(t *testing.T, err error, tc damaged) {
	t.Helper()
	require.ErrorIs(t, err, tc.kind)
	var ce *capture.Error
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, tc.kind, ce.Kind)
	msg := err.Error()
	assert.True(t, strings.HasPrefix(msg, "capture: "), "message %q", msg)
	assert.NotContains(t, msg, "\n")
	if tc.offset >= 0 {
		assert.Equal(t, tc.offset, ce.Offset, "offset; message %q", msg)
		if tc.kind == capture.ErrTruncated || tc.kind == capture.ErrCorrupt {
			assert.Contains(t, msg, fmt.Sprintf("byte offset %d", tc.offset))
		}
	}
	for _, s := range tc.msg {
		assert.Contains(t, msg, s)
	}
	if tc.kind == capture.ErrTruncated {
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	}
	for _, other := range []error{capture.ErrNotCapture, capture.ErrTruncated, capture.ErrCorrupt} {
		if !errors.Is(tc.kind, other) {
			assert.NotErrorIs(t, err, other)
		}
	}
}

func TestDamagedPcap(t *testing.T) {
	frames := testFrames(5, layers.LinkTypeEthernet)
	offs := pcapOffsets(frames)
	le := writePcap(t, false, 65535, layers.LinkTypeEthernet, frames)
	be := rawPcap(binary.BigEndian, true, 65535, layers.LinkTypeEthernet, recordsOf(frames, true))
	size3 := len(frames[3].data)

	// Records with bad captured lengths, after two good ones.
	badLen := func(snaplen, capLen uint32, data []byte) []byte {
		recs := recordsOf(frames[:2], false)
		recs = append(recs, pcapRecord{1, 2, capLen, 60, data})
		return rawPcap(binary.LittleEndian, false, snaplen, layers.LinkTypeEthernet, recs)
	}
	badVersion := bytes.Clone(le)
	badVersion[4] = 3

	tests := []damaged{
		{name: "cut in record header", file: le[:offs[3]+7], frames: 3, kind: capture.ErrTruncated, offset: offs[3],
			msg: []string{"truncated record at byte offset", "record header has 7 of 16 bytes"}},
		{name: "cut in record header, big-endian", file: be[:offs[3]+15], frames: 3, kind: capture.ErrTruncated, offset: offs[3],
			msg: []string{"record header has 15 of 16 bytes"}},
		{name: "cut after record header", file: le[:offs[3]+16], frames: 3, kind: capture.ErrTruncated, offset: offs[3],
			msg: []string{fmt.Sprintf("packet data has 0 of %d bytes", size3)}},
		{name: "cut in packet data", file: le[:offs[3]+16+20], frames: 3, kind: capture.ErrTruncated, offset: offs[3],
			msg: []string{fmt.Sprintf("truncated record at byte offset %d: packet data has 20 of %d bytes", offs[3], size3)}},
		{name: "cut in packet data, big-endian", file: be[:offs[4]-1], frames: 3, kind: capture.ErrTruncated, offset: offs[3],
			msg: []string{fmt.Sprintf("packet data has %d of %d bytes", size3-1, size3)}},
		{name: "cut in file header", file: le[:10], frames: -1, kind: capture.ErrTruncated, offset: 0,
			msg: []string{"truncated file header at byte offset 0: file header has 10 of 24 bytes"}},
		{name: "unsupported version", file: badVersion, frames: -1, kind: capture.ErrCorrupt, offset: 4,
			msg: []string{"unsupported pcap version 3.4"}},
		{name: "captured length above snap length", file: badLen(128, 200, make([]byte, 200)), frames: 2,
			kind: capture.ErrCorrupt, offset: offs[2],
			msg: []string{"corrupt record at byte offset", "captured length 200 exceeds the snap length 128"}},
		{name: "captured length above 256 KiB, no snap length", file: badLen(0, capture.MaxCaptureLength+1, nil), frames: 2,
			kind: capture.ErrCorrupt, offset: offs[2], msg: []string{"captured length 262145 exceeds the 262144-byte limit"}},
		{name: "captured length above 256 KiB, huge snap length", file: badLen(1<<31, 1<<31, make([]byte, 100)), frames: 2,
			kind: capture.ErrCorrupt, offset: offs[2], msg: []string{"captured length 2147483648 exceeds the 262144-byte limit"}},
		{name: "captured length 4 GiB", file: badLen(0xffffffff, 0xffffffff, nil), frames: 2,
			kind: capture.ErrCorrupt, offset: offs[2], msg: []string{"captured length 4294967295 exceeds"}},
	}
	for _, tc := range tests {
		tc.want = frames
		t.Run(tc.name, func(t *testing.T) { checkDamaged(t, tc) })
	}
}

func TestNotCapture(t *testing.T) {
	tests := []damaged{
		{name: "empty file", file: nil, kind: capture.ErrEmpty, msg: []string{"capture: empty file"}},
		{name: "empty gzip stream", file: gz(t, nil), kind: capture.ErrEmpty,
			msg: []string{"capture: empty file (the gzip stream holds no data)"}},
		{name: "garbage", file: []byte("GARBAGE, NOT A CAPTURE"), kind: capture.ErrNotCapture,
			msg: []string{"capture: not a pcap or pcapng file (magic 0x47415242)"}},
		{name: "ELF", file: []byte("\x7fELF\x02\x01\x01\x00"), kind: capture.ErrNotCapture, msg: []string{"magic 0x7f454c46"}},
		{name: "two bytes", file: []byte{0xa1, 0xb2}, kind: capture.ErrNotCapture,
			msg: []string{"capture: not a pcap or pcapng file (only 2 bytes: a1 b2)"}},
		{name: "one gzip byte", file: []byte{0x1f}, kind: capture.ErrNotCapture, msg: []string{"only 1 byte: 1f"}},
		{name: "garbage inside gzip", file: gz(t, []byte("hello, world")), kind: capture.ErrNotCapture,
			msg: []string{"magic 0x68656c6c inside the gzip stream"}},
		{name: "pcap magic swapped halves", file: []byte{0xc3, 0xd4, 0xa1, 0xb2, 0, 0, 0, 0}, kind: capture.ErrNotCapture,
			msg: []string{"magic 0xc3d4a1b2"}},
		// Other formats, by the bytes their files start with (Wireshark's
		// wiretap: ngsniffer.c, netxray.c, snoop.c, netmon.c, libpcap.c;
		// the compressors' own magic numbers), with what to do.
		{name: "Sniffer (DOS)", file: []byte("TRSNIFF data    \x1a\x02\x00\x04\x00"), kind: capture.ErrNotCapture,
			msg: []string{"capture: not a pcap or pcapng file (magic 0x5452534e): a Sniffer (DOS) capture: convert it with editcap -F pcap FILE OUT.pcap"}},
		{name: "NetXRay", file: []byte("XCP\x00002.001"), kind: capture.ErrNotCapture, msg: []string{"a NetXRay or Windows Sniffer capture"}},
		{name: "snoop", file: []byte("snoop\x00\x00\x00\x00\x00\x00\x02\x00\x00\x00\x04"), kind: capture.ErrNotCapture,
			msg: []string{"(magic 0x736e6f6f): a Solaris snoop capture: convert it with editcap"}},
		{name: "Network Monitor 2", file: []byte("GMBU\x00\x02"), kind: capture.ErrNotCapture, msg: []string{"Network Monitor 2.x"}},
		{name: "Network Monitor 1", file: []byte("RTSS\x01\x01"), kind: capture.ErrNotCapture, msg: []string{"Network Monitor 1.x"}},
		{name: "Kuznetzov pcap", file: []byte{0x34, 0xcd, 0xb2, 0xa1, 2, 0, 4, 0}, kind: capture.ErrNotCapture,
			msg: []string{"(magic 0x34cdb2a1): a pcap with Kuznetzov's modified record headers"}},
		{name: "bzip2", file: []byte("BZh91AY&SY"), kind: capture.ErrNotCapture, msg: []string{"bzip2-compressed (only gzip is read): decompress it first"}},
		{name: "xz", file: []byte("\xfd7zXZ\x00\x00\x04"), kind: capture.ErrNotCapture, msg: []string{"xz-compressed"}},
		{name: "zstd", file: []byte{0x28, 0xb5, 0x2f, 0xfd, 0x24, 0x00}, kind: capture.ErrNotCapture, msg: []string{"zstd-compressed"}},
		{name: "lz4", file: []byte{0x04, 0x22, 0x4d, 0x18, 0x64, 0x40}, kind: capture.ErrNotCapture, msg: []string{"lz4-compressed"}},
		{name: "zip", file: []byte("PK\x03\x04\x14\x00"), kind: capture.ErrNotCapture, msg: []string{"a zip archive"}},
		{name: "snoop inside gzip", file: gz(t, []byte("snoop\x00\x00\x00\x00\x00\x00\x02")), kind: capture.ErrNotCapture,
			msg: []string{"(magic 0x736e6f6f inside the gzip stream): a Solaris snoop capture"}},
	}
	for _, tc := range tests {
		tc.frames = -1
		t.Run(tc.name, func(t *testing.T) {
			checkDamaged(t, tc)
			assert.ErrorIs(t, func() error { _, err := capture.NewReader(bytes.NewReader(tc.file)); return err }(), capture.ErrNotCapture)
		})
	}
}

// gzipCut returns data gzip-compressed, flushed after the first cut bytes,
// and cut off right after that flush: decompressing yields exactly data[:cut]
// and then io.ErrUnexpectedEOF.
func gzipCut(t *testing.T, data []byte, cut int) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(data[:cut])
	require.NoError(t, err)
	require.NoError(t, w.Flush())
	return bytes.Clone(buf.Bytes())
}

func TestDamagedGzip(t *testing.T) {
	frames := testFrames(200, layers.LinkTypeEthernet)
	offs := pcapOffsets(frames)
	pcap := writePcap(t, false, 65535, layers.LinkTypeEthernet, frames)
	whole := gz(t, pcap)
	badCRC := bytes.Clone(whole)
	badCRC[len(badCRC)-8] ^= 0xff // CRC-32 of the data
	badSize := bytes.Clone(whole)
	badSize[len(badSize)-1] ^= 0xff // ISIZE

	tests := []damaged{
		{name: "cut between records", file: gzipCut(t, pcap, int(offs[150])), frames: 150,
			kind: capture.ErrTruncated, offset: offs[150],
			msg: []string{fmt.Sprintf("capture: truncated gzip stream at byte offset %d: the compressed data is cut short", offs[150])}},
		{name: "cut in a record", file: gzipCut(t, pcap, int(offs[150])+30), frames: 150,
			kind: capture.ErrTruncated, offset: offs[150],
			msg: []string{fmt.Sprintf("capture: truncated record at byte offset %d (packet data has 14 of", offs[150]),
				fmt.Sprintf("the gzip stream is cut short after %d bytes of data", offs[150]+30)}},
		{name: "cut in the gzip header", file: whole[:5], frames: -1, kind: capture.ErrTruncated, offset: 0,
			msg: []string{"capture: truncated gzip header at byte offset 0"}},
		{name: "bad gzip header", file: []byte{0x1f, 0x8b, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0}, frames: -1,
			kind: capture.ErrCorrupt, offset: 0, msg: []string{"capture: corrupt gzip header at byte offset 0: gzip: invalid header"}},
		{name: "bad checksum", file: badCRC, frames: 200, kind: capture.ErrCorrupt, offset: int64(len(pcap)),
			msg: []string{"corrupt gzip stream", "invalid checksum"}},
		{name: "bad size", file: badSize, frames: 200, kind: capture.ErrCorrupt, offset: int64(len(pcap)),
			msg: []string{"corrupt gzip stream", "invalid checksum"}},
		{name: "trailing garbage", file: append(bytes.Clone(whole), "this is not gzip data"...), frames: 200,
			kind: capture.ErrCorrupt, offset: int64(len(pcap)), msg: []string{"trailing garbage after the compressed stream (74 68 69 73 20 69 73 20 …)"}},
		{name: "8 bytes of trailing garbage", file: append(bytes.Clone(whole), "garbage!"...), frames: 200,
			kind: capture.ErrCorrupt, offset: int64(len(pcap)), msg: []string{fmt.Sprintf("capture: corrupt gzip stream at byte offset %d of the data: trailing garbage after the compressed stream (67 61 72 62 61 67 65 21)", len(pcap))}},
		{name: "one byte of trailing garbage", file: append(bytes.Clone(whole), 0), frames: 200,
			kind: capture.ErrCorrupt, offset: int64(len(pcap)), msg: []string{"trailing garbage after the compressed stream (00)"}},
		{name: "second member cut in its header", file: append(bytes.Clone(whole), whole[:6]...), frames: 200,
			kind: capture.ErrTruncated, offset: int64(len(pcap)), msg: []string{"the compressed data is cut short"}},
		{name: "second member with a bad header", file: append(bytes.Clone(whole), 0x1f, 0x8b, 0x09, 0, 0, 0, 0, 0, 0, 0, 0, 0), frames: 200,
			kind: capture.ErrCorrupt, offset: int64(len(pcap)), msg: []string{"what follows the compressed data is not gzip (gzip: invalid header)"}},
	}
	for _, tc := range tests {
		tc.want = frames
		t.Run(tc.name, func(t *testing.T) { checkDamaged(t, tc) })
	}

	// Cut anywhere: the frames before the cut come out, then ErrTruncated.
	for _, cut := range []int{len(whole) / 3, len(whole) / 2, len(whole) - 9, len(whole) - 1} {
		t.Run(fmt.Sprintf("cut at %d of %d", cut, len(whole)), func(t *testing.T) {
			r := mustReader(t, whole[:cut])
			got, err := readAll(t, r)
			requireFrames(t, frames, got)
			require.ErrorIs(t, err, capture.ErrTruncated)
			assert.Contains(t, err.Error(), "gzip")
			if cut <= len(whole)/2 {
				assert.Less(t, len(got), len(frames))
			}
			var ce *capture.Error
			require.ErrorAs(t, err, &ce)
			assert.GreaterOrEqual(t, ce.Offset, offs[len(got)])
		})
	}
}

func TestDamagedPcapNG(t *testing.T) {
	frames := testFrames(3, linkTypeInfiniBand)
	// good returns a builder holding SHB, IDB and the three frames.
	good := func(o byteOrder) *ngBuilder { return ngFile(o, linkTypeInfiniBand, frames) }
	le := good(binary.LittleEndian)
	end := int64(len(le.buf))
	epb2 := le.offs[4] // the last EPB
	epb2Len := int(end - epb2)

	type mk func(b *ngBuilder) // appends damage to a good file
	tests := []struct {
		damaged
		damage mk
	}{
		{damaged{name: "block length below 12", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"corrupt block at byte offset", "block of type 0x00000099 length 4 is below the 12-byte minimum"}},
			func(b *ngBuilder) { b.raw(b.u32s(0x99, 4, 4)) }},
		{damaged{name: "packet block below its minimum", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"enhanced packet block length 12 is below the 32-byte minimum"}},
			func(b *ngBuilder) { b.raw(b.u32s(6, 12, 12)) }},
		{damaged{name: "block length not a multiple of 4", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"enhanced packet block length 45 is not a multiple of 4"}},
			func(b *ngBuilder) { b.raw(append(b.u32s(6, 45), make([]byte, 37)...)) }},
		{damaged{name: "trailing length differs", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"enhanced packet block length 92 does not match its trailing length 48"}},
			func(b *ngBuilder) {
				b.epb(testFrames(1, linkTypeInfiniBand)[0])
				b.o.PutUint32(b.buf[len(b.buf)-4:], 48)
				b.epb(frames[0])
			}},
		{damaged{name: "trailing length of a skipped block differs", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"block of type 0x00000099 length 112 does not match its trailing length 111"}},
			func(b *ngBuilder) {
				b.block(0x99, make([]byte, 100))
				b.o.PutUint32(b.buf[len(b.buf)-4:], 111)
				b.epb(frames[0])
			}},
		{damaged{name: "trailing length of a name resolution block differs", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"name resolution block length 16 does not match its trailing length 0"}},
			func(b *ngBuilder) {
				b.block(4, make([]byte, 4))
				b.o.PutUint32(b.buf[len(b.buf)-4:], 0)
			}},
		{damaged{name: "packet block over 1 MiB", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"enhanced packet block length 2097152 exceeds the 1048576-byte limit"}},
			func(b *ngBuilder) { b.raw(append(b.u32s(6, 2<<20), make([]byte, 100)...)) }},
		{damaged{name: "skipped block longer than the file", frames: 3, kind: capture.ErrTruncated, offset: end,
			msg: []string{"truncated block at byte offset", "block of type 0x00000099 has 108 of 4000000 bytes"}},
			func(b *ngBuilder) { b.raw(append(b.u32s(0x99, 4000000), make([]byte, 100)...)) }},
		{damaged{name: "file ends in a skipped block's trailer", frames: 3, kind: capture.ErrTruncated, offset: end,
			msg: []string{"block of type 0x00000099 has 110 of 112 bytes"}},
			func(b *ngBuilder) {
				b.block(0x99, make([]byte, 100))
				b.buf = b.buf[:len(b.buf)-2]
			}},
		{damaged{name: "captured length beyond the block", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"captured length 1000 does not fit in its 132-byte enhanced packet block"}},
			func(b *ngBuilder) { b.block(6, b.epbBody(0, time.Unix(5, 0), 1000, 1000, make([]byte, 100))) }},
		{damaged{name: "captured length above the snap length", frames: 3, kind: capture.ErrCorrupt, offset: end + 20,
			msg: []string{"captured length 100 exceeds the snap length 64"}},
			func(b *ngBuilder) {
				b.idb(layers.LinkTypeEthernet, 64)
				b.block(6, b.epbBody(1, time.Unix(5, 0), 100, 100, make([]byte, 100)))
			}},
		{damaged{name: "captured length above 256 KiB", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"captured length 300000 exceeds the 262144-byte limit"}},
			func(b *ngBuilder) { b.block(6, b.epbBody(0, time.Unix(5, 0), 300000, 300000, make([]byte, 100))) }},
		{damaged{name: "captured length 4 GiB", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"captured length 4294967295 exceeds the 262144-byte limit"}},
			func(b *ngBuilder) { b.block(6, b.epbBody(0, time.Unix(5, 0), 0xffffffff, 0, make([]byte, 100))) }},
		{damaged{name: "undescribed interface", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"enhanced packet block refers to interface 7, but the section describes 1"}},
			func(b *ngBuilder) { b.block(6, b.epbBody(7, time.Unix(5, 0), 4, 4, make([]byte, 4))) }},
		{damaged{name: "statistics of an undescribed interface", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"interface statistics block refers to interface 1, but the section describes 1"}},
			func(b *ngBuilder) { b.block(5, b.u32s(1, 0, 0)) }},
		{damaged{name: "option beyond its block", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{fmt.Sprintf("option 1 at byte offset %d is 200 bytes long, but the enhanced packet block has 8 bytes left", end+28+4)}},
			func(b *ngBuilder) {
				body := b.epbBody(0, time.Unix(5, 0), 4, 4, make([]byte, 4))
				body = append(body, b.o.AppendUint16(b.o.AppendUint16(nil, 1), 200)...)
				body = append(body, make([]byte, 8)...)
				b.block(6, body)
			}},
		{damaged{name: "interface option beyond its block", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"option 2 at byte offset", "is 65535 bytes long, but the interface description block has 4 bytes left"}},
			func(b *ngBuilder) {
				body := b.u32s(1, 0)
				body = append(body, b.o.AppendUint16(b.o.AppendUint16(nil, 2), 65535)...)
				b.block(1, append(body, 'e', 't', 'h', '0'))
			}},
		{damaged{name: "end of options with a length", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"end-of-options at byte offset", "has length 4, want 0"}},
			func(b *ngBuilder) {
				body := b.epbBody(0, time.Unix(5, 0), 4, 4, make([]byte, 4))
				body = b.o.AppendUint16(b.o.AppendUint16(body, 0), 4) // end of options, length 4
				b.block(6, append(body, 0, 0, 0, 0))
			}},
		{damaged{name: "bad byte-order magic in a later section", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"section header block has byte-order magic 0x12345678, want 0x1a2b3c4d"}},
			func(b *ngBuilder) {
				b.raw(append(binary.BigEndian.AppendUint32(b.u32s(0x0a0d0d0a, 28), 0x12345678), make([]byte, 16)...))
			}},
		{damaged{name: "later section of version 2.0", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"unsupported pcapng version 2.0 (want 1.0)"}},
			func(b *ngBuilder) {
				b.shb()
				b.o.PutUint16(b.buf[end+12:], 2)
			}},
		{damaged{name: "packet of an interface of the previous section", frames: 3, kind: capture.ErrCorrupt, offset: end + 28,
			msg: []string{"refers to interface 0, but the section describes 0"}},
			func(b *ngBuilder) { b.shb().epb(frames[0]) }},
		{damaged{name: "simple packet block too long for its block", frames: 3, kind: capture.ErrCorrupt, offset: end,
			msg: []string{"captured length 100 does not fit in its 36-byte simple packet block"}},
			func(b *ngBuilder) { b.spb(100, make([]byte, 20)) }},
		{damaged{name: "simple packet block before any interface", frames: 3, kind: capture.ErrCorrupt, offset: end + 28,
			msg: []string{"simple packet block before any interface description block"}},
			func(b *ngBuilder) { b.shb().spb(4, make([]byte, 4)) }},
		{damaged{name: "timestamp resolution pcapgo refuses", frames: 3, kind: capture.ErrCorrupt, offset: end + 32,
			msg: []string{"timestamp resolution 10^-127 is too high"}},
			func(b *ngBuilder) { b.idb(layers.LinkTypeEthernet, 0, b.opt(9, []byte{127})) }},
	}
	for _, tc := range tests {
		for _, o := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
			t.Run(tc.name+"/"+o.String(), func(t *testing.T) {
				b := good(o)
				tc.damage(b)
				tc.file, tc.want = b.buf, frames
				checkDamaged(t, tc.damaged)
			})
		}
	}

	cuts := []damaged{
		{name: "cut in block header", file: le.buf[:epb2+5], frames: 2, kind: capture.ErrTruncated, offset: epb2,
			msg: []string{"truncated block at byte offset", "block header has 5 of 8 bytes"}},
		{name: "cut in packet data", file: le.buf[:epb2+40], frames: 2, kind: capture.ErrTruncated, offset: epb2,
			msg: []string{fmt.Sprintf("enhanced packet block has 40 of %d bytes", epb2Len)}},
		{name: "cut in trailing length", file: le.buf[:end-1], frames: 2, kind: capture.ErrTruncated, offset: epb2,
			msg: []string{fmt.Sprintf("enhanced packet block has %d of %d bytes", epb2Len-1, epb2Len)}},
		{name: "cut in packet data, gzip", file: gz(t, le.buf[:epb2+40]), frames: 2, kind: capture.ErrTruncated, offset: epb2,
			msg: []string{fmt.Sprintf("truncated block at byte offset %d: enhanced packet block has 40 of", epb2)}},
		{name: "cut in section header", file: le.buf[:10], frames: -1, kind: capture.ErrTruncated, offset: 0,
			msg: []string{"truncated block at byte offset 0: section header block has 10 of 12 bytes"}},
		{name: "only the magic", file: le.buf[:4], frames: -1, kind: capture.ErrTruncated, offset: 0,
			msg: []string{"block header has 4 of 8 bytes"}},
		{name: "cut in first interface", file: le.buf[:le.offs[1]+12], frames: 0, kind: capture.ErrTruncated, offset: le.offs[1],
			msg: []string{"interface description block has 12 of"}},
		{name: "bad byte-order magic", file: append(binary.BigEndian.AppendUint32([]byte{0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0}, 0x01020304), make([]byte, 16)...),
			frames: -1, kind: capture.ErrCorrupt, offset: 0, msg: []string{"byte-order magic 0x01020304"}},
		{name: "version 2.0", file: func() []byte {
			b := bytes.Clone(le.buf)
			b[12] = 2
			return b
		}(), frames: -1, kind: capture.ErrCorrupt, offset: 0, msg: []string{"unsupported pcapng version 2.0"}},
		{name: "section header below its minimum", file: append([]byte{0x0a, 0x0d, 0x0d, 0x0a, 16, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a}, 16, 0, 0, 0),
			frames: -1, kind: capture.ErrCorrupt, offset: 0, msg: []string{"section header block length 16 is below the 28-byte minimum"}},
	}
	for _, tc := range cuts {
		tc.want = frames
		t.Run(tc.name, func(t *testing.T) { checkDamaged(t, tc) })
	}
}

func TestErrorType(t *testing.T) {
	e := &capture.Error{Kind: capture.ErrTruncated, Offset: 42, Err: io.ErrUnexpectedEOF}
	assert.Equal(t, "capture: truncated at byte offset 42: unexpected EOF", e.Error())
	assert.ErrorIs(t, e, capture.ErrTruncated)
	assert.ErrorIs(t, e, io.ErrUnexpectedEOF)
	io := &capture.Error{Offset: 7, Err: errors.New("disk on fire")}
	assert.Equal(t, "capture: read error at byte offset 7: disk on fire", io.Error())
	assert.NotErrorIs(t, io, capture.ErrCorrupt)
	assert.ErrorIs(t, capture.ErrEmpty, capture.ErrNotCapture)
	assert.NotErrorIs(t, capture.ErrNotCapture, capture.ErrEmpty)
}

// failingReader returns its data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReadError(t *testing.T) {
	frames := testFrames(4, layers.LinkTypeEthernet)
	offs := pcapOffsets(frames)
	pcap := writePcap(t, false, 65535, layers.LinkTypeEthernet, frames)
	boom := errors.New("boom")

	_, err := capture.NewReader(&failingReader{err: boom})
	require.ErrorIs(t, err, boom)
	assert.EqualError(t, err, "capture: read error at byte offset 0: boom")

	r, err := capture.NewReader(&failingReader{data: pcap[:offs[2]+20], err: boom})
	require.NoError(t, err)
	got, err := readAll(t, r)
	requireFrames(t, frames, got)
	require.Len(t, got, 2)
	require.ErrorIs(t, err, boom)
	var ce *capture.Error
	require.ErrorAs(t, err, &ce)
	assert.Nil(t, ce.Kind)
	assert.Equal(t, offs[2], ce.Offset)
	assert.Contains(t, err.Error(), fmt.Sprintf("capture: read error at byte offset %d, inside the record at byte offset %d", offs[2]+20, offs[2]))
}

// TestTimestampOutOfRange: a pcapng timestamp is a 64-bit count of any
// unit. One past the year 9999 (found by FuzzCapture, where it broke the
// JSON report), or one that nanoseconds since 1970 in 64 bits cannot hold
// (2^64−1 ns, year 2554: time differences saturated) is a corrupt packet,
// after the frames before it.
func TestTimestampOutOfRange(t *testing.T) {
	tests := []struct {
		name     string
		tsresol  []byte // if_tsresol of the interface, nil for µs
		hi, lo   uint32 // the bad packet's timestamp
		wantText string
	}{
		{"µs count in year 586,524", nil, 0xFFFFFFFF, 0, "its timestamp (year 586524) is outside 1970 to 2262-04-11"},
		{"2^64−1 ns", []byte{9}, 0xFFFFFFFF, 0xFFFFFFFF, "its timestamp 2554-07-21T23:34:33.709551615Z is outside 1970 to 2262-04-11"},
		{"2^63 ns", []byte{9}, 0x80000000, 0, "its timestamp 2262-04-11T23:47:16.854775808Z is outside 1970 to 2262-04-11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frames := testFrames(2, linkTypeInfiniBand)
			b := &ngBuilder{o: binary.LittleEndian}
			var opts [][]byte
			if tt.tsresol != nil {
				opts = append(opts, b.opt(9, tt.tsresol))
			}
			b.shb().idb(linkTypeInfiniBand, 0, opts...)
			for _, f := range frames {
				b.epb(f)
			}
			body := b.epbBody(0, frames[0].ts, uint32(len(frames[0].data)), frames[0].origLen, frames[0].data)
			binary.LittleEndian.PutUint32(body[4:8], tt.hi)
			binary.LittleEndian.PutUint32(body[8:12], tt.lo)
			b.block(6, body)
			r, err := capture.NewReader(bytes.NewReader(b.buf))
			require.NoError(t, err)
			for range frames {
				_, _, _, err := r.Next()
				require.NoError(t, err)
			}
			_, _, _, err = r.Next()
			require.ErrorIs(t, err, capture.ErrCorrupt)
			assert.Contains(t, err.Error(), tt.wantText)
			assert.Contains(t, err.Error(), fmt.Sprintf("byte offset %d", len(b.buf)))
		})
	}
}
