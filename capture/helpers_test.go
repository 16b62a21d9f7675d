package capture_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
)

// byteOrder is what the hand-made files are written in.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// linkTypeInfiniBand is LINKTYPE_INFINIBAND, linkTypeERF LINKTYPE_ERF.
const (
	linkTypeInfiniBand layers.LinkType = 247
	linkTypeERF        layers.LinkType = 197
)

// testFrame is one frame of a generated capture.
type testFrame struct {
	ts       time.Time
	data     []byte
	origLen  int
	ifIndex  int
	linkType layers.LinkType
}

// frameData returns n deterministic bytes for frame i.
func frameData(i, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(i*31 + j*7 + 1)
	}
	return b
}

// testFrames returns n frames of varied sizes (60 to 1100 bytes), with
// microsecond timestamps a few ms apart, on link type lt.
func testFrames(n int, lt layers.LinkType) []testFrame {
	sizes := []int{60, 74, 98, 1082, 322, 174, 1100, 64}
	base := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	frames := make([]testFrame, n)
	for i := range frames {
		size := sizes[i%len(sizes)]
		frames[i] = testFrame{
			ts:       base.Add(time.Duration(i)*3*time.Millisecond + time.Duration(i*17)*time.Microsecond),
			data:     frameData(i, size),
			origLen:  size + 4*(i%3), // some frames are snapped
			linkType: lt,
		}
	}
	return frames
}

// nanoFrames is testFrames with timestamps that need nanoseconds.
func nanoFrames(n int, lt layers.LinkType) []testFrame {
	frames := testFrames(n, lt)
	for i := range frames {
		frames[i].ts = frames[i].ts.Add(time.Duration(i*7+1) * time.Nanosecond)
	}
	return frames
}

// writePcap writes a little-endian pcap with pcapgo's writer.
func writePcap(t testing.TB, nano bool, snaplen uint32, lt layers.LinkType, frames []testFrame) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if nano {
		w = pcapgo.NewWriterNanos(&buf)
	}
	require.NoError(t, w.WriteFileHeader(snaplen, lt))
	for _, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: f.ts, CaptureLength: len(f.data), Length: f.origLen}
		require.NoError(t, w.WritePacket(ci, f.data))
	}
	return buf.Bytes()
}

// pcapRecord is a hand-made pcap record: lengths as written, whatever data holds.
type pcapRecord struct {
	sec, frac       uint32
	capLen, origLen uint32
	data            []byte
}

// recordsOf turns frames into records with consistent lengths.
func recordsOf(frames []testFrame, nano bool) []pcapRecord {
	recs := make([]pcapRecord, len(frames))
	for i, f := range frames {
		frac := uint32(f.ts.Nanosecond() / 1000)
		if nano {
			frac = uint32(f.ts.Nanosecond())
		}
		recs[i] = pcapRecord{uint32(f.ts.Unix()), frac, uint32(len(f.data)), uint32(f.origLen), f.data}
	}
	return recs
}

// rawPcap hand-crafts a pcap file in byte order o: the 24-byte header and
// the records. pcapgo only writes little-endian files.
func rawPcap(o byteOrder, nano bool, snaplen uint32, lt layers.LinkType, recs []pcapRecord) []byte {
	magic := uint32(0xa1b2c3d4)
	if nano {
		magic = 0xa1b23c4d
	}
	b := o.AppendUint32(nil, magic)
	b = o.AppendUint16(b, 2)
	b = o.AppendUint16(b, 4)
	b = o.AppendUint32(b, 0) // thiszone
	b = o.AppendUint32(b, 0) // sigfigs
	b = o.AppendUint32(b, snaplen)
	b = o.AppendUint32(b, uint32(lt))
	for _, r := range recs {
		b = o.AppendUint32(b, r.sec)
		b = o.AppendUint32(b, r.frac)
		b = o.AppendUint32(b, r.capLen)
		b = o.AppendUint32(b, r.origLen)
		b = append(b, r.data...)
	}
	return b
}

// pcapOffsets returns the offset of each record of a pcap of frames, and the
// offset of the end.
func pcapOffsets(frames []testFrame) []int64 {
	offs := []int64{24}
	for _, f := range frames {
		offs = append(offs, offs[len(offs)-1]+16+int64(len(f.data)))
	}
	return offs
}

// writeNg writes a pcapng with pcapgo's NgWriter: one interface per link
// type in lts (in that order); frames carry their interface index.
func writeNg(t testing.TB, lts []layers.LinkType, frames []testFrame) []byte {
	t.Helper()
	var buf bytes.Buffer
	intf := pcapgo.DefaultNgInterface
	intf.LinkType = lts[0]
	intf.Name = "eth0"
	intf.OS = "linux"
	w, err := pcapgo.NewNgWriterInterface(&buf, intf, pcapgo.NgWriterOptions{})
	require.NoError(t, err)
	for i, lt := range lts[1:] {
		intf.LinkType = lt
		intf.Name = "ib" + string(rune('0'+i))
		id, err := w.AddInterface(intf)
		require.NoError(t, err)
		require.Equal(t, i+1, id)
	}
	for _, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: f.ts, CaptureLength: len(f.data), Length: f.origLen, InterfaceIndex: f.ifIndex}
		require.NoError(t, w.WritePacket(ci, f.data))
	}
	require.NoError(t, w.Flush())
	return buf.Bytes()
}

// ngBuilder hand-crafts pcapng files in either byte order, damaged ones
// included. offs records where each block starts.
type ngBuilder struct {
	o    byteOrder
	buf  []byte
	offs []int64
}

