package capture

import (
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
)

// ReadChunks makes the Reader of a classic pcap file (gzip-compressed or
// not) read its records into buffers that get returns, each at least
// ChunkMin bytes, and reports whether it does (false, and nothing
// changed, for pcapng, or once Next has been called). Next then fills one
// buffer at a time with large sequential reads and returns frames that
// are slices of it, which stay valid as long as the caller leaves the
// buffer alone, not only until the next call: a caller can hand them to
// other goroutines without copying them. Next calls get when the next
// record does not fit in what is left of the buffer in use; it copies
// the start of that record into the new buffer before it returns, so the
// caller may reuse the buffer that was in use only after that Next
// returns. The frames, offsets and errors are those the Reader gives
// without chunks, byte for byte.
func (r *Reader) ReadChunks(get func() []byte) bool {
	if r.ng != nil || r.getChunk != nil || r.started {
		return false
	}
	r.getChunk = get
	return true
}

// ChunkPos returns, after Next has returned a frame read into a chunk,
// where the frame ends in it: the frame is chunk[ChunkPos()-len(data):
// ChunkPos()], chunk being the buffer get returned last.
func (r *Reader) ChunkPos() int { return r.cpos }

// ChunkMin is the size of the smallest buffer ReadChunks accepts: a
// record header and the largest captured length the file allows.
func (r *Reader) ChunkMin() int { return pcapRecordHeaderLen + int(r.maxCap) }

// newChunk gets a buffer and starts it with rest (the unread part of the
// buffer in use).
func (r *Reader) newChunk(rest []byte) []byte {
	b := r.getChunk()
	if len(b) < r.ChunkMin() {
		panic(fmt.Sprintf("capture: chunk of %d bytes, want at least %d", len(b), r.ChunkMin()))
	}
	r.cpos = 0
	return b[:copy(b, rest)]
}

// fill makes sure the chunk holds need bytes from cpos on, as far as the
// stream has them: it moves them to a new chunk and reads the stream
// (what its buffer holds first, then the stream itself straight into the
// chunk) until the chunk is full or the stream ends.
func (r *Reader) fill(need int) []byte {
	rest := r.chunk[r.cpos:]
	if len(rest) >= need || r.ended {
		return rest
	}
	r.chunk = r.newChunk(rest)
	b := r.chunk[:cap(r.chunk)]
	n, empty := len(r.chunk), 0
	for n < len(b) && empty < 100 {
		// An error stays in r.cr, for the messages. Once the buffer is
		// drained, straight from the stream into the chunk: through the
		// buffer (larger than a chunk, so bufio copies) every byte was
		// copied twice, the second copy an eighth of -j 2's time on 4 KB
		// frames.
		var m int
		var err error
		if r.in.Buffered() == 0 {
			m, err = r.cr.Read(b[n:])
		} else {
			m, err = r.in.Read(b[n:])
		}
		n += m
		if err != nil {
			r.ended = true
			break
		}
		if m == 0 {
			empty++ // as bufio gives up on a reader that returns nothing
		} else {
			empty = 0
		}
	}
	r.chunk = b[:n]
	return r.chunk
}

// nextChunk reads one classic pcap record into the chunks, with the
// checks and messages of nextPcap.
func (r *Reader) nextChunk() (ci gopacket.CaptureInfo, data []byte, err error) {
	start := r.Offset()
	rest := r.fill(pcapRecordHeaderLen)
	if len(rest) < pcapRecordHeaderLen {
		if len(rest) == 0 {
			if r.cr.cleanEOF() {
				return ci, nil, io.EOF
			}
			return ci, nil, r.streamError(start, "")
		}
		return ci, nil, r.short(start, "record", "record header", len(rest), pcapRecordHeaderLen)
	}
	caplen := r.u32(rest[8:12])
	if caplen > r.maxCap {
		return ci, nil, r.capError(start, caplen)
	}
	n := pcapRecordHeaderLen + int(caplen)
	rest = r.fill(n)
	if len(rest) < n {
		return ci, nil, r.short(start, "record", "packet data", len(rest)-pcapRecordHeaderLen, int(caplen))
	}
	r.cpos += n
	return r.recordInfo(rest), rest[pcapRecordHeaderLen:n:n], nil
}
