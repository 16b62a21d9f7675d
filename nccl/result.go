package nccl

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// Result is NCCL's traffic as the packets show it (docs/analysis.md,
// "Collectives (NCCL)"): the FIFO layout its CTS are written in, the
// ranks, the connections, and the ring of each channel when the
// connections show it exactly.
type Result struct {
	// FIFOLayout is the Name of the Layout the CTS entries are in.
	FIFOLayout  string       `json:"fifo_layout"`
	Ranks       []Rank       `json:"ranks"`
	Connections []Connection `json:"connections"`
	// Channels and Rings are left out (0, nil) unless the connections
	// that carried data link every rank to exactly one successor, in one
	// cycle through them all, with as many connections on each of its
	// links: Channels is that number, and Rings that ring once per
	// channel, from rank 0 (the lowest) on.
	Channels int     `json:"channels,omitempty"`
	Rings    [][]int `json:"rings,omitempty"`
	// Trees are the trees the collectives of the tree algorithm ran on
	// (see trees), each once, in the order first used; absent without.
	Trees []Tree `json:"trees,omitempty"`
	// Collectives are the collective operations the steps show, in time
	// order (see collectives for where one ends).
	Collectives []Collective `json:"collectives"`
}

// Rank is a rank and the address its CTS were written to (a rank whose
// CTS went to several addresses is listed once per address).
type Rank struct {
	Rank int    `json:"rank"`
	Addr string `json:"addr"`
}

// Connection is one NET connection: the sender writes the data to the
// receiver, after the receiver's CTS told it where.
type Connection struct {
	// SenderRank is the CTS' tag; nil when they named different ranks.
	SenderRank *int `json:"sender_rank"`
	// ReceiverRank is the rank of the receiver's address when exactly one
	// rank has it, else nil.
	ReceiverRank *int   `json:"receiver_rank"`
	Sender       string `json:"sender"`
	Receiver     string `json:"receiver"`
	// DataQPs are the destination QPs of the data writes (the
	// receiver's), in the order seen; CTSQP the destination QP of the CTS
	// writes (the sender's).
	DataQPs  []uint32 `json:"data_qps"`
	CTSQP    uint32   `json:"cts_qp"`
	FIFORkey uint32   `json:"fifo_rkey"`
	FIFOAddr string   `json:"fifo_addr"`
	CTS      uint64   `json:"cts"`      // CTS writes
	Messages uint64   `json:"messages"` // data messages matched to a CTS entry
	Bytes    uint64   `json:"bytes"`    // their lengths
	Active   bool     `json:"active"`   // it carried a data message
}

// Result is what c saw on its own: Combine(c).
func (c *Collector) Result() *Result { return Combine(c) }

