package points

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// Report is what the capture points tell: each file's clock and, per flow
// and pair of consecutive points, what reached the downstream point.
type Report struct {
	Files []File `json:"files"`
	Links []Link `json:"links"`
}

// File is one capture point.
type File struct {
	File string `json:"file"`
	// ClockOffsetNs is how far this file's clock runs ahead of the
	// reference file's (its timestamp minus the reference's for one
	// instant); subtracting it puts the file on the reference clock.
	ClockOffsetNs int64 `json:"clock_offset_ns"`
	// OffsetErrorNs bounds the error of ClockOffsetNs (two_way: half the
	// interval the minimum delays leave; 0 reference and override; -1
	// unknown).
	OffsetErrorNs int64 `json:"offset_error_ns"`
	// Method says how the offset was found (MethodTwoWay, …).
	Method string `json:"method"`
}

// Link is one flow between two consecutive capture points, upstream
// first.
type Link struct {
	Src    string `json:"src"`
	Dst    string `json:"dst"`
	DestQP uint32 `json:"dest_qp"`
	From   string `json:"from"`
	To     string `json:"to"`
	// Matched counts transmissions seen at both points (corrupted ones
	// included).
	Matched uint64 `json:"matched"`
	// Lost counts transmissions seen at From, never at To, and never
	// acknowledged by the receiver before a resend of their PSN (or not
	// acknowledgeable: UC, UD, responses): lost between the points.
	Lost     uint64   `json:"lost"`
	LostPSNs []uint32 `json:"lost_psns"`
	// LostFrames are the frames of the lost transmissions in From's file.
	LostFrames []uint64 `json:"lost_frames"`
	// NotCaptured counts transmissions absent at To but acknowledged by
	// the receiver: To's capture missed them.
	NotCaptured uint64 `json:"not_captured"`
	// Corrupted counts transmissions with a good ICRC at From and a bad
	// one at To.
	Corrupted     uint64   `json:"corrupted"`
	CorruptedPSNs []uint32 `json:"corrupted_psns"`
	// CorruptedFrames are their frames in To's file.
	CorruptedFrames []uint64 `json:"corrupted_frames"`
	// Reordered counts transmissions that reached To after one that left
	// From later.
	Reordered uint64 `json:"reordered"`
	// ECNCEAdded counts the matched transmissions ECN CE-marked at To and
	// not at From: the marks the network added between the points.
	ECNCEAdded    uint64 `json:"ecn_ce_added"`
	OneWayDelayNs Delay  `json:"one_way_delay_ns"`
}

// Delay summarises the one-way delays (To's time minus From's, on the
// reference clock) of the matched transmissions; nearest-rank quantiles.
type Delay struct {
	Min    int64 `json:"min"`
	Median int64 `json:"median"`
	P99    int64 `json:"p99"`
	Max    int64 `json:"max"`
	// Samples is the number of delays the quantiles were taken from (all
	// of them up to 16384, then a uniform sample).
	Samples int `json:"samples"`
}

// pairAcc accumulates one flow between points i < j. Orientation 0 is
// i → j, 1 is j → i.
type pairAcc struct {
	i, j    int
	matched uint64
	delays  reservoir // t_j - t_i
	ewma    int64
	hasEWMA bool

	lost          [2]uint64
	lostPSNs      [2][]uint32
	lostFrames    [2][]uint64
	notCaptured   [2]uint64
	corrupted     [2]uint64
	corruptPSNs   [2][]uint32
	corruptFrames [2][]uint64
	reordered     [2]uint64
	ceAdded       [2]uint64
	maxFrom       [2]int64
	anyFrom       [2]bool
}

// observe notes a sighting at point to at tt of a transmission seen at
// point from at tf: the delay estimate, and reordering.
func (a *pairAcc) observe(from, to int, tf, tt int64) {
	d := tt - tf
	o := 0
	if from == a.j {
		d, o = -d, 1
	}
	if a.hasEWMA {
		a.ewma += (d - a.ewma) / 8
	} else {
		a.ewma, a.hasEWMA = d, true
	}
	if a.anyFrom[o] && tf < a.maxFrom[o] {
		a.reordered[o]++
	} else {
		a.maxFrom[o], a.anyFrom[o] = tf, true
	}
}

func (a *pairAcc) lose(o int, psn uint32, frame uint64, maxPSNs int) {
	a.lost[o]++
	if len(a.lostPSNs[o]) < maxPSNs {
		a.lostPSNs[o] = append(a.lostPSNs[o], psn)
		a.lostFrames[o] = append(a.lostFrames[o], frame)
	}
}

func (a *pairAcc) corrupt(o int, psn uint32, frame uint64, maxPSNs int) {
	a.corrupted[o]++
	if len(a.corruptPSNs[o]) < maxPSNs {
		a.corruptPSNs[o] = append(a.corruptPSNs[o], psn)
		a.corruptFrames[o] = append(a.corruptFrames[o], frame)
	}
}

// reservoirSize is how many delays a link keeps for its quantiles.
const reservoirSize = 1 << 14

// reservoir keeps every value up to reservoirSize, then a uniform sample
// (Algorithm R); min and max are exact.
type reservoir struct {
	vals     []int64
	n        uint64
	min, max int64
	rng      uint64
}

func (r *reservoir) add(v int64) {
	if r.n == 0 || v < r.min {
		r.min = v
	}
	if r.n == 0 || v > r.max {
		r.max = v
	}
	r.n++
	if len(r.vals) < reservoirSize {
		r.vals = append(r.vals, v)
		return
	}
	r.rng ^= r.rng << 13
	r.rng ^= r.rng >> 7
	r.rng ^= r.rng << 17
	if k := r.rng % r.n; k < reservoirSize {
		r.vals[k] = v
	}
}

