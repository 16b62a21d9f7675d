package capture

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/roce-dissect/roce-dissect/internal/filename"
)

// MaxCaptureLength is the largest captured length the Reader accepts for one
// frame, whatever the file's snap length says: libpcap's MAXIMUM_SNAPLEN
// (256 KiB). It bounds every buffer the Reader allocates for a frame.
const MaxCaptureLength = 262144

const (
	// bufSize is the size of the buffer over the (decompressed) stream. A
	// whole pcap record of MaxCaptureLength fits, so Next can hand out a
	// slice of it without copying.
	bufSize = MaxCaptureLength + 4096
	// gzipBufSize is the size of the buffer over compressed input.
	gzipBufSize = 64 << 10
	// pcapFileHeaderLen and pcapRecordHeaderLen are the classic pcap
	// header sizes.
	pcapFileHeaderLen   = 24
	pcapRecordHeaderLen = 16
)

// Magic numbers, as the first four bytes of the file read big-endian.
const (
	magicPcapBE     = 0xa1b2c3d4
	magicPcapLE     = 0xd4c3b2a1
	magicPcapNanoBE = 0xa1b23c4d
	magicPcapNanoLE = 0x4d3cb2a1
	magicPcapNG     = 0x0a0d0d0a
	magicGzip1      = 0x1f
	magicGzip2      = 0x8b
)

// Reader yields frames from a pcap, pcapng or ERF-in-pcap capture,
// optionally gzip-compressed. The format is sniffed from the first bytes, not
// from a file name. A Reader is not safe for concurrent use.
type Reader struct {
	format Format
	closer io.Closer       // the file Open opened, nil otherwise
	cr     *countingReader // the decompressed stream, counted
	in     *bufio.Reader   // buffer over cr
	err    error           // sticky: returned by every Next after the first error

	// classic pcap
	bigEndian byteOrder
	fracNanos int64 // nanoseconds per unit of the timestamp fraction
	snaplen   uint32
	maxCap    uint32 // largest captured length accepted
	linkType  layers.LinkType

	// classic pcap read into the caller's buffers (ReadChunks): the next
	// record is at chunk[cpos:]
	getChunk func() []byte
	chunk    []byte
	cpos     int
	started  bool // Next was called
	ended    bool // the stream has ended or failed

	// pcapng
	ng     *pcapgo.NgReader
	fr     *ngFramer     // checks each block before pcapgo sees it
	pbr    *bufio.Reader // buffer between fr and ng, used by ng as is
	ngLast time.Time     // the time of the last frame that had one
}

// Open opens the named capture file; "-" means standard input, which Close
// leaves open. Errors about the file's contents do not name the file: the
// caller adds the name. The buffer of a regular file is no larger than
// the file (the buffer grows should it grow): the pieces of a rotation
// are many small files. An error opening it names it quoted
// (filename.Text): a name may hold control characters.
func Open(name string) (*Reader, error) { return OpenSize(name, bufSize) }

