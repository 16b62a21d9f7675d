package nccl

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Collective is one collective operation of the job as its steps show
// it (docs/analysis.md, "Collectives (NCCL)"): the receives its ranks
// posted and the data written to them.
type Collective struct {
	Index int `json:"index"` // 1-based, in time order
	// Kind is all_reduce, all_gather, reduce_scatter, broadcast, reduce
	// or send_recv when the pattern of steps shows it exactly, else
	// unknown (see kindOf; always when a receive shows no data: the
	// capture missed some).
	Kind string `json:"kind"`
	// Algorithm is ring or tree when the links that carried data show
	// it, else unknown.
	Algorithm string `json:"algorithm"`
	// Protocol is simple: NCCL's net transport writes each protocol's
	// buffers alike, and only Simple's are told by their size.
	Protocol string `json:"protocol"`
	// SizeBytes is S as nccl-tests defines it (the per-rank buffer;
	// AllGather and ReduceScatter the whole gathered size), nil unless
	// the kind is known.
	SizeBytes *uint64 `json:"size_bytes"`
	Links     []Link  `json:"links"`
	// Start is the first CTS of any rank, End the last data packet;
	// DurationNs the time between them.
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	DurationNs int64     `json:"duration_ns"`
	// BusyNs is from the last rank's first CTS to the last data packet,
	// nil when a link's ranks are unknown (a file that sees part of the
	// job). AlgBWBps and BusBWBps are S over it in bits per second, and
	// that times nccl-tests' bus factor; nil without S or BusyNs.
	BusyNs   *int64    `json:"busy_ns"`
	AlgBWBps *float64  `json:"algbw_bps"`
	BusBWBps *float64  `json:"busbw_bps"`
	Arrivals []Arrival `json:"arrivals"`
	// Straggler is the rank or link that held the collective up, nil
	// when none stands out (see straggler).
	Straggler *Straggler `json:"straggler"`
	// Steps are the receives posted in the collective, in the order of
	// their CTS: what --trace draws (not in the JSON, whose links count
	// them).
	Steps []Step `json:"-"`
}

// Step is one receive of a collective: a CTS idx of a connection, from
// its CTS to the last data packet written to it.
type Step struct {
	// SenderRank and ReceiverRank are the connection's ranks, -1 when
	// not known.
	SenderRank, ReceiverRank int
	Idx                      uint64
	CTS                      time.Time
	// Last is the last packet of its data, the zero Time when none came.
	Last     time.Time
	Messages uint32
	Bytes    uint64
}

// Link is one sender rank's data to one receiver rank in a collective,
// its connections (channels) together.
type Link struct {
	SenderRank   *int   `json:"sender_rank"`
	ReceiverRank *int   `json:"receiver_rank"`
	Bytes        uint64 `json:"bytes"`
	Messages     uint64 `json:"messages"`
	Steps        uint64 `json:"steps"` // receives posted (CTS idx)

	sender, receiver string // addresses, for links of unknown ranks
	// transfer is the time the link spent writing: each step's first to
	// last data packet, summed.
	transfer    int64
	resends, ce uint64
	// first is the time of the link's first data packet in the
	// collective (0: none), which orients a tree's edges (trees).
	first int64
}

// Arrival is when a rank joined a collective: its first CTS (the
// receives its host posted once the collective was enqueued) and its
// first data; LateNs is its first CTS less the earliest first CTS of
// the collective. Each is nil when the rank posted or sent none, LateNs
// too when a link's ranks are unknown (the earliest may be unseen).
type Arrival struct {
	Rank      int        `json:"rank"`
	FirstCTS  *time.Time `json:"first_cts"`
	FirstData *time.Time `json:"first_data"`
	LateNs    *int64     `json:"late_ns"`
}

// Straggler is what held a collective up: a rank whose host (Kind
// "host") or GPU ("gpu") came late, or the link from Rank to
// ReceiverRank ("link"), slow for the reasons Why gives.
type Straggler struct {
	Rank         int    `json:"rank"`
	ReceiverRank *int   `json:"receiver_rank,omitempty"`
	Kind         string `json:"kind"`
	LateNs       int64  `json:"late_ns"`
	Why          string `json:"why,omitempty"`
}

// The kinds and algorithms of a collective.
const (
	KindAllReduce     = "all_reduce"
	KindAllGather     = "all_gather"
	KindReduceScatter = "reduce_scatter"
	KindBroadcast     = "broadcast"
	KindReduce        = "reduce"
	KindSendRecv      = "send_recv"
	KindUnknown       = "unknown"

	AlgorithmRing    = "ring"
	AlgorithmTree    = "tree"
	AlgorithmUnknown = "unknown"
)

