package nccl

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Layout is where NCCL's net_ib transport puts the fields of one FIFO
// entry (struct ncclIbSendFifo), the CTS a receiver writes into its
// sender's FIFO, in a range of NCCL versions. Offsets are in bytes from
// the entry's start, every field little-endian.
type Layout struct {
	Name     string // the first version of the range, as the report names it: "2.20"
	Versions string // the versions the layout is NCCL's: "2.20–2.24"
	// EntrySize is sizeof(struct ncclIbSendFifo); Stride the distance
	// between two FIFO slots (NCCL_NET_IB_MAX_RECVS entries).
	EntrySize, Stride int
	Addr              int // u64
	Size, SizeLen     int // i32 (SizeLen 4) or u64 (8)
	Rkeys, NRkeys     int // NRkeys u32 rkeys from Rkeys
	NReqs, Tag        int // i32 each
	Idx               int // u64
}

// The FIFO has 256 slots (MAX_REQUESTS); a receive posted with the
// connection's idx-th CTS takes slot (idx−1) mod 256, and a CTS carries at
// most 8 entries (NCCL_NET_IB_MAX_RECVS).
const (
	fifoSlots = 256
	maxRecvs  = 8
)

// layouts is the one table of FIFO entry layouts (NCCL's net_ib.cc at
// tags v2.19 to v2.30), oldest first.
var layouts = [...]Layout{
	{Name: "2.19", Versions: "≤ 2.19", EntrySize: 32, Stride: 256, Addr: 0, Size: 8, SizeLen: 4, Rkeys: 12, NRkeys: 1, NReqs: 16, Tag: 20, Idx: 24},
	{Name: "2.20", Versions: "2.20–2.24", EntrySize: 64, Stride: 512, Addr: 0, Size: 8, SizeLen: 4, Rkeys: 12, NRkeys: 2, NReqs: 20, Tag: 24, Idx: 32},
	{Name: "2.25", Versions: "2.25–2.29", EntrySize: 64, Stride: 512, Addr: 0, Size: 8, SizeLen: 8, Rkeys: 16, NRkeys: 4, NReqs: 32, Tag: 36, Idx: 40},
	{Name: "2.30", Versions: "≥ 2.30", EntrySize: 64, Stride: 512, Addr: 0, Size: 8, SizeLen: 8, Rkeys: 16, NRkeys: 8, NReqs: 48, Tag: 52, Idx: 56},
}

// Layouts returns the FIFO entry layouts, oldest NCCL first (a copy).
func Layouts() []Layout { return append([]Layout(nil), layouts[:]...) }

// Entry is one decoded FIFO entry: a receive the receiver posted.
type Entry struct {
	Addr   uint64 // the receive buffer the sender writes to
	Size   uint64 // the bytes it offers
	Rkeys  [maxRecvs]uint32
	NRkeys int // Rkeys in use: the layout's count
	NReqs  int // the receives posted together (the entries of the CTS)
	Tag    int // the rank of the sender
	Idx    uint64
}

// ErrNotCTS is wrapped by the errors of DecodeCTS: the bytes are not the
// FIFO entries of one CTS in the layout.
var ErrNotCTS = errors.New("not a CTS")

// cutEnd is how many bytes of the last entry must be captured to read it
// whole up to idx (the fields after idx are padding).
func (l *Layout) cutEnd() int { return l.Idx + 8 }

// The reasons DecodeCTS refuses bytes: fixed, so that a packet refused
// costs no allocation (the Collector tries every plain RDMA WRITE).
var (
	errCTSLength = fmt.Errorf("nccl: %w: the length is not 1 to %d whole entries", ErrNotCTS, maxRecvs)
	errCTSCut    = fmt.Errorf("nccl: %w: the capture cut an entry before its idx", ErrNotCTS)
	errCTSNReqs  = fmt.Errorf("nccl: %w: an entry's nreqs is not the number of entries", ErrNotCTS)
	errCTSTag    = fmt.Errorf("nccl: %w: a negative tag", ErrNotCTS)
	errCTSIdx    = fmt.Errorf("nccl: %w: an idx of 0, or entries of different idx", ErrNotCTS)
	errCTSSize   = fmt.Errorf("nccl: %w: a negative or impossible size", ErrNotCTS)
	errCTSBuffer = fmt.Errorf("nccl: %w: an entry without a buffer address or rkey", ErrNotCTS)
)

// DecodeCTS decodes the entries of one CTS write in layout l: length is
// the write's length (RETH DMA length), payload what the capture kept
// of it (at least through the last entry's idx). The entries are
// appended to dst. A CTS is nreqs entries (1 to 8) that each say nreqs,
// name the same idx (≥ 1), a tag ≥ 0, a size ≥ 0 and a buffer address
// and rkey; other bytes are refused with an error wrapping ErrNotCTS.
func (l *Layout) DecodeCTS(dst []Entry, length int, payload []byte) ([]Entry, error) {
	if length <= 0 || length%l.EntrySize != 0 || length/l.EntrySize > maxRecvs {
		return dst, errCTSLength
	}
	n := length / l.EntrySize
	if need := (n-1)*l.EntrySize + l.cutEnd(); len(payload) < need {
		return dst, errCTSCut
	}
	le := binary.LittleEndian
	start := len(dst)
	for i := range n {
		b := payload[i*l.EntrySize:]
		// nreqs first: most bytes that are no CTS fail there, before the
		// entry is read.
		if int(int32(le.Uint32(b[l.NReqs:]))) != n {
			return dst[:start], errCTSNReqs
		}
		e := Entry{
			Addr:   le.Uint64(b[l.Addr:]),
			NRkeys: l.NRkeys,
			NReqs:  int(int32(le.Uint32(b[l.NReqs:]))),
			Tag:    int(int32(le.Uint32(b[l.Tag:]))),
			Idx:    le.Uint64(b[l.Idx:]),
		}
		if l.SizeLen == 4 {
			size := int32(le.Uint32(b[l.Size:]))
			if size < 0 {
				return dst[:start], errCTSSize
			}
			e.Size = uint64(size)
		} else {
			e.Size = le.Uint64(b[l.Size:])
		}
		for k := range l.NRkeys {
			e.Rkeys[k] = le.Uint32(b[l.Rkeys+4*k:])
		}
		switch {
		case e.Tag < 0:
			return dst[:start], errCTSTag
		case e.Idx == 0 || i > 0 && e.Idx != dst[start].Idx:
			return dst[:start], errCTSIdx
		case e.Size > 1<<48:
			return dst[:start], errCTSSize
		case e.Addr == 0 || e.Rkeys[0] == 0:
			return dst[:start], errCTSBuffer
		}
		dst = append(dst, e)
	}
	return dst, nil
}

// Slot is the FIFO slot a CTS of idx is written to.
func Slot(idx uint64) uint64 { return (idx - 1) % fifoSlots }

// FIFOAddr is the address of the FIFO a CTS of idx written to va is in
// (va less its slot's offset), and false when va is below that offset.
func (l *Layout) FIFOAddr(va, idx uint64) (uint64, bool) {
	off := Slot(idx) * uint64(l.Stride)
	return va - off, va >= off
}
