package capture

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrNotSplittable is returned by IndexFile for a capture that cannot be
// read in ranges: gzip-compressed, not pcap or pcapng, or damaged (a
// record or block whose lengths do not add up). The caller reads it
// sequentially, which reports the damage as it always does.
var ErrNotSplittable = errors.New("capture: not splittable")

const (
	// indexBufSize is the read size of the index pass: large sequential
	// reads, so that finding the record boundaries costs a fraction of
	// decoding the frames.
	indexBufSize = 1 << 20
	// maxCheckpoints bounds the checkpoints an Index keeps: past it, every
	// other one is dropped and the stride doubles.
	maxCheckpoints = 1 << 12
)

// Checkpoint is a record boundary of a capture file where a Range can
// start: Frame frames come before it, the first of them at byte Offset.
type Checkpoint struct {
	// Frame is the number of frames before the checkpoint.
	Frame uint64
	// Offset is the byte offset of the record (pcap) or block (pcapng)
	// that starts there.
	Offset int64
	// preamble indexes Index.preambles: the headers in effect there.
	preamble int
}

// Index holds record boundaries of a seekable capture file, every Stride
// frames, and the headers (pcap file header; pcapng section header and
// interface descriptions) a reader starting at each of them needs.
type Index struct {
	// Name is the file indexed.
	Name string
	// Frames is the number of frames in the file.
	Frames uint64
	// Size is the file's length in bytes.
	Size int64
	// Checkpoints are in file order, the first at the first frame.
	Checkpoints []Checkpoint
	// Stride is the number of frames between two checkpoints.
	Stride uint64

	preambles [][]byte
}

// Range is a run of consecutive frames of a capture file that a Reader
// can read on its own (OpenRange).
type Range struct {
	// FirstFrame is the file's number of the range's first frame
	// (counting from 1).
	FirstFrame uint64
	// Frames is the number of frames in the range.
	Frames uint64
	// Start and End are the byte offsets of the range in the file.
	Start, End int64

	name     string
	preamble []byte
}

// IndexFile walks the record headers of a pcap or pcapng file, reading it
// from start to end in large sequential reads, and returns its record
// boundaries. It returns ErrNotSplittable (wrapped) for a gzip file, for
// anything but pcap or pcapng, and for a file whose records or blocks do
// not add up: those are read sequentially.
func IndexFile(name string) (*Index, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: not a regular file", ErrNotSplittable)
	}
	ix := &Index{Name: name, Size: st.Size(), Stride: 1}
	in := bufio.NewReaderSize(f, indexBufSize)
	magic, _ := in.Peek(4)
	if len(magic) < 4 {
		return nil, fmt.Errorf("%w: too short", ErrNotSplittable)
	}
	switch binary.BigEndian.Uint32(magic) {
	case magicPcapBE, magicPcapLE, magicPcapNanoBE, magicPcapNanoLE:
		err = ix.walkPcap(in)
	case magicPcapNG:
		err = ix.walkPcapNG(in)
	default:
		return nil, fmt.Errorf("%w: not plain pcap or pcapng", ErrNotSplittable)
	}
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// notSplittable describes damage the index pass found at off.
func notSplittable(off int64, format string, args ...any) error {
	return fmt.Errorf("%w: at byte offset %d: %s", ErrNotSplittable, off, fmt.Sprintf(format, args...))
}

// mark records a record boundary: Frames frames come before off.
func (ix *Index) mark(off int64) {
	if ix.Frames%ix.Stride != 0 {
		return
	}
	ix.Checkpoints = append(ix.Checkpoints, Checkpoint{Frame: ix.Frames, Offset: off, preamble: len(ix.preambles) - 1})
	if len(ix.Checkpoints) < maxCheckpoints {
		return
	}
	kept := ix.Checkpoints[:0]
	for i, c := range ix.Checkpoints {
		if i%2 == 0 {
			kept = append(kept, c)
		}
	}
	ix.Checkpoints = kept
	ix.Stride *= 2
}

// walkPcap indexes a classic pcap file.
func (ix *Index) walkPcap(in *bufio.Reader) error {
	hdr, _ := in.Peek(pcapFileHeaderLen)
	if len(hdr) < pcapFileHeaderLen {
		return notSplittable(0, "short file header")
	}
	order := byteOrder(binary.BigEndian.Uint32(hdr) == magicPcapBE || binary.BigEndian.Uint32(hdr) == magicPcapNanoBE)
	maxCap := uint32(MaxCaptureLength)
	if snap := order.u32(hdr[16:20]); snap != 0 && snap < maxCap {
		maxCap = snap
	}
	ix.preambles = append(ix.preambles, bytes.Clone(hdr))
	if _, err := in.Discard(pcapFileHeaderLen); err != nil {
		return notSplittable(0, "%v", err)
	}
	off := int64(pcapFileHeaderLen)
	for {
		rec, _ := in.Peek(pcapRecordHeaderLen)
		if len(rec) == 0 {
			break
		}
		if len(rec) < pcapRecordHeaderLen {
			return notSplittable(off, "short record header")
		}
		caplen := order.u32(rec[8:12])
		if caplen > maxCap {
			return notSplittable(off, "captured length %d", caplen)
		}
		ix.mark(off)
		n := pcapRecordHeaderLen + int(caplen)
		if d, _ := in.Discard(n); d < n {
			return notSplittable(off, "short record")
		}
		off += int64(n)
		ix.Frames++
	}
	if off != ix.Size {
		return notSplittable(off, "the file is %d bytes", ix.Size)
	}
	return nil
}