// busFactor is nccl-tests' busbw/algbw for a kind of n ranks
// (doc/PERFORMANCE.md).
func busFactor(kind string, n int) float64 {
	switch kind {
	case KindAllReduce:
		return 2 * float64(n-1) / float64(n)
	case KindAllGather, KindReduceScatter:
		return float64(n-1) / float64(n)
	}
	return 1
}

// connSteps is a connection's steps with its ranks (-1: unknown), as
// Combine made them.
type connSteps struct {
	c                *conn
	sender, receiver int
}

// span is a step's place in time: from its CTS to when it was done.
type span struct {
	cs   *connSteps
	s    *step
	done int64 // its last data packet; without data, its CTS or its connection's data before, the later
}

// collectives splits the steps of the connections into collectives, in
// time order, the job having n ranks.
//
// Where one collective ends: NCCL posts a receive (a CTS, one idx) only
// for a step of a collective its host has enqueued, and the sender
// fills every receive posted for its collective (Simple writes every
// slice, empty ones included), in idx order on a connection; idx runs on
// across collectives. So between two collectives no receive is
// outstanding on any connection, and the next collective's first CTS
// comes after an idle time. A collective ends, and the next begins with
// a CTS, when every receive posted before that CTS was done: its data
// written (a receive whose data the capture never shows, at its CTS or
// its connection's data before, the later, so that a lost packet or a
// CTS that is not NCCL's holds nothing up). While a rank is late, the
// receives of its links stay outstanding, so a collective stays whole.
// When a link's ranks are unknown (a file that sees part of the job, whose
// unseen links may still be busy) the idle time must also be at least
// the collective's own duration so far: collectives enqueued back to back
// then show as one, of unknown kind. A collective whose receives got no
// data (the capture ended first) is left out.
func collectives(conns []*connSteps, n int) []Collective {
	var spans []span
	whole := true // every connection's ranks known
	for _, cs := range conns {
		whole = whole && cs.sender >= 0 && cs.receiver >= 0
		var written int64 // the connection's last data so far
		for i := range cs.c.steps {
			s := &cs.c.steps[i]
			done := max(s.cts, written)
			if s.messages > 0 {
				done = s.last
				written = max(written, s.last)
			}
			spans = append(spans, span{cs: cs, s: s, done: done})
		}
	}
	slices.SortStableFunc(spans, func(a, b span) int { return cmp.Compare(a.s.cts, b.s.cts) })
	var out []Collective
	for lo := 0; lo < len(spans); {
		start, done := spans[lo].s.cts, spans[lo].done
		hi := lo + 1
		for ; hi < len(spans); hi++ {
			t := spans[hi].s.cts
			if t > done && (whole || t-done >= done-start) {
				break
			}
			done = max(done, spans[hi].done)
		}
		if c, ok := collective(spans[lo:hi], n); ok {
			c.Index = len(out) + 1
			out = append(out, c)
		}
		lo = hi
	}
	return out
}

// linkKey names a collective's link: its ranks, or for a rank unknown
// the addresses.
type linkKey struct {
	sender, receiver int
	sAddr, rAddr     string
}

// linkOf is a link's aggregate while a collective is made.
type linkOf struct {
	Link
	conns []*connSteps
	// the steps, slices and offered size of each connection, for kindOf
	steps, bytes map[*connSteps]uint64
	offer        map[*connSteps]uint64
}

