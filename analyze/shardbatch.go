package analyze

import (
	"math"
	"sync/atomic"
	"time"

	gplayers "github.com/gopacket/gopacket/layers"
)

// batchFrames and batchBytes bound a batch of frames sent to a shard.
const (
	batchFrames = 256
	batchBytes  = 1 << 18
)

// batchesPerShard is how many batches circulate between the reader and
// each of the n−1 shards it does not analyze itself: how far the reader
// may run ahead of the slowest. With few, shards sharing a core stall
// the reader at every turn of the scheduler; with many, the chunks they
// hold crowd the caches (docs/parallel.md). Each batch may hold a 256 KiB chunk (pcap) or
// batchBytes of copied frames (pcapng), so the batches of all shards are
// bounded by maxBatches (12 MB), never fewer than 4 a shard.
func batchesPerShard(n int) int {
	return min(16, max(4, maxBatches/max(n-1, 1)))
}

// maxBatches bounds the batches in flight of all shards together (while
// each shard may have 4).
const maxBatches = 48

// batch is frames for one shard: slices of a chunk the file was read
// into (ch, its buffer src), or their bytes copied into buf (src is buf)
// when the file is not read in chunks (pcapng).
type batch struct {
	frames []batchFrame
	ch     *chunk
	buf    []byte
	src    []byte
	times  []time.Time // timestamps not in UTC (none from capture.Reader)
}

// chunk is a buffer a pcap file is read into (capture.Reader.ReadChunks)
// that shards read frames from: it goes back to the pool when the reader
// has moved on to the next chunk and no batch of its frames is left.
type chunk struct {
	buf  []byte
	refs atomic.Int32 // the reader's while it fills the chunk, and a batch's
}

// chunkSize is the size of a chunk, 256 KiB (or capture.Reader.ChunkMin
// when larger): the reader parses it while it is in its core's cache.
const chunkSize = 1 << 18

// batchFrame is one frame of a batch: what the Analyzer reads of its
// gopacket.CaptureInfo (not the pcapng interface index), its bytes at
// src[off:off+caplen]. It holds no pointer (a time.Time holds one), so
// that batches are not scanned by the garbage collector nor written
// through its write barrier.
type batchFrame struct {
	n, key uint64
	ns     int64 // the timestamp: UnixNano, or an index in times
	off    int64
	length int
	caplen int32
	lt     gplayers.LinkType
	tk     timeKind
}

// timeKind says how batchFrame.ns holds the timestamp.
type timeKind uint8

const (
	timeUTC   timeKind = iota // time.Unix(0, ns).UTC()
	timeZero                  // time.Time{} (a pcapng simple packet block)
	timeIndex                 // times[ns]
)

// putTime stores t in f.
func (b *batch) putTime(f *batchFrame, t time.Time) {
	switch {
	case t.IsZero():
		f.tk = timeZero
	case plainNano(t):
		f.ns = t.UnixNano()
	default:
		f.tk, f.ns = timeIndex, int64(len(b.times))
		b.times = append(b.times, t)
	}
}

// plainNano reports whether t is kept exactly as its UnixNano: in UTC,
// and within the range UnixNano can hold.
func plainNano(t time.Time) bool {
	return t.Location() == time.UTC && t.Unix() > minUnixNanoSec && t.Unix() < maxUnixNanoSec
}

// minUnixNanoSec and maxUnixNanoSec bound the seconds of a time whose
// UnixNano does not overflow, with a second to spare.
const (
	minUnixNanoSec = math.MinInt64/1_000_000_000 + 1
	maxUnixNanoSec = math.MaxInt64/1_000_000_000 - 1
)

// time returns the timestamp f holds.
func (b *batch) time(f *batchFrame) time.Time {
	switch f.tk {
	case timeZero:
		return time.Time{}
	case timeIndex:
		return b.times[f.ns]
	}
	return time.Unix(0, f.ns).UTC()
}

// ahead appends to dst the data (in src) of the batch's frames from the
// i-th on, up to cap(dst), while they are of the i-th frame's link type:
// the frames Analyzer.Prefetch reads ahead for.
func (b *batch) ahead(src []byte, i int, dst [][]byte) [][]byte {
	lt := b.frames[i].lt
	for _, f := range b.frames[i:] {
		if len(dst) == cap(dst) || f.lt != lt {
			break
		}
		end := f.off + int64(f.caplen)
		dst = append(dst, src[f.off:end:end])
	}
	return dst
}

// chunkPool keeps the chunks that no batch needs for reuse.
type chunkPool struct{ free chan *chunk }

// newChunkPool returns a pool that keeps up to n chunks.
func newChunkPool(n int) *chunkPool { return &chunkPool{free: make(chan *chunk, n)} }

// get returns a chunk of size bytes, with the reader's reference.
func (p *chunkPool) get(size int) *chunk {
	var c *chunk
	select {
	case c = <-p.free:
		if len(c.buf) != size {
			c = nil
		}
	default:
	}
	if c == nil {
		c = &chunk{buf: make([]byte, size)}
	}
	c.refs.Store(1)
	return c
}

// release drops a reference to c, and keeps c for reuse with the last.
func (p *chunkPool) release(c *chunk) {
	if c.refs.Add(-1) == 0 {
		select {
		case p.free <- c:
		default:
		}
	}
}