// opt returns one option: code, length, value padded to 4 bytes.
func (b *ngBuilder) opt(code uint16, val []byte) []byte {
	o := b.o.AppendUint16(nil, code)
	o = b.o.AppendUint16(o, uint16(len(val)))
	o = append(o, val...)
	for len(o)%4 != 0 {
		o = append(o, 0)
	}
	return o
}

// block appends a well-formed block of type typ around body, padded.
func (b *ngBuilder) block(typ uint32, body []byte) *ngBuilder {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	n := uint32(12 + len(body))
	b.offs = append(b.offs, int64(len(b.buf)))
	b.buf = b.o.AppendUint32(b.buf, typ)
	b.buf = b.o.AppendUint32(b.buf, n)
	b.buf = append(b.buf, body...)
	b.buf = b.o.AppendUint32(b.buf, n)
	return b
}

// options joins options and ends them, or returns nil for none.
func (b *ngBuilder) options(opts [][]byte) []byte {
	if len(opts) == 0 {
		return nil
	}
	var o []byte
	for _, x := range opts {
		o = append(o, x...)
	}
	return append(o, 0, 0, 0, 0)
}

func (b *ngBuilder) shb(opts ...[]byte) *ngBuilder {
	body := b.o.AppendUint32(nil, 0x1a2b3c4d)
	body = b.o.AppendUint16(body, 1)
	body = b.o.AppendUint16(body, 0)
	body = b.o.AppendUint64(body, ^uint64(0))
	return b.block(0x0a0d0d0a, append(body, b.options(opts)...))
}

func (b *ngBuilder) idb(lt layers.LinkType, snaplen uint32, opts ...[]byte) *ngBuilder {
	body := b.o.AppendUint16(nil, uint16(lt))
	body = b.o.AppendUint16(body, 0)
	body = b.o.AppendUint32(body, snaplen)
	return b.block(1, append(body, b.options(opts)...))
}

// epbBody returns an EPB body with microsecond timestamps (the default
// resolution) and the given captured length field.
func (b *ngBuilder) epbBody(ifIndex uint32, ts time.Time, capLen uint32, origLen int, data []byte, opts ...[]byte) []byte {
	us := uint64(ts.UnixMicro())
	body := b.o.AppendUint32(nil, ifIndex)
	body = b.o.AppendUint32(body, uint32(us>>32))
	body = b.o.AppendUint32(body, uint32(us))
	body = b.o.AppendUint32(body, capLen)
	body = b.o.AppendUint32(body, uint32(origLen))
	body = append(body, data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	return append(body, b.options(opts)...)
}

func (b *ngBuilder) epb(f testFrame, opts ...[]byte) *ngBuilder {
	return b.block(6, b.epbBody(uint32(f.ifIndex), f.ts, uint32(len(f.data)), f.origLen, f.data, opts...))
}

func (b *ngBuilder) spb(origLen int, data []byte) *ngBuilder {
	return b.block(3, append(b.o.AppendUint32(nil, uint32(origLen)), data...))
}

// raw appends bytes as they are, starting a "block".
func (b *ngBuilder) raw(p []byte) *ngBuilder {
	b.offs = append(b.offs, int64(len(b.buf)))
	b.buf = append(b.buf, p...)
	return b
}

// u32s encodes words in the builder's byte order.
func (b *ngBuilder) u32s(words ...uint32) []byte {
	var p []byte
	for _, w := range words {
		p = b.o.AppendUint32(p, w)
	}
	return p
}

// ngFile returns a pcapng in byte order o with one interface of link type lt
// and the frames (µs timestamps).
func ngFile(o byteOrder, lt layers.LinkType, frames []testFrame) *ngBuilder {
	b := &ngBuilder{o: o}
	b.shb(b.opt(4, []byte("capture test"))).idb(lt, 0, b.opt(2, []byte("ib0")))
	for _, f := range frames {
		b.epb(f)
	}
	return b
}

// gz returns b gzip-compressed.
func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// readAll reads frames until an error and returns them with it (io.EOF at
// a clean end). Data are copied.
func readAll(t testing.TB, r *capture.Reader) ([]testFrame, error) {
	t.Helper()
	var got []testFrame
	for {
		ci, data, lt, err := r.Next()
		if err != nil {
			return got, err
		}
		require.Len(t, data, ci.CaptureLength)
		got = append(got, testFrame{
			ts:       ci.Timestamp,
			data:     bytes.Clone(data),
			origLen:  ci.Length,
			ifIndex:  ci.InterfaceIndex,
			linkType: lt,
		})
	}
}

// requireFrames checks got against the first len(got) frames of want.
func requireFrames(t testing.TB, want, got []testFrame) {
	t.Helper()
	require.LessOrEqual(t, len(got), len(want))
	for i := range got {
		require.Equal(t, want[i].data, got[i].data, "frame %d data", i)
		require.Equal(t, want[i].origLen, got[i].origLen, "frame %d original length", i)
		require.Equal(t, want[i].ifIndex, got[i].ifIndex, "frame %d interface", i)
		require.Equal(t, want[i].linkType, got[i].linkType, "frame %d link type", i)
		require.True(t, want[i].ts.Equal(got[i].ts), "frame %d timestamp %v, want %v", i, got[i].ts, want[i].ts)
	}
}

// mustReader opens b or fails.
func mustReader(t testing.TB, b []byte) *capture.Reader {
	t.Helper()
	r, err := capture.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	return r
}

// oneByteReader hands out one byte per Read, to exercise short reads.
type oneByteReader struct{ r io.Reader }

func (o oneByteReader) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}