// Combine joins what several collectors saw (the files of capture points,
// the shards of one capture) into one result, a connection seen by
// several counted once: its counts are the most any of them saw. It is
// nil when no data message named a CTS entry: traffic that only looks
// like NCCL's is not NCCL.
func Combine(cs ...*Collector) *Result {
	var messages [len(layouts)]uint64
	for _, c := range cs {
		for _, cn := range c.conns {
			messages[cn.key.layout] += cn.messages
		}
	}
	li := 0
	for i, m := range messages {
		if m > messages[li] {
			li = i
		}
	}
	if messages[li] == 0 {
		return nil
	}
	// Each connection once, the most seen of each count, each step
	// once (mergeSteps).
	byKey := map[connKey]*conn{}
	stepAt := map[*conn]map[uint64]int{}
	var conns []*conn
	for _, c := range cs {
		for _, cn := range c.conns {
			if cn.key.layout != li {
				continue
			}
			m := byKey[cn.key]
			if m == nil {
				m = &conn{key: cn.key, tag: cn.tag}
				byKey[cn.key] = m
				stepAt[m] = map[uint64]int{}
				conns = append(conns, m)
			}
			m.mergeSteps(cn.steps, c.offset, stepAt[m])
			if m.tag != cn.tag {
				m.tag = -1
			}
			m.cts, m.messages, m.bytes = max(m.cts, cn.cts), max(m.messages, cn.messages), max(m.bytes, cn.bytes)
			for _, q := range cn.dataQPs {
				if !slices.Contains(m.dataQPs, q) {
					m.dataQPs = append(m.dataQPs, q)
				}
			}
		}
	}
	r := &Result{FIFOLayout: layouts[li].Name, Ranks: []Rank{}, Connections: []Connection{}}
	// A rank is the address its CTS were written to: the sender's.
	type rankAddr struct {
		rank int
		addr analyze.Addr
	}
	seen := map[rankAddr]bool{}
	ranksOf := map[analyze.Addr][]int{}
	for _, cn := range conns {
		ra := rankAddr{cn.tag, cn.key.sender}
		if cn.tag < 0 || seen[ra] {
			continue
		}
		seen[ra] = true
		r.Ranks = append(r.Ranks, Rank{Rank: cn.tag, Addr: cn.key.sender.String()})
		ranksOf[cn.key.sender] = append(ranksOf[cn.key.sender], cn.tag)
	}
	slices.SortFunc(r.Ranks, func(a, b Rank) int { return cmp.Or(cmp.Compare(a.Rank, b.Rank), cmp.Compare(a.Addr, b.Addr)) })
	for _, cn := range conns {
		c := Connection{Sender: cn.key.sender.String(), Receiver: cn.key.receiver.String(), DataQPs: cn.dataQPs,
			CTSQP: cn.key.ctsQP, FIFORkey: cn.key.fifoRkey, FIFOAddr: fmt.Sprintf("%#x", cn.key.fifoAddr),
			CTS: cn.cts, Messages: cn.messages, Bytes: cn.bytes, Active: cn.messages > 0}
		if c.DataQPs == nil {
			c.DataQPs = []uint32{}
		}
		if cn.tag >= 0 {
			c.SenderRank = new(cn.tag)
		}
		if rs := ranksOf[cn.key.receiver]; len(rs) == 1 {
			c.ReceiverRank = new(rs[0])
		}
		r.Connections = append(r.Connections, c)
	}
	slices.SortFunc(r.Connections, compareConnections)
	r.Channels, r.Rings = rings(r)
	steps := make([]*connSteps, len(conns))
	nranks := map[int]bool{}
	for _, rk := range r.Ranks {
		nranks[rk.Rank] = true
	}
	for i, cn := range conns {
		slices.SortFunc(cn.steps, func(a, b step) int { return cmp.Compare(a.idx, b.idx) })
		steps[i] = &connSteps{c: cn, sender: cn.tag, receiver: -1}
		if rs := ranksOf[cn.key.receiver]; len(rs) == 1 {
			steps[i].receiver = rs[0]
		}
	}
	r.Collectives = collectives(steps, len(nranks))
	if r.Collectives == nil {
		r.Collectives = []Collective{}
	}
	r.Trees = trees(r.Collectives)
	return r
}

// mergeSteps adds the steps another collector saw of the connection,
// whose capture's clock ran offset ahead of the reference clock, to
// m's (at: the index of each idx in m.steps). A step seen by several
// is the sighting that saw the most of its data (the files of capture
// points each see all of it or a part), each time its first sighting.
func (m *conn) mergeSteps(steps []step, offset int64, at map[uint64]int) {
	shift := func(t int64) int64 {
		if t == 0 {
			return 0
		}
		return t - offset
	}
	earliest := func(a, b int64) int64 {
		if a == 0 || b != 0 && b < a {
			return b
		}
		return a
	}
	for _, s := range steps {
		s.cts, s.first, s.last = shift(s.cts), shift(s.first), shift(s.last)
		i, ok := at[s.idx]
		if !ok {
			at[s.idx] = len(m.steps)
			m.steps = append(m.steps, s)
			continue
		}
		e := &m.steps[i]
		e.cts, e.size = earliest(e.cts, s.cts), max(e.size, s.size)
		switch {
		case s.messages > e.messages || s.messages == e.messages && s.bytes > e.bytes:
			e.messages, e.bytes, e.first, e.last, e.resends, e.ce = s.messages, s.bytes, s.first, s.last, s.resends, s.ce
		case s.messages == e.messages && s.bytes == e.bytes:
			e.first, e.last = earliest(e.first, s.first), earliest(e.last, s.last)
			e.resends, e.ce = max(e.resends, s.resends), max(e.ce, s.ce)
		}
	}
}

