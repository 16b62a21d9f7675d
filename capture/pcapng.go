package capture

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// pcapng block types and limits.
const (
	ngSHB = 0x0a0d0d0a // section header block, the same in both byte orders
	ngIDB = 1          // interface description block
	ngPB  = 2          // packet block (obsolete)
	ngSPB = 3          // simple packet block
	ngNRB = 4          // name resolution block
	ngISB = 5          // interface statistics block
	ngEPB = 6          // enhanced packet block

	// ngSkipped is the type NRBs are handed to pcapgo as: a custom block
	// type, which pcapgo skips. pcapgo would keep every name of every NRB
	// in memory until the section ends.
	ngSkipped = 0x00000bad

	ngByteOrderMagic = 0x1a2b3c4d

	// maxBlockLength bounds the blocks read whole to be checked: section
	// and interface headers, statistics and packets. Other blocks are
	// passed through without being held in memory, whatever their length.
	maxBlockLength = 1 << 20
	// maxInterfaces bounds the interfaces of one section.
	maxInterfaces = 1 << 16
	// ngBufSize is the size of the buffer between the framer and pcapgo.
	ngBufSize = 64 << 10
)

// initPcapNG sets up pcapgo's NgReader behind a framer that checks every
// block, and reads the first section header.
func (r *Reader) initPcapNG() error {
	r.format.Container = FormatPcapNG
	if hdr, _ := r.in.Peek(12); len(hdr) == 12 {
		r.format.BigEndian = binary.BigEndian.Uint32(hdr[8:12]) == ngByteOrderMagic
	}
	r.fr = &ngFramer{r: r}
	// pbr is a *bufio.Reader of at least 4096 bytes, so pcapgo reads
	// through it as is and Offset can subtract what it holds.
	r.pbr = bufio.NewReaderSize(r.fr, ngBufSize)
	ng, err := pcapgo.NewNgReader(r.pbr, pcapgo.NgReaderOptions{WantMixedLinkType: true})
	if err != nil {
		return r.ngError(err)
	}
	r.ng = ng
	return nil
}

// nextPcapNG returns the next packet pcapgo finds.
func (r *Reader) nextPcapNG() (ci gopacket.CaptureInfo, data []byte, linkType layers.LinkType, err error) {
	data, ci, err = r.ng.ZeroCopyReadPacketData()
	if err != nil {
		return ci, nil, 0, r.ngError(err)
	}
	// With WantMixedLinkType pcapgo puts the interface's link type here.
	ok := false
	if len(ci.AncillaryData) > 0 {
		linkType, ok = ci.AncillaryData[0].(layers.LinkType)
	}
	if !ok {
		intf, err := r.ng.Interface(ci.InterfaceIndex)
		if err != nil {
			off := r.Offset()
			return ci, nil, 0, newError(ErrCorrupt, off, err,
				"capture: corrupt pcapng data before byte offset %d: %s", off, lowerFirst(err))
		}
		linkType = intf.LinkType
	}
	ci.AncillaryData = nil
	return ci, data, linkType, nil
}

// ngError turns an error from pcapgo into the framer's error when the
// framer stopped pcapgo, and otherwise into ErrCorrupt at the offset pcapgo
// reached.
func (r *Reader) ngError(err error) error {
	if fe := r.fr.err; fe != nil && r.pbr.Buffered() == 0 {
		if fe != io.EOF {
			return fe
		}
		if err == io.EOF {
			return io.EOF
		}
	}
	off := r.Offset()
	return newError(ErrCorrupt, off, err, "capture: corrupt pcapng data before byte offset %d: %s", off, lowerFirst(err))
}

// ngFramer passes the decompressed stream to pcapgo one checked block at a
// time. pcapgo trusts the lengths in the file: a block length below 12
// wraps around, a captured length or an option larger than its block reads
// into the next block, and the trailing length is never compared. The
// framer stops the stream with an *Error before such a block, so pcapgo
// never sees one, and every frame before it is still read.
//
// Section headers, interface descriptions, statistics and packet blocks
// (at most maxBlockLength bytes) are read whole and checked: both lengths,
// the version, interface ids, captured lengths against the block, the snap
// length and MaxCaptureLength, and every option's length. Other blocks are
// passed through in pieces, their trailing length checked at the end.
//
// The framer also edits three things pcapgo would spend memory on: a name
// resolution block is relabelled as a custom block, which pcapgo skips, an
// enhanced packet block's options (already checked) are cut off by an
// end-of-options, since pcapgo allocates for some of them on every packet,
// and the options pcapgo keeps for the section (of section headers,
// interface descriptions and statistics) are cut to maxKeptOption bytes.
type ngFramer struct {
	r   *Reader
	pos int64 // bytes taken from r.in

	hdr [12]byte // header of a passed-through block, then its trailer
	blk []byte   // the block read whole
	out []byte   // what is left to hand to pcapgo of hdr or blk

	typ        uint32 // the current block's type
	length     uint32 // and length
	start      int64  // and offset
	stream     int64  // body bytes of a passed-through block not yet read
	trailerDue bool   // the passed-through block's trailer is next

	bigEndian byteOrder
	ifaces    []uint32 // snap lengths of the section's interfaces
	err       error    // sticky; io.EOF at the clean end
}

