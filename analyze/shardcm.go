package analyze

import (
	"container/heap"
	"time"
)

// The CM across shards: connections are renumbered in the combined
// report (connRemap), and the CM flood check is replayed over all shards
// (replayFlood). A CommID is its host pair's (commKey), so it ties no
// two shards.

// connRemap maps a shard's connection IDs (1…) to the combined report's;
// 0 for none (beyond the connection cap).
type connRemap []int

// set maps the shard's connection id to the combined report's to.
func (m *connRemap) set(id, to int) {
	if id <= 0 {
		return
	}
	if id >= len(*m) {
		*m = append(*m, make([]int, id+1-len(*m))...)
	}
	(*m)[id] = to
}

// id returns the combined report's ID of the shard's connection id, 0
// for none.
func (m connRemap) id(id int) int {
	if id <= 0 || id >= len(m) {
		return 0
	}
	return m[id]
}

// renumberFinding rewrites the connection ID a finding names (a shard's)
// to the combined report's.
func renumberFinding(fd Finding, remap connRemap) Finding {
	if fd.Connection == 0 {
		return fd
	}
	return fd.withConnection(remap.id(fd.Connection))
}

// replayFlood replays the CM messages of all shards in frame order and
// returns the frame (and time) at which they first outnumber what the
// connections explain, as cmFlood decides (0: never).
func replayFlood(parts []*Report) (uint64, time.Time) {
	// Before the logs begin (shardShared.logFrom) one shard had every
	// frame: its flood then is the capture's, and its counts are where
	// the replay starts.
	var messages, conns uint64
	for _, p := range parts {
		f := p.shard.feed
		from := f.shared.from()
		if st := p.shard.cmStats; st.floodAt != 0 && (from == 0 || st.floodAt < from) {
			return st.floodAt, st.floodT
		}
		messages, conns = messages+f.pre.msgs, conns+f.pre.grew
	}
	// Each shard's messages are in frame order: merged as they come
	// through a heap of the shards' next messages, with no list of them
	// all.
	var next cmHeads
	for _, p := range parts {
		it := p.shard.feed.cm.iter()
		if e, ok := it.next(); ok {
			next = append(next, cmHead{it: it, e: e})
		}
	}
	heap.Init(&next)
	for len(next) > 0 {
		h := &next[0]
		e := h.e
		messages++
		if messages > cmMessagesPerConnection*conns+cmFloodSlack {
			return e.frame, e.t
		}
		if e.grew {
			conns++
		}
		if e, ok := h.it.next(); ok {
			h.e = e
			heap.Fix(&next, 0)
		} else {
			heap.Pop(&next)
		}
	}
	return 0, time.Time{}
}

// cmHead is a shard's next CM message in replayFlood, and the iterator of
// its messages.
type cmHead struct {
	it cmIter
	e  cmEvent
}

// cmHeads is a min-heap of cmHead by frame (container/heap).
type cmHeads []cmHead

func (h cmHeads) Len() int           { return len(h) }
func (h cmHeads) Less(i, j int) bool { return h[i].e.frame < h[j].e.frame }
func (h cmHeads) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cmHeads) Push(x any)        { *h = append(*h, x.(cmHead)) }
func (h *cmHeads) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