// OpenSize is Open with the buffer of NewReaderSize: for a file read in
// part (its first frames), or one of many read at once.
func OpenSize(name string, size int) (*Reader, error) {
	if name == "-" {
		return NewReaderSize(os.Stdin, size)
	}
	f, err := os.Open(name)
	if err != nil {
		if pe, ok := err.(*fs.PathError); ok {
			err = &fs.PathError{Op: pe.Op, Path: filename.Text(pe.Path), Err: pe.Err}
		}
		return nil, fmt.Errorf("capture: %w", err)
	}
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() < int64(size) {
		size = int(st.Size()) + 1 // the read that finds its end fills no more
	}
	r, err := NewReaderSize(f, size)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// NewReader sniffs the format from the first bytes of r and reads the file
// header: pcap with microsecond (a1b2c3d4) or nanosecond (a1b23c4d)
// timestamps in either byte order, pcapng (0a0d0d0a), or any of them
// gzip-compressed (1f8b). Close does not close r.
func NewReader(r io.Reader) (*Reader, error) { return NewReaderSize(r, bufSize) }

// MinBufferSize is the smallest buffer NewReaderSize starts with.
const MinBufferSize = 4096

// NewReaderSize is NewReader with a buffer of size bytes at first (from
// MinBufferSize up to NewReader's, which holds a record of
// MaxCaptureLength), which grows as far as a classic pcap record needs:
// for many captures read at once (files merged by time), most of whose
// records are small, each holding a few kilobytes rather than a quarter
// of a megabyte.
func NewReaderSize(r io.Reader, size int) (*Reader, error) {
	if r == nil {
		return nil, errors.New("capture: nil reader")
	}
	rd := &Reader{}

	// Look at two bytes for gzip, then put them back in front.
	var head [2]byte
	n, err := io.ReadFull(r, head[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, newError(nil, 0, err, "capture: read error at byte offset 0: %v", err)
	}
	src := io.MultiReader(bytes.NewReader(head[:n]), r)
	size = min(max(size, MinBufferSize), bufSize)
	if n == 2 && head[0] == magicGzip1 && head[1] == magicGzip2 {
		in := bufio.NewReaderSize(src, min(size, gzipBufSize))
		gz, err := gzip.NewReader(in)
		if err != nil {
			return nil, gzipHeaderError(err)
		}
		src = newGzipStream(in, gz)
		rd.format.Gzip = true
	}
	rd.cr = &countingReader{r: src}
	rd.in = bufio.NewReaderSize(rd.cr, size)

	if err := rd.sniff(); err != nil {
		return nil, err
	}
	return rd, nil
}

// gzipHeaderError describes a failure of gzip.NewReader.
func gzipHeaderError(err error) error {
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return newError(ErrTruncated, 0, io.ErrUnexpectedEOF,
			"capture: truncated gzip header at byte offset 0: the file ends inside it")
	case errors.Is(err, gzip.ErrHeader):
		return newError(ErrCorrupt, 0, err, "capture: corrupt gzip header at byte offset 0: %v", err)
	}
	return newError(nil, 0, err, "capture: read error at byte offset 0: %v", err)
}

// sniff reads the magic number and sets the reader up for its format.
func (r *Reader) sniff() error {
	magic, _ := r.in.Peek(4)
	if len(magic) < 4 {
		if !r.cr.cleanEOF() {
			return r.streamError(0, "")
		}
		if len(magic) == 0 {
			if r.format.Gzip {
				return newError(ErrEmpty, 0, nil, "capture: empty file (the gzip stream holds no data)")
			}
			return newError(ErrEmpty, 0, nil, "capture: empty file")
		}
		unit := "bytes"
		if len(magic) == 1 {
			unit = "byte"
		}
		return newError(ErrNotCapture, 0, nil,
			"capture: not a pcap or pcapng file (only %d %s: % x)", len(magic), unit, magic)
	}
	switch m := binary.BigEndian.Uint32(magic); m {
	case magicPcapBE, magicPcapLE:
		return r.initPcap(FormatPcap, m == magicPcapBE)
	case magicPcapNanoBE, magicPcapNanoLE:
		return r.initPcap(FormatPcapNano, m == magicPcapNanoBE)
	case magicPcapNG:
		return r.initPcapNG()
	default:
		where, what := "", ""
		if r.format.Gzip {
			where = " inside the gzip stream"
		}
		if lead, _ := r.in.Peek(maxForeignLead); len(lead) > 0 {
			if what = foreignFormat(lead); what != "" {
				what = ": " + what
			}
		}
		return newError(ErrNotCapture, 0, nil, "capture: not a pcap or pcapng file (magic 0x%08x%s)%s", m, where, what)
	}
}

// initPcap checks and consumes the 24-byte pcap file header.
func (r *Reader) initPcap(c Container, bigEndian bool) error {
	r.format.Container = c
	r.format.BigEndian = bigEndian
	r.bigEndian = byteOrder(bigEndian)
	r.fracNanos = 1000
	if c == FormatPcapNano {
		r.fracNanos = 1
	}

	hdr, _ := r.in.Peek(pcapFileHeaderLen)
	if len(hdr) < pcapFileHeaderLen {
		return r.short(0, "file header", "file header", len(hdr), pcapFileHeaderLen)
	}
	// pcapgo accepts version 2.4 only, as libpcap writes it; say so with an
	// offset rather than pass on its bare message.
	if major, minor := r.u16(hdr[4:6]), r.u16(hdr[6:8]); major != 2 || minor != 4 {
		return newError(ErrCorrupt, 4, nil,
			"capture: corrupt file header at byte offset 4: unsupported pcap version %d.%d (want 2.4)", major, minor)
	}
	// pcapgo parses the header; r.in is a large *bufio.Reader, so pcapgo
	// reads through it rather than adding a buffer of its own.
	pr, err := pcapgo.NewReader(r.in)
	if err != nil {
		return newError(ErrCorrupt, 0, err, "capture: corrupt file header at byte offset 0: %v", lowerFirst(err))
	}
	r.snaplen = pr.Snaplen()
	r.linkType = pr.LinkType()
	r.maxCap = MaxCaptureLength
	if r.snaplen != 0 && r.snaplen < r.maxCap {
		r.maxCap = r.snaplen
	}
	return nil
}

// Format returns the format the file was found to be in.
func (r *Reader) Format() Format { return r.format }

// Offset returns the number of bytes of the (decompressed) stream consumed so
// far: after Next returns a frame, the offset of the first byte after it.
func (r *Reader) Offset() int64 {
	if r.getChunk != nil {
		return r.cr.n - int64(r.in.Buffered()) - int64(len(r.chunk)-r.cpos)
	}
	if r.fr != nil {
		return r.fr.served() - int64(r.pbr.Buffered())
	}
	return r.cr.n - int64(r.in.Buffered())
}

// Next returns the next frame. data aliases a buffer of the Reader and is
// valid until the next call; copy it to keep it. linkType is the frame's link
// type: the file's for pcap, the frame's interface's for pcapng, where one
// file may mix several. ci.InterfaceIndex is the pcapng interface (0 for
// pcap) and ci.AncillaryData is nil.
//
// Next returns io.EOF at the clean end of the capture, and otherwise an
// *Error wrapping ErrTruncated or ErrCorrupt (or an I/O error) once every
// frame before the damage has been returned. After an error, Next returns
// the same error again.
//
// Captured lengths above the snap length or MaxCaptureLength are corrupt. A
// captured length above the original length is passed on as it is (libpcap
// does the same): ci.CaptureLength > ci.Length is for the caller to judge.
func (r *Reader) Next() (ci gopacket.CaptureInfo, data []byte, linkType layers.LinkType, err error) {
	if r.err != nil {
		return ci, nil, 0, r.err
	}
	r.started = true
	switch {
	case r.getChunk != nil:
		ci, data, err = r.nextChunk()
		linkType = r.linkType
	case r.ng != nil:
		ci, data, linkType, err = r.nextPcapNG()
		// A simple packet block has no time: its frame takes the time of
		// the frame before it (in a section's order), so that it neither
		// dates from year 1 nor stretches the capture's time span; one
		// before any timed frame keeps the zero time.
		if ci.Timestamp.IsZero() {
			ci.Timestamp = r.ngLast
		} else {
			r.ngLast = ci.Timestamp
		}
		if err == nil && !ci.Timestamp.IsZero() && (ci.Timestamp.Before(minTimestamp) || ci.Timestamp.After(maxTimestamp)) {
			// pcapng timestamps are 64-bit counts of any unit: a crafted
			// one lands where nanoseconds since 1970 (time.Duration,
			// UnixNano) saturate, or past what RFC 3339 (and so the JSON
			// report) can write. A classic pcap's 32-bit seconds stay
			// within 1970 to 2106: its frames are not checked.
			end := r.Offset()
			err = newError(ErrCorrupt, end, nil,
				"capture: corrupt packet ending at byte offset %d: its timestamp %s is outside 1970 to 2262-04-11 (nanoseconds since 1970 in 64 bits)",
				end, timestampText(ci.Timestamp))
		}
	default:
		ci, data, linkType, err = r.nextPcap()
	}
	if err != nil {
		r.err = err
		return gopacket.CaptureInfo{}, nil, 0, err
	}
	return ci, data, linkType, nil
}

// minTimestamp and maxTimestamp bound the timestamps the Reader passes on
// (besides the zero time of a simple packet block before any timed frame): every
// one is a 64-bit count of nanoseconds since 1970, so that any two
// are a time.Duration apart without overflow.
var (
	minTimestamp = time.Unix(0, 0).UTC()
	maxTimestamp = time.Unix(0, math.MaxInt64).UTC()
)

// timestampText writes a timestamp of any year for a message.
func timestampText(t time.Time) string {
	if y := t.Year(); y < 0 || y > 9999 {
		return fmt.Sprintf("(year %d)", y)
	}
	return t.Format(time.RFC3339Nano)
}

// nextPcap reads one classic pcap record. The record header is checked
// here, not by pcapgo: pcapgo rejects a captured length above the original
// length (which libpcap reads), says nothing of offsets, and copies the data
// where a slice of the read buffer does.
func (r *Reader) nextPcap() (ci gopacket.CaptureInfo, data []byte, linkType layers.LinkType, err error) {
	start := r.Offset()
	hdr, _ := r.in.Peek(pcapRecordHeaderLen)
	if len(hdr) < pcapRecordHeaderLen {
		if len(hdr) == 0 {
			if r.cr.cleanEOF() {
				return ci, nil, 0, io.EOF
			}
			return ci, nil, 0, r.streamError(start, "")
		}
		return ci, nil, 0, r.short(start, "record", "record header", len(hdr), pcapRecordHeaderLen)
	}
	caplen := r.u32(hdr[8:12])
	if caplen > r.maxCap {
		return ci, nil, 0, r.capError(start, caplen)
	}
	n := pcapRecordHeaderLen + int(caplen)
	if n > r.in.Size() {
		r.grow(n)
	}
	rec, _ := r.in.Peek(n)
	if len(rec) < n {
		return ci, nil, 0, r.short(start, "record", "packet data", len(rec)-pcapRecordHeaderLen, int(caplen))
	}
	if _, err := r.in.Discard(n); err != nil { // cannot fail: n bytes are buffered
		return ci, nil, 0, newError(nil, start, err, "capture: read error at byte offset %d: %v", start, err)
	}
	return r.recordInfo(rec), rec[pcapRecordHeaderLen:n:n], r.linkType, nil
}

// grow makes the buffer hold n bytes at least (NewReaderSize), keeping
// what it holds: those bytes come first out of the new buffer, whose
// first fill (the Peek that needs n bytes) takes them all.
func (r *Reader) grow(n int) {
	size := r.in.Size()
	for size < n {
		size *= 2
	}
	rest, _ := r.in.Peek(r.in.Buffered())
	r.in = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(rest)), r.cr), min(size, bufSize))
}