// collective makes one collective of its spans; false when no data was
// written in them.
func collective(spans []span, n int) (Collective, bool) {
	c := Collective{Kind: KindUnknown, Algorithm: AlgorithmUnknown, Protocol: "simple", Links: []Link{}, Arrivals: []Arrival{}}
	start, end := int64(math.MaxInt64), int64(math.MinInt64)
	links := map[linkKey]*linkOf{}
	var order []*linkOf
	firstCTS, firstData := map[int]int64{}, map[int]int64{}
	// firstStep is the step of each sender's first data, firstIn the
	// first data each rank received, for its wait.
	firstStep, firstIn := map[int]*step{}, map[int]int64{}
	complete, whole := true, true
	for _, sp := range spans {
		s, cs := sp.s, sp.cs
		start = min(start, s.cts)
		if s.messages > 0 {
			end = max(end, s.last)
		} else {
			whole = false
		}
		k := linkKey{sender: cs.sender, receiver: cs.receiver}
		if cs.sender < 0 || cs.receiver < 0 {
			complete = false
			k.sAddr, k.rAddr = cs.c.key.sender.String(), cs.c.key.receiver.String()
		}
		l := links[k]
		if l == nil {
			l = &linkOf{steps: map[*connSteps]uint64{}, bytes: map[*connSteps]uint64{}, offer: map[*connSteps]uint64{}}
			if cs.sender >= 0 {
				l.SenderRank = new(cs.sender)
			}
			if cs.receiver >= 0 {
				l.ReceiverRank = new(cs.receiver)
			}
			l.sender, l.receiver = cs.c.key.sender.String(), cs.c.key.receiver.String()
			links[k] = l
			order = append(order, l)
		}
		if !slices.Contains(l.conns, cs) {
			l.conns = append(l.conns, cs)
		}
		st := Step{SenderRank: cs.sender, ReceiverRank: cs.receiver, Idx: s.idx, CTS: time.Unix(0, s.cts).UTC(), Messages: s.messages, Bytes: s.bytes}
		if s.messages > 0 {
			st.Last = time.Unix(0, s.last).UTC()
		}
		c.Steps = append(c.Steps, st)
		l.Steps++
		l.steps[cs]++
		l.Messages += uint64(s.messages)
		l.Bytes += s.bytes
		l.bytes[cs] += s.bytes
		l.offer[cs] = max(l.offer[cs], s.size)
		l.resends += uint64(s.resends)
		l.ce += uint64(s.ce)
		if s.messages > 0 {
			l.transfer += s.last - s.first
			if l.first == 0 || s.first < l.first {
				l.first = s.first
			}
		}
		if cs.receiver >= 0 {
			if t, ok := firstCTS[cs.receiver]; !ok || s.cts < t {
				firstCTS[cs.receiver] = s.cts
			}
		}
		if cs.sender >= 0 && s.messages > 0 {
			if t, ok := firstData[cs.sender]; !ok || s.first < t {
				firstData[cs.sender], firstStep[cs.sender] = s.first, s
			}
		}
		if cs.receiver >= 0 && s.messages > 0 {
			if t, ok := firstIn[cs.receiver]; !ok || s.first < t {
				firstIn[cs.receiver] = s.first
			}
		}
	}
	if end == math.MinInt64 {
		return c, false
	}
	slices.SortFunc(order, func(a, b *linkOf) int {
		return cmp.Or(compareRank(a.SenderRank, b.SenderRank), compareRank(a.ReceiverRank, b.ReceiverRank),
			cmp.Compare(a.sender, b.sender), cmp.Compare(a.receiver, b.receiver))
	})
	for _, l := range order {
		c.Links = append(c.Links, l.Link)
	}
	c.Start, c.End, c.DurationNs = time.Unix(0, start).UTC(), time.Unix(0, end).UTC(), end-start

	// Arrivals, by rank.
	var ranks []int
	for r := range firstCTS {
		ranks = append(ranks, r)
	}
	for r := range firstData {
		if _, ok := firstCTS[r]; !ok {
			ranks = append(ranks, r)
		}
	}
	slices.Sort(ranks)
	earliest, last := int64(math.MaxInt64), int64(math.MinInt64)
	for _, t := range firstCTS {
		earliest, last = min(earliest, t), max(last, t)
	}
	for _, r := range ranks {
		a := Arrival{Rank: r}
		if t, ok := firstCTS[r]; ok {
			a.FirstCTS = new(time.Unix(0, t).UTC())
			if complete { // else the earliest may be another file's
				a.LateNs = new(t - earliest)
			}
		}
		if t, ok := firstData[r]; ok {
			a.FirstData = new(time.Unix(0, t).UTC())
		}
		c.Arrivals = append(c.Arrivals, a)
	}
	if !complete || len(firstCTS) == 0 {
		return c, true
	}
	var size uint64
	c.Kind, c.Algorithm, size = kindOf(order, n)
	if !whole { // a receive without data: the capture missed some
		c.Kind, size = KindUnknown, 0
	}
	// A rank whose first CTS came after the last data (its receives
	// posted for nothing this collective wrote) leaves no busy time.
	busy := max(end-last, 0)
	c.BusyNs = new(busy)
	if c.Kind != KindUnknown {
		c.SizeBytes = new(size)
		if busy > 0 {
			alg := float64(size) * 8 / (float64(busy) / 1e9)
			c.AlgBWBps, c.BusBWBps = new(alg), new(alg*busFactor(c.Kind, n))
		}
	}
	if c.Algorithm == AlgorithmRing {
		firstIn = nil // a ring rank's first step sends its own data
	}
	c.Straggler = straggler(order, firstCTS, firstData, firstIn, firstStep, busy)
	return c, true
}