// walkPcapNG indexes a pcapng file block by block. The headers a range
// needs are the current section's header block and the interface
// description blocks seen in the section so far.
func (ix *Index) walkPcapNG(in *bufio.Reader) error {
	var off int64
	var order byteOrder
	var pre []byte
	for {
		head, _ := in.Peek(12)
		if len(head) == 0 {
			break
		}
		if len(head) < 12 {
			return notSplittable(off, "short block header")
		}
		typ := binary.BigEndian.Uint32(head[0:4])
		if typ == ngSHB {
			switch binary.BigEndian.Uint32(head[8:12]) {
			case ngByteOrderMagic:
				order = true
			case 0x4d3c2b1a:
				order = false
			default:
				return notSplittable(off, "bad byte-order magic")
			}
		} else {
			typ = order.u32(head[0:4])
		}
		length := order.u32(head[4:8])
		if length < 12 || length%4 != 0 || off+int64(length) > ix.Size {
			return notSplittable(off, "block length %d", length)
		}
		if (typ == ngSHB || typ == ngIDB) && length > maxBlockLength {
			return notSplittable(off, "header block of %d bytes", length)
		}
		switch typ {
		case ngSHB, ngIDB:
			blk, _ := in.Peek(int(length))
			if len(blk) < int(length) {
				return notSplittable(off, "short block")
			}
			if typ == ngSHB {
				pre = bytes.Clone(blk)
			} else {
				if pre == nil {
					return notSplittable(off, "interface before any section")
				}
				pre = append(bytes.Clone(pre), blk...)
			}
			ix.preambles = append(ix.preambles, pre)
		case ngEPB, ngSPB, ngPB:
			if pre == nil {
				return notSplittable(off, "packet before any section")
			}
			ix.mark(off)
			ix.Frames++
		}
		if d, _ := in.Discard(int(length)); d < int(length) {
			return notSplittable(off, "short block")
		}
		off += int64(length)
	}
	if off != ix.Size {
		return notSplittable(off, "the file is %d bytes", ix.Size)
	}
	return nil
}

// Split cuts the file into at most n ranges of about equal bytes, at
// checkpoints for which safe returns true (nil: any). The ranges cover
// every frame, in order; fewer than n are returned when the file has
// fewer safe checkpoints.
func (ix *Index) Split(n int, safe func(Checkpoint) bool) []Range {
	if n < 1 {
		n = 1
	}
	var cuts []int // indices into Checkpoints where a range starts
	if len(ix.Checkpoints) > 0 {
		cuts = append(cuts, 0)
		first := ix.Checkpoints[0].Offset
		for k := 1; k < n; k++ {
			target := first + (ix.Size-first)*int64(k)/int64(n)
			i := cuts[len(cuts)-1] + 1
			for i < len(ix.Checkpoints) && (ix.Checkpoints[i].Offset < target || safe != nil && !safe(ix.Checkpoints[i])) {
				i++
			}
			if i >= len(ix.Checkpoints) {
				break
			}
			cuts = append(cuts, i)
		}
	}
	out := make([]Range, 0, len(cuts))
	for k, i := range cuts {
		c := ix.Checkpoints[i]
		r := Range{FirstFrame: c.Frame + 1, Start: c.Offset, End: ix.Size, Frames: ix.Frames - c.Frame, name: ix.Name, preamble: ix.preambles[c.preamble]}
		if k+1 < len(cuts) {
			next := ix.Checkpoints[cuts[k+1]]
			r.End, r.Frames = next.Offset, next.Frame-c.Frame
		}
		out = append(out, r)
	}
	return out
}

// OpenRange opens a Reader over one range of the file: the headers in
// effect at its start, then its records. Byte offsets in its errors count
// from the start of those headers, not of the file; a caller that needs
// the file's offsets reads the file sequentially instead.
func OpenRange(rg Range) (*Reader, error) {
	f, err := os.Open(rg.name)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	src := io.MultiReader(bytes.NewReader(rg.preamble), io.NewSectionReader(f, rg.Start, rg.End-rg.Start))
	r, err := NewReader(src)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.closer = f
	return r, nil
}

// Len is the number of bytes a Reader of the range reads: the headers in
// effect at its start and its records.
func (rg Range) Len() int64 { return int64(len(rg.preamble)) + rg.End - rg.Start }