// capError describes a record whose captured length caplen exceeds the
// snap length or MaxCaptureLength.
func (r *Reader) capError(start int64, caplen uint32) error {
	if r.maxCap == r.snaplen {
		return newError(ErrCorrupt, start, nil,
			"capture: corrupt record at byte offset %d: captured length %d exceeds the snap length %d",
			start, caplen, r.snaplen)
	}
	return newError(ErrCorrupt, start, nil,
		"capture: corrupt record at byte offset %d: captured length %d exceeds the %d-byte limit",
		start, caplen, MaxCaptureLength)
}

// recordInfo reads a pcap record header.
func (r *Reader) recordInfo(hdr []byte) gopacket.CaptureInfo {
	sec, frac := r.u32(hdr[0:4]), r.u32(hdr[4:8])
	return gopacket.CaptureInfo{
		Timestamp:     time.Unix(int64(sec), int64(frac)*r.fracNanos).UTC(),
		CaptureLength: int(r.u32(hdr[8:12])),
		Length:        int(r.u32(hdr[12:16])),
	}
}

// Close releases the reader and closes the file Open opened (not standard
// input, and not the io.Reader given to NewReader). Next returns an error
// after Close.
func (r *Reader) Close() error {
	if r.err == errClosed {
		return nil
	}
	r.err = errClosed
	if r.closer != nil {
		if err := r.closer.Close(); err != nil {
			return fmt.Errorf("capture: %w", err)
		}
	}
	return nil
}