// kindOf is a collective's kind, algorithm and S from its links (every
// rank known) in a job of n ranks; KindUnknown unless the pattern shows
// one kind exactly:
//   - ring (each rank sends to one successor, in one cycle through all
//     n): AllReduce, AllGather and ReduceScatter write a chunk per ring
//     step in 2 slices (collectives.h: CHUNKSTEPS / SLICESTEPS), each
//     slice a receive whose CTS offers E bytes (SLICESTEPS × the step
//     size), so a chunk holds at most C = 2E. An AllReduce loop is
//     2(n−1) ring steps, an AllGather's or ReduceScatter's n−1; every
//     loop but the last carries full chunks. A connection of k loops of
//     m ring steps posts 2mk receives and carries more than (k−1)·m·C
//     bytes and at most k·m·C. all_reduce when every connection fits
//     AllReduce and not the other two, S = total bytes / 2(n−1); when
//     they fit AllGather/ReduceScatter, which write alike, unknown.
//   - tree (the links are both directions of the n−1 edges of a
//     spanning tree): all_reduce when each edge carries as many bytes
//     down as up (a reduce up, a broadcast down), S = total / 2(n−1).
//   - one link in a job of 3 or more ranks: send_recv, S its bytes.
//
// A broadcast and a reduce both write along a ring path from one rank
// to another, alike on the wire: unknown. So is an AllReduce whose
// every loop carries full chunks: it writes what an AllGather of twice
// its size would, loop for loop.
func kindOf(links []*linkOf, n int) (kind, algorithm string, size uint64) {
	var active []*linkOf
	var total uint64
	for _, l := range links {
		if l.Messages > 0 {
			active = append(active, l)
			total += l.Bytes
		}
	}
	if n < 2 || len(active) == 0 {
		return KindUnknown, AlgorithmUnknown, 0
	}
	next := map[int]int{}
	pairs := map[[2]int]*linkOf{}
	for _, l := range active {
		s, r := *l.SenderRank, *l.ReceiverRank
		pairs[[2]int{s, r}] = l
		if _, ok := next[s]; ok {
			next[s] = -1
		} else {
			next[s] = r
		}
	}
	switch {
	case isRing(next, n):
		if fitsLoops(active, 2*(n-1)) && !fitsLoops(active, n-1) && total%uint64(2*(n-1)) == 0 {
			return KindAllReduce, AlgorithmRing, total / uint64(2*(n-1))
		}
		return KindUnknown, AlgorithmRing, 0
	case isTree(pairs, n):
		for p, l := range pairs {
			if pairs[[2]int{p[1], p[0]}].Bytes != l.Bytes {
				return KindUnknown, AlgorithmTree, 0
			}
		}
		if total%uint64(2*(n-1)) == 0 {
			return KindAllReduce, AlgorithmTree, total / uint64(2*(n-1))
		}
		return KindUnknown, AlgorithmTree, 0
	case len(active) == 1 && n >= 3:
		return KindSendRecv, AlgorithmUnknown, total
	}
	return KindUnknown, AlgorithmUnknown, 0
}

// isRing says whether next (each sender's one receiver, -1 for several)
// is one cycle through n ranks.
func isRing(next map[int]int, n int) bool {
	if len(next) != n {
		return false
	}
	from := lowest(next)
	at, seen := from, 0
	for {
		to, ok := next[at]
		if !ok || to < 0 {
			return false
		}
		seen++
		if at = to; at == from {
			return seen == n
		}
		if seen > n {
			return false
		}
	}
}

// isTree says whether pairs (sender, receiver) are both directions of
// the edges of a spanning tree of n ranks.
func isTree(pairs map[[2]int]*linkOf, n int) bool {
	if len(pairs) != 2*(n-1) {
		return false
	}
	adj := map[int][]int{}
	for p := range pairs {
		if pairs[[2]int{p[1], p[0]}] == nil {
			return false
		}
		adj[p[0]] = append(adj[p[0]], p[1])
	}
	if len(adj) != n {
		return false
	}
	from := lowest(adj)
	seen := map[int]bool{from: true}
	for todo := []int{from}; len(todo) > 0; {
		at := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, to := range adj[at] {
			if !seen[to] {
				seen[to] = true
				todo = append(todo, to)
			}
		}
	}
	return len(seen) == n // n−1 edges reaching all n: a tree
}

