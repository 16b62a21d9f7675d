package analyze

import (
	"encoding/binary"
	"time"
)

// cmLog is a shard's CM messages in frame order, for the flood replay
// (replayFlood), in a few bytes each: a flood of a million REQs is a
// million messages. Each message is the uvarint of its frame's distance
// from the message before, shifted left by two with its flags (grew: a
// REQ with a new CommID; odd: its time is in odd), then, unless odd, the
// varint of its time's distance in ns from the message before's. The
// grew flag is in the first byte of a message, where noteConnGrew can
// still set it once the message is written.
type cmLog struct {
	buf   []byte
	n     int         // messages
	last  int         // where the newest message starts in buf
	odd   []time.Time // times that are zero, not UTC, or past UnixNano
	frame uint64      // the frame and time (ns) of the newest message
	ns    int64
}

// cmCounts counts CM messages and the REQs with a new CommID among them.
type cmCounts struct{ msgs, grew uint64 }

// cmEvent is a CM message: the flood check counts them against the
// connections (grew: a REQ with a new CommID, tracked or refused).
type cmEvent struct {
	frame uint64
	t     time.Time
	grew  bool
}

const (
	cmGrew = 1 << iota
	cmOdd
	cmFlagBits = iota
)

// add appends a message.
func (l *cmLog) add(frame uint64, t time.Time) {
	l.last = len(l.buf)
	l.encode(frame, t)
	l.n++
}

// markGrew marks the newest message a REQ with a new CommID: the flag is
// the low bit of the uvarint's first byte.
func (l *cmLog) markGrew() {
	if l.n > 0 {
		l.buf[l.last] |= cmGrew
	}
}

// encode appends a message (not yet marked grew) to buf.
func (l *cmLog) encode(frame uint64, t time.Time) {
	v := (frame - l.frame) << cmFlagBits
	plain := plainNano(t)
	if !plain {
		v |= cmOdd
	}
	l.buf = binary.AppendUvarint(l.buf, v)
	if plain {
		ns := t.UnixNano()
		l.buf = binary.AppendVarint(l.buf, ns-l.ns)
		l.ns = ns
	} else {
		l.odd = append(l.odd, t)
	}
	l.frame = frame
}

// cmIter reads a cmLog's messages in order.
type cmIter struct {
	l     *cmLog
	off   int
	odd   int
	left  int // messages not yet read
	frame uint64
	ns    int64
}

// iter returns an iterator over l's messages.
func (l *cmLog) iter() cmIter { return cmIter{l: l, left: l.n} }

// next returns the next message, false after the last.
func (it *cmIter) next() (cmEvent, bool) {
	if it.left == 0 {
		return cmEvent{}, false
	}
	it.left--
	v, n := binary.Uvarint(it.l.buf[it.off:])
	it.off += n
	it.frame += v >> cmFlagBits
	e := cmEvent{frame: it.frame, grew: v&cmGrew != 0}
	if v&cmOdd != 0 {
		e.t = it.l.odd[it.odd]
		it.odd++
		return e, true
	}
	d, n := binary.Varint(it.l.buf[it.off:])
	it.off += n
	it.ns += d
	e.t = time.Unix(0, it.ns).UTC()
	return e, true
}