// compareConnections orders connections by ranks (unknown last), then
// addresses and QP.
func compareConnections(a, b Connection) int {
	return cmp.Or(compareRank(a.SenderRank, b.SenderRank), compareRank(a.ReceiverRank, b.ReceiverRank),
		cmp.Compare(a.Sender, b.Sender), cmp.Compare(a.Receiver, b.Receiver), cmp.Compare(a.CTSQP, b.CTSQP),
		cmp.Compare(a.FIFOAddr, b.FIFOAddr), cmp.Compare(a.FIFORkey, b.FIFORkey))
}

// compareRank orders known ranks before unknown (nil) ones.
func compareRank(a, b *int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return 1
	case b == nil:
		return -1
	}
	return cmp.Compare(*a, *b)
}

// rings returns the channels and their rings when the connections that
// carried data show them exactly (see Result.Channels), else 0 and nil.
func rings(r *Result) (int, [][]int) {
	ranks := map[int]bool{}
	for _, rk := range r.Ranks {
		ranks[rk.Rank] = true
	}
	if len(ranks) < 2 {
		return 0, nil
	}
	next := map[int]int{}
	links := map[[2]int]int{}
	for _, c := range r.Connections {
		if !c.Active {
			continue
		}
		if c.SenderRank == nil || c.ReceiverRank == nil {
			return 0, nil // a link of unknown ends: the ring cannot be told
		}
		s, d := *c.SenderRank, *c.ReceiverRank
		if n, ok := next[s]; ok && n != d {
			return 0, nil // two successors: more than a ring
		}
		next[s] = d
		links[[2]int{s, d}]++
	}
	lo := r.Ranks[0].Rank
	if _, ok := next[lo]; !ok {
		return 0, nil
	}
	ring := []int{lo}
	for at := next[lo]; at != lo; at = next[at] {
		if _, ok := next[at]; !ok || len(ring) >= len(ranks) {
			return 0, nil
		}
		ring = append(ring, at)
	}
	if len(ring) != len(ranks) || len(next) != len(ranks) {
		return 0, nil
	}
	channels := links[[2]int{lo, next[lo]}]
	for _, n := range links {
		if n != channels {
			return 0, nil
		}
	}
	out := make([][]int, channels)
	for i := range out {
		out[i] = slices.Clone(ring)
	}
	return channels, out
}

// Tree is the tree a collective of the tree algorithm ran on: its root
// and each other rank's parent, by rank.
type Tree struct {
	Root    int      `json:"root"`
	Parents []Parent `json:"parents"`
}

// Parent is a rank's parent in a Tree.
type Parent struct {
	Rank   int `json:"rank"`
	Parent int `json:"parent"`
}

// trees returns the trees of the collectives whose links are both
// directions of the edges of one spanning tree (AlgorithmTree), each
// once. An edge is oriented by its first data: NCCL's tree AllReduce
// reduces up the tree before it broadcasts down, so a child's first
// data to its parent precedes its parent's first data to it, on each
// edge. A collective with an edge whose two directions begin at once,
// or that leaves no single root, adds no tree.
func trees(colls []Collective) []Tree {
	var out []Tree
	for i := range colls {
		c := &colls[i]
		if c.Algorithm != AlgorithmTree {
			continue
		}
		first := map[[2]int]int64{}
		for _, l := range c.Links {
			if l.SenderRank == nil || l.ReceiverRank == nil || l.first == 0 {
				continue
			}
			first[[2]int{*l.SenderRank, *l.ReceiverRank}] = l.first
		}
		parent := map[int]int{}
		ranks := map[int]bool{}
		ok := true
		for e, t := range first {
			ranks[e[0]] = true
			back, found := first[[2]int{e[1], e[0]}]
			switch {
			case !found || back == t:
				ok = false
			case t < back: // e[0] sends first: the child
				if _, dup := parent[e[0]]; dup {
					ok = false
				}
				parent[e[0]] = e[1]
			}
		}
		if !ok || len(parent) != len(ranks)-1 {
			continue
		}
		t := Tree{Root: -1, Parents: []Parent{}}
		for _, r := range slices.Sorted(maps.Keys(ranks)) {
			p, has := parent[r]
			if !has {
				t.Root = r
				continue
			}
			t.Parents = append(t.Parents, Parent{Rank: r, Parent: p})
		}
		if !slices.ContainsFunc(out, func(o Tree) bool { return o.Root == t.Root && slices.Equal(o.Parents, t.Parents) }) {
			out = append(out, t)
		}
	}
	return out
}