// served returns the number of bytes handed to pcapgo's buffer.
func (f *ngFramer) served() int64 { return f.pos - int64(len(f.out)) }

// Read hands out the checked stream.
func (f *ngFramer) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if len(f.out) > 0 {
			n := copy(p, f.out)
			f.out = f.out[n:]
			return n, nil
		}
		if f.stream > 0 {
			if int64(len(p)) > f.stream {
				p = p[:f.stream]
			}
			n, err := f.r.in.Read(p)
			f.pos += int64(n)
			f.stream -= int64(n)
			if n > 0 {
				return n, nil
			}
			if err != nil {
				f.stream, f.trailerDue = 0, false
				f.err = f.r.short(f.start, "block", blockName(f.typ), int(f.pos-f.start), int(f.length))
				return 0, f.err
			}
			continue
		}
		if f.trailerDue {
			f.trailerDue = false
			t := f.hdr[:4]
			n, _ := io.ReadFull(f.r.in, t)
			f.pos += int64(n)
			if n < len(t) {
				f.err = f.r.short(f.start, "block", blockName(f.typ), int(f.pos-f.start), int(f.length))
				return 0, f.err
			}
			if got := f.u32(t); got != f.length {
				f.err = f.corrupt("%s length %d does not match its trailing length %d", blockName(f.typ), f.length, got)
				return 0, f.err
			}
			f.out = t
			continue
		}
		if f.err != nil {
			return 0, f.err
		}
		if err := f.nextBlock(); err != nil {
			f.err = err
			return 0, err
		}
	}
}

// nextBlock reads the next block's header and either the whole block,
// checked, or sets it up to be passed through.
func (f *ngFramer) nextBlock() error {
	in := f.r.in
	f.start = f.pos
	n, _ := io.ReadFull(in, f.hdr[:8])
	f.pos += int64(n)
	if n == 0 {
		if f.r.cr.cleanEOF() {
			return io.EOF
		}
		return f.r.streamError(f.start, "")
	}
	if n < 8 {
		return f.r.short(f.start, "block", "block header", n, 8)
	}
	hlen := 8
	if binary.BigEndian.Uint32(f.hdr[0:4]) == ngSHB {
		f.typ = ngSHB
		n, _ := io.ReadFull(in, f.hdr[8:12])
		f.pos += int64(n)
		if n < 4 {
			return f.r.short(f.start, "block", "section header block", 8+n, 12)
		}
		switch bom := binary.BigEndian.Uint32(f.hdr[8:12]); bom {
		case ngByteOrderMagic:
			f.bigEndian = true
		case 0x4d3c2b1a:
			f.bigEndian = false
		default:
			return f.corrupt("section header block has byte-order magic 0x%08x, want 0x%08x", bom, ngByteOrderMagic)
		}
		hlen = 12
	} else {
		f.typ = f.u32(f.hdr[0:4])
	}
	f.length = f.u32(f.hdr[4:8])
	name := blockName(f.typ)
	if min := minBlockLength(f.typ); f.length < min {
		return f.corrupt("%s length %d is below the %d-byte minimum", name, f.length, min)
	}
	if f.length%4 != 0 {
		return f.corrupt("%s length %d is not a multiple of 4", name, f.length)
	}

	switch f.typ {
	case ngSHB, ngIDB, ngISB, ngEPB, ngPB, ngSPB:
		if f.length > maxBlockLength {
			return f.corrupt("%s length %d exceeds the %d-byte limit", name, f.length, maxBlockLength)
		}
		size := int(f.length)
		if cap(f.blk) < size {
			f.blk = make([]byte, max(size, 2*cap(f.blk), 4096))
		}
		b := f.blk[:size]
		copy(b, f.hdr[:hlen])
		n, _ := io.ReadFull(in, b[hlen:])
		f.pos += int64(n)
		if hlen+n < size {
			return f.r.short(f.start, "block", name, hlen+n, size)
		}
		if got := f.u32(b[size-4:]); got != f.length {
			return f.corrupt("%s length %d does not match its trailing length %d", name, f.length, got)
		}
		if err := f.check(b); err != nil {
			return err
		}
		f.out = b
	default:
		if f.typ == ngNRB {
			f.put32(f.hdr[0:4], ngSkipped)
		}
		f.out = f.hdr[:hlen]
		f.stream = int64(f.length) - int64(hlen) - 4
		f.trailerDue = true
	}
	return nil
}

