package conn

import (
	"container/heap"
	"encoding/binary"
	"time"
)

const (
	// MessagesPerConnection is the most CM messages one connection
	// explains: REQ, MRA, REP, RTU, DREQ and DREP, each sent up to 16
	// times (Linux's max_cm_retries is 15), rounded up.
	MessagesPerConnection = 100
	// FloodSlack is how many CM messages a capture may hold beyond
	// MessagesPerConnection × connections before they are a flood
	// (messages whose REQ was before the capture).
	FloodSlack = 1024
)

// Flooded reports whether messages CM messages outnumber what conns
// connections (tracked and refused) explain.
func Flooded(messages, conns uint64) bool {
	return messages > MessagesPerConnection*conns+FloodSlack
}

// Counts counts CM messages and the REQs with a new CommID among them.
type Counts struct{ Msgs, Grew uint64 }

// Event is a CM message: the flood check counts them against the
// connections (Grew: a REQ with a new CommID, tracked or refused).
type Event struct {
	Frame uint64
	Time  time.Time
	Grew  bool
}

// Log is a part's CM messages in frame order, for FirstFlood, in a few
// bytes each. Each message is the uvarint of its frame's distance from
// the message before, shifted left by two with its flags (grew: a REQ
// with a new CommID; odd: its time is in odd), then, unless odd, the
// varint of its time's distance in ns from the message before's. The
// grew flag is in the first byte of a message, where MarkGrew can still
// set it once the message is written.
type Log struct {
	buf   []byte
	n     int         // messages
	last  int         // where the newest message starts in buf
	odd   []time.Time // times their UnixNano does not give back exactly
	frame uint64      // the frame and time (ns) of the newest message
	ns    int64
}

const (
	flagGrew = 1 << iota
	flagOdd
	flagBits = iota
)

// Len is the number of messages in l.
func (l *Log) Len() int { return l.n }

// Add appends a message.
func (l *Log) Add(frame uint64, t time.Time) {
	l.last = len(l.buf)
	l.encode(frame, t)
	l.n++
}

// MarkGrew marks the newest message a REQ with a new CommID: the flag is
// the low bit of the uvarint's first byte.
func (l *Log) MarkGrew() {
	if l.n > 0 {
		l.buf[l.last] |= flagGrew
	}
}

// encode appends a message (not yet marked grew) to buf. A time is kept
// as its UnixNano when that gives it back exactly (in UTC, within the
// range of UnixNano), else aside in odd.
func (l *Log) encode(frame uint64, t time.Time) {
	v := (frame - l.frame) << flagBits
	ns := t.UnixNano()
	plain := time.Unix(0, ns).UTC() == t
	if !plain {
		v |= flagOdd
	}
	l.buf = binary.AppendUvarint(l.buf, v)
	if plain {
		l.buf = binary.AppendVarint(l.buf, ns-l.ns)
		l.ns = ns
	} else {
		l.odd = append(l.odd, t)
	}
	l.frame = frame
}

// Iter reads a Log's messages in order.
type Iter struct {
	l     *Log
	off   int
	odd   int
	left  int // messages not yet read
	frame uint64
	ns    int64
}

// Iter returns an iterator over l's messages.
func (l *Log) Iter() Iter { return Iter{l: l, left: l.n} }

// Next returns the next message, false after the last.
func (it *Iter) Next() (Event, bool) {
	if it.left == 0 {
		return Event{}, false
	}
	it.left--
	v, n := binary.Uvarint(it.l.buf[it.off:])
	it.off += n
	it.frame += v >> flagBits
	e := Event{Frame: it.frame, Grew: v&flagGrew != 0}
	if v&flagOdd != 0 {
		e.Time = it.l.odd[it.odd]
		it.odd++
		return e, true
	}
	d, n := binary.Varint(it.l.buf[it.off:])
	it.off += n
	it.ns += d
	e.Time = time.Unix(0, it.ns).UTC()
	return e, true
}

// FirstFlood merges the parts' logs in frame order, after the messages
// and connections before them (from), and returns the message at which
// the messages first outnumber what the connections explain (Flooded);
// false when they never do. Each log is in frame order: merged as they
// come through a heap of the parts' next messages, with no list of them
// all.
func FirstFlood(from Counts, logs []*Log) (Event, bool) {
	messages, conns := from.Msgs, from.Grew
	var next heads
	for _, l := range logs {
		it := l.Iter()
		if e, ok := it.Next(); ok {
			next = append(next, head{it: it, e: e})
		}
	}
	heap.Init(&next)
	for len(next) > 0 {
		h := &next[0]
		e := h.e
		messages++
		if Flooded(messages, conns) {
			return e, true
		}
		if e.Grew {
			conns++
		}
		if e, ok := h.it.Next(); ok {
			h.e = e
			heap.Fix(&next, 0)
		} else {
			heap.Pop(&next)
		}
	}
	return Event{}, false
}

// head is a part's next CM message in FirstFlood, and the iterator of
// its messages.
type head struct {
	it Iter
	e  Event
}

// heads is a min-heap of head by frame (container/heap).
type heads []head

func (h heads) Len() int           { return len(h) }
func (h heads) Less(i, j int) bool { return h[i].e.Frame < h[j].e.Frame }
func (h heads) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *heads) Push(x any)        { *h = append(*h, x.(head)) }
func (h *heads) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