func (r *Reader) u16(b []byte) uint16 { return r.bigEndian.u16(b) }
func (r *Reader) u32(b []byte) uint32 { return r.bigEndian.u32(b) }

// short describes a structure that the stream ended inside: what (a "record",
// "block", "file header") starts at start, and its part (the "record header",
// "packet data") has have of want bytes. When the stream itself failed (a
// gzip stream cut short, an I/O error) that failure is reported instead.
func (r *Reader) short(start int64, what, part string, have, want int) error {
	detail := fmt.Sprintf("%s has %d of %d bytes", part, have, want)
	if !r.cr.cleanEOF() {
		return r.streamError(start, fmt.Sprintf("%s at byte offset %d (%s)", what, start, detail))
	}
	return newError(ErrTruncated, start, io.ErrUnexpectedEOF,
		"capture: truncated %s at byte offset %d: %s", what, start, detail)
}

// streamError describes a failure of the decompressed stream itself. inside
// names the record or block it cut, or is empty when it came between two.
// The offset is that record's start, or else where the stream failed.
func (r *Reader) streamError(start int64, inside string) error {
	err := r.cr.err
	off := r.cr.n
	if inside != "" {
		off = start
	}
	where := ""
	if inside != "" {
		where = ", inside the " + inside
	}
	var corrupt flate.CorruptInputError
	switch {
	case r.format.Gzip && err == io.ErrUnexpectedEOF:
		if inside != "" {
			return newError(ErrTruncated, off, io.ErrUnexpectedEOF,
				"capture: truncated %s: the gzip stream is cut short after %d bytes of data", inside, r.cr.n)
		}
		return newError(ErrTruncated, off, io.ErrUnexpectedEOF,
			"capture: truncated gzip stream at byte offset %d: the compressed data is cut short", off)
	case errors.Is(err, errGzipTrailing):
		return newError(ErrCorrupt, off, err,
			"capture: corrupt gzip stream at byte offset %d of the data%s: %v", r.cr.n, where, err)
	case errors.Is(err, errGzipTrailing):
		return newError(ErrCorrupt, off, err,
			"capture: corrupt gzip stream at byte offset %d of the data%s: %v", r.cr.n, where, err)
	case errors.Is(err, gzip.ErrHeader):
		// A member after the first whose header is damaged.
		return newError(ErrCorrupt, off, err,
			"capture: corrupt gzip stream at byte offset %d of the data%s: what follows the compressed data is not gzip (%v)",
			r.cr.n, where, err)
	case errors.Is(err, gzip.ErrChecksum), errors.As(err, &corrupt):
		return newError(ErrCorrupt, off, err,
			"capture: corrupt gzip stream at byte offset %d of the data%s: %v", r.cr.n, where, err)
	}
	return newError(nil, off, err, "capture: read error at byte offset %d%s: %v", r.cr.n, where, err)
}