// delay summarises the values, negated when neg.
func (r *reservoir) delay(neg bool) Delay {
	if r.n == 0 {
		return Delay{}
	}
	v := slices.Clone(r.vals)
	lo, hi := r.min, r.max
	if neg {
		for i := range v {
			v[i] = -v[i]
		}
		lo, hi = -hi, -lo
	}
	slices.Sort(v)
	rank := func(q float64) int64 {
		k := int(math.Ceil(q*float64(len(v)))) - 1
		return v[max(0, min(k, len(v)-1))]
	}
	return Delay{Min: lo, Median: rank(0.5), P99: rank(0.99), Max: hi, Samples: len(v)}
}

// Finish accounts the transmissions still in the window and returns the
// report. The Matcher must not be used afterwards.
func (m *Matcher) Finish() *Report {
	m.evict(math.MaxInt64)
	for _, fs := range m.fl {
		for _, p := range fs.pending {
			p.acc.lose(p.o, p.psn, p.frame, m.maxPSNs)
		}
		fs.pending = nil
	}
	rep := &Report{Files: make([]File, m.n), Links: []Link{}}
	for i := range m.n {
		f := File{File: m.opts.Files[i], Method: MethodNone}
		if i < len(m.opts.Offsets) {
			o := m.opts.Offsets[i]
			f.ClockOffsetNs, f.OffsetErrorNs, f.Method = int64(o.Offset), int64(o.Error), o.Method
		}
		rep.Files[i] = f
	}
	for _, fs := range m.fl {
		rep.Links = append(rep.Links, m.links(fs)...)
	}
	slices.SortStableFunc(rep.Links, func(a, b Link) int {
		return cmp.Or(cmp.Compare(a.Src, b.Src), cmp.Compare(a.Dst, b.Dst), cmp.Compare(a.DestQP, b.DestQP))
	})
	return rep
}

// upstream says whether point i is upstream of j for the pair (matched
// transmissions reach j later, by the median).
func (a *pairAcc) upstreamI() bool { return a.delays.delay(false).Median >= 0 }

// links returns a flow's links: its points in path order (see order),
// a link per two consecutive ones that share transmissions, from the
// upstream one (by the median delay) to the other.
func (m *Matcher) links(fs *flowState) []Link {
	pts := m.order(fs)
	var out []Link
	for k := 0; k+1 < len(pts); k++ {
		a := fs.path.acc(pts[k], pts[k+1])
		if a == nil || a.matched == 0 {
			continue
		}
		from, to, o := a.i, a.j, 0
		if !a.upstreamI() {
			from, to, o = a.j, a.i, 1
		}
		out = append(out, Link{
			Src: fs.key.src.String(), Dst: fs.key.dst.String(), DestQP: fs.key.qp,
			From: m.opts.Files[from], To: m.opts.Files[to],
			Matched: a.matched, Lost: a.lost[o], LostPSNs: orEmpty(a.lostPSNs[o]), LostFrames: orEmpty(a.lostFrames[o]),
			NotCaptured: a.notCaptured[o], Corrupted: a.corrupted[o], CorruptedPSNs: orEmpty(a.corruptPSNs[o]),
			CorruptedFrames: orEmpty(a.corruptFrames[o]), Reordered: a.reordered[o],
			OneWayDelayNs: a.delays.delay(o == 1), ECNCEAdded: a.ceAdded[o],
		})
	}
	return out
}

// order returns a flow's points along its path. With three points or
// fewer on the path, every pair of them is kept: the points that share
// transmissions with another, in file order, sorted by how many of the
// others each one is upstream of (by the median delay, ≥ 0: the file
// given first). With more, the path as its transmissions placed the
// points, mended in one pass: two consecutive points whose pair's median
// delay says the second is upstream swap places (their new neighbours'
// pairs are kept, being two apart), unless next to a swap just made.
func (m *Matcher) order(fs *flowState) []int {
	p := &fs.path
	if len(p.pts) <= 3 {
		accs := slices.Concat(p.links, p.skips)
		slices.SortFunc(accs, func(x, y *pairAcc) int { return cmp.Or(cmp.Compare(x.i, y.i), cmp.Compare(x.j, y.j)) })
		pts := []int{}
		score := make([]int, m.n)
		for _, a := range accs {
			if a.matched == 0 {
				continue
			}
			if a.upstreamI() {
				score[a.i]++
			} else {
				score[a.j]++
			}
			for _, q := range [2]int{a.i, a.j} {
				if !slices.Contains(pts, q) {
					pts = append(pts, q)
				}
			}
		}
		slices.SortStableFunc(pts, func(x, y int) int { return cmp.Compare(score[y], score[x]) })
		return pts
	}
	pts := make([]int, len(p.pts))
	for k, q := range p.pts {
		pts[k] = int(q)
	}
	for k := 0; k+1 < len(pts); k++ {
		a := p.links[k]
		if a.matched == 0 || (a.upstreamI() == (pts[k] == a.i)) {
			continue
		}
		pts[k], pts[k+1] = pts[k+1], pts[k]
		k += 2
	}
	return pts
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// String names a link in findings and text.
func (l *Link) String() string {
	return fmt.Sprintf("%s, %s → %s", analyze.FlowID{Src: l.Src, Dst: l.Dst, DestQP: l.DestQP}, l.From, l.To)
}