// check checks the contents of a block read whole, b, of type f.typ.
func (f *ngFramer) check(b []byte) error {
	switch f.typ {
	case ngSHB:
		if major, minor := f.u16(b[12:14]), f.u16(b[14:16]); major != 1 || minor != 0 {
			return f.corrupt("unsupported pcapng version %d.%d (want 1.0)", major, minor)
		}
		f.ifaces = f.ifaces[:0]
		return f.checkKeptOptions(b, 24)
	case ngIDB:
		if len(f.ifaces) >= maxInterfaces {
			return f.corrupt("more than %d interfaces in one section", maxInterfaces)
		}
		if err := f.checkKeptOptions(b, 16); err != nil {
			return err
		}
		f.ifaces = append(f.ifaces, f.u32(b[12:16]))
	case ngISB:
		if err := f.checkInterface(f.u32(b[8:12])); err != nil {
			return err
		}
		return f.checkKeptOptions(b, 20)
	case ngEPB, ngPB:
		id := f.u32(b[8:12])
		if f.typ == ngPB {
			id = uint32(f.u16(b[8:10]))
		}
		if err := f.checkInterface(id); err != nil {
			return err
		}
		caplen := f.u32(b[20:24])
		if err := f.checkCaptureLength(b, caplen, f.ifaces[id], 28); err != nil {
			return err
		}
		if f.typ == ngPB {
			return nil // pcapgo reads no options of a packet block
		}
		opts := 28 + pad4(int(caplen))
		if err := f.checkOptions(b, opts); err != nil {
			return err
		}
		if opts < len(b)-4 {
			f.put32(b[opts:opts+4], 0) // end of options: code 0, length 0
		}
	case ngSPB:
		if len(f.ifaces) == 0 {
			return f.corrupt("simple packet block before any interface description block")
		}
		// pcapgo takes the captured length as the original length cut to
		// the first interface's snap length; it must fit in the block.
		caplen := f.u32(b[8:12])
		if snap := f.ifaces[0]; snap != 0 && caplen > snap {
			caplen = snap
		}
		return f.checkCaptureLength(b, caplen, 0, 12)
	}
	return nil
}

// checkInterface checks that interface id is described in the section.
func (f *ngFramer) checkInterface(id uint32) error {
	if id >= uint32(len(f.ifaces)) {
		return f.corrupt("%s refers to interface %d, but the section describes %d", blockName(f.typ), id, len(f.ifaces))
	}
	return nil
}

// checkCaptureLength checks a packet's captured length against the limit,
// the interface's snap length (0: none) and the block, where the data start
// at byte off.
func (f *ngFramer) checkCaptureLength(b []byte, caplen, snaplen uint32, off int) error {
	switch {
	case caplen > MaxCaptureLength:
		return f.corrupt("captured length %d exceeds the %d-byte limit", caplen, MaxCaptureLength)
	case snaplen != 0 && caplen > snaplen:
		return f.corrupt("captured length %d exceeds the snap length %d", caplen, snaplen)
	case off+pad4(int(caplen))+4 > len(b):
		return f.corrupt("captured length %d does not fit in its %d-byte %s", caplen, len(b), blockName(f.typ))
	}
	return nil
}

// checkOptions checks that the options from b[off:] to the trailer each fit
// in the block, as pcapgo's option reader assumes.
func (f *ngFramer) checkOptions(b []byte, off int) error {
	end := len(b) - 4
	for p := off; p+4 <= end; {
		code, n := f.u16(b[p:p+2]), int(f.u16(b[p+2:p+4]))
		if code == 0 {
			if n != 0 {
				return f.corrupt("end-of-options at byte offset %d has length %d, want 0", f.start+int64(p), n)
			}
			return nil
		}
		next := p + 4 + pad4(n)
		if next > end {
			return f.corrupt("option %d at byte offset %d is %d bytes long, but the %s has %d bytes left",
				code, f.start+int64(p), n, blockName(f.typ), end-p-4)
		}
		p = next
	}
	return nil
}

// corrupt returns ErrCorrupt for the current block.
func (f *ngFramer) corrupt(format string, args ...any) error {
	return newError(ErrCorrupt, f.start, nil, "capture: corrupt block at byte offset %d: %s",
		f.start, fmt.Sprintf(format, args...))
}

func (f *ngFramer) u16(b []byte) uint16      { return f.bigEndian.u16(b) }
func (f *ngFramer) u32(b []byte) uint32      { return f.bigEndian.u32(b) }
func (f *ngFramer) put32(b []byte, v uint32) { f.bigEndian.put32(b, v) }

// pad4 rounds n up to a multiple of 4.
func pad4(n int) int { return (n + 3) &^ 3 }

// minBlockLength returns the smallest valid length of a block of type typ.
func minBlockLength(typ uint32) uint32 {
	switch typ {
	case ngSHB:
		return 28
	case ngEPB, ngPB:
		return 32
	case ngISB:
		return 24
	case ngIDB:
		return 20
	case ngSPB:
		return 16
	}
	return 12
}

// blockName names a block type for messages.
func blockName(typ uint32) string {
	switch typ {
	case ngSHB:
		return "section header block"
	case ngIDB:
		return "interface description block"
	case ngPB:
		return "packet block"
	case ngSPB:
		return "simple packet block"
	case ngNRB:
		return "name resolution block"
	case ngISB:
		return "interface statistics block"
	case ngEPB:
		return "enhanced packet block"
	}
	return fmt.Sprintf("block of type 0x%08x", typ)
}