// countingReader counts the bytes read through it and remembers the first
// error, returning it again on every later call (a plain file gives io.EOF
// again anyway; this makes other readers behave the same).
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil {
		c.err = err
	}
	return n, err
}

// cleanEOF reports whether the stream has not failed: it ended with io.EOF,
// or has not ended yet.
func (c *countingReader) cleanEOF() bool {
	return c.err == nil || c.err == io.EOF
}

// lowerFirst returns err's message with its first letter in lower case
// (pcapgo's messages start with a capital).
func lowerFirst(err error) string {
	s := err.Error()
	if s != "" && s[0] >= 'A' && s[0] <= 'Z' {
		return string(s[0]+'a'-'A') + s[1:]
	}
	return s
}

// byteOrder is the byte order of a capture's headers: true for big-endian.
type byteOrder bool

func (o byteOrder) u16(b []byte) uint16 {
	if o {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (o byteOrder) u32(b []byte) uint32 {
	if o {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (o byteOrder) put16(b []byte, v uint16) {
	if o {
		binary.BigEndian.PutUint16(b, v)
	} else {
		binary.LittleEndian.PutUint16(b, v)
	}
}

func (o byteOrder) put32(b []byte, v uint32) {
	if o {
		binary.BigEndian.PutUint32(b, v)
	} else {
		binary.LittleEndian.PutUint32(b, v)
	}
}