// fitsLoops says whether every connection of the links fits whole
// loops of m ring steps of 2 slices (see kindOf).
func fitsLoops(links []*linkOf, m int) bool {
	for _, l := range links {
		for _, cs := range l.conns {
			steps, bytes, offer := l.steps[cs], l.bytes[cs], l.offer[cs]
			per := uint64(2 * m)
			if steps == 0 || steps%per != 0 {
				return false
			}
			k := steps / per
			chunk := 2 * offer
			if bytes > k*uint64(m)*chunk || k > 1 && bytes <= (k-1)*uint64(m)*chunk {
				return false
			}
		}
	}
	return true
}

// straggler is what held a collective up, checked in this order, nil
// when nothing stands out (busy is the collective's busy time):
//   - host: the rank whose first CTS came last, when its late_ns (that
//     first CTS less the earliest) exceeds busy: the ranks waited for
//     its host longer than the collective then took;
//   - gpu: the rank whose first data waited longest after the CTS that
//     allowed it (or, off a ring, where a rank's first step sends its
//     own data, after the first data it received when that came later
//     but before it sent: what a Broadcast's or a tree's rank forwards
//     or reduces; firstIn), when that wait less the other ranks' median wait
//     exceeds the rest of busy (busy less that excess): the rule
//     compares with busy, which the GPU's delay is itself part of. A
//     host late by less than busy shows here too: its data waits on it;
//   - link: the link whose transfer (each step's first to last data
//     packet, summed: the time it spent writing) takes more than 3 ×
//     the median link's, naming why from its resent packets and ECN-CE
//     marks (pauses and CNPs are not tied to a link here).
func straggler(links []*linkOf, firstCTS, firstData, firstIn map[int]int64, firstStep map[int]*step, busy int64) *Straggler {
	var earliest int64 = math.MaxInt64
	lastRank, lastAt := -1, int64(math.MinInt64)
	for r, t := range firstCTS {
		earliest = min(earliest, t)
		if t > lastAt || t == lastAt && r < lastRank {
			lastRank, lastAt = r, t
		}
	}
	if late := lastAt - earliest; len(firstCTS) > 1 && late > busy {
		return &Straggler{Rank: lastRank, Kind: "host", LateNs: late}
	}
	waits := map[int]int64{}
	for r, t := range firstData {
		from := firstStep[r].cts
		if in, ok := firstIn[r]; ok && in < t {
			from = max(from, in) // what it forwards or reduces came later
		}
		waits[r] = max(t-from, 0)
	}
	if len(waits) > 1 {
		gpu, excess := -1, int64(0)
		for r, w := range waits {
			var others []int64
			for o, v := range waits {
				if o != r {
					others = append(others, v)
				}
			}
			if e := w - median(others); e > excess || e == excess && gpu >= 0 && r < gpu {
				gpu, excess = r, e
			}
		}
		if gpu >= 0 && excess > busy-excess {
			return &Straggler{Rank: gpu, Kind: "gpu", LateNs: excess}
		}
	}
	var transfers []int64
	var slow *linkOf
	for _, l := range links {
		if l.Messages == 0 {
			continue
		}
		transfers = append(transfers, l.transfer)
		if slow == nil || l.transfer > slow.transfer {
			slow = l
		}
	}
	if len(transfers) < 2 {
		return nil
	}
	m := median(transfers)
	if slow.transfer <= 3*m || slow.transfer == 0 {
		return nil
	}
	var why []string
	if slow.resends > 0 {
		why = append(why, fmt.Sprintf("%d data packets sent again", slow.resends))
	}
	if slow.ce > 0 {
		why = append(why, fmt.Sprintf("%d marked ECN-CE", slow.ce))
	}
	if len(why) == 0 {
		why = append(why, "no resends or ECN-CE marks seen: the writes were slow")
	}
	return &Straggler{Rank: *slow.SenderRank, ReceiverRank: new(*slow.ReceiverRank), Kind: "link",
		LateNs: slow.transfer - m, Why: strings.Join(why, ", ")}
}

// lowest is the lowest rank m has (0 for none).
func lowest[V any](m map[int]V) int {
	lo, first := 0, true
	for r := range m {
		if first || r < lo {
			lo, first = r, false
		}
	}
	return lo
}

// median is the lower median of v (0 for none); v is sorted in place.
func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	return v[(len(v)-1)/2]
}
