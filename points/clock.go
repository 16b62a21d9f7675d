package points

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// Methods of a file's clock offset (File.Method).
const (
	// MethodReference: the first file, whose clock is the reference.
	MethodReference = "reference"
	// MethodTwoWay: packets seen at both points in both directions; the
	// minimum one-way delays of the two directions bound the offset (as
	// NTP's four timestamps) and the estimate is the middle of the bound.
	MethodTwoWay = "two_way"
	// MethodOneWay: shared packets in one direction only; the offset
	// assumes a zero minimum delay and its error is unknown (-1).
	MethodOneWay = "one_way"
	// MethodOverride: given on the command line (--clock-offset).
	MethodOverride = "override"
	// MethodNone: the file meets no other (or is the first of a group
	// that does not meet the reference); its clock is taken as is.
	MethodNone = "none"
)

// MinSharedRatio: two files are capture points of the same traffic when
// at least 1/MinSharedRatio of the smaller one's sampled data
// transmissions are seen in both, and the PSNs they disagree on (see
// meets) are at most 1/MinSharedRatio of the shared ones.
const MinSharedRatio = 5

// MaxMissRatio: two files are capture points of the same traffic only
// when neither misses more than 1/MaxMissRatio of the other's sampled
// data transmissions within the PSNs both saw of each flow (the shortest
// arc of the 24-bit PSN circle that holds the PSNs of it they share):
// points of one traffic see
// the same packets while both capture, but for the few lost between them
// or dropped by a capture, whereas a file that holds every other packet
// of another is not a point of its traffic.
const MaxMissRatio = 4

// MinShared is the fewest sampled data transmissions (management
// datagrams aside) two files must share to be capture points of the same
// traffic.
const MinShared = 8

// DefaultSamples is the number of transmissions a Sampler keeps.
const DefaultSamples = 1 << 16

// Sampler keeps a consistent sample of one file's transmissions: a
// transmission is kept when the low Level bits of its hash are zero, and
// Level rises (halving the sample) whenever more than Max are kept, so
// memory stays bounded whatever the file's size and the same
// transmissions are kept in every file.
type Sampler struct {
	max   int
	level uint
	keys  map[Key]sample
	first time.Time
	last  time.Time
	any   bool
}

type sample struct {
	hash    uint64
	t       int64 // ns since the Unix epoch
	icrc    uint32
	hasICRC bool
	count   uint32 // transmissions with this key (resends): ambiguous when > 1
}

// NewSampler returns a sampler keeping about max transmissions (≤ 0:
// DefaultSamples).
func NewSampler(max int) *Sampler {
	if max <= 0 {
		max = DefaultSamples
	}
	return &Sampler{max: max, keys: make(map[Key]sample)}
}

// Add samples one packet of the file (in file order). A nil Sampler
// ignores it.
func (s *Sampler) Add(p *analyze.Packet) {
	if s == nil || p == nil {
		return
	}
	if !s.any || p.Time.Before(s.first) {
		s.first = p.Time
	}
	if !s.any || p.Time.After(s.last) {
		s.last = p.Time
	}
	s.any = true
	sg, ok := sightingOf(p)
	if !ok {
		return
	}
	h := sg.key.hash()
	if h&(1<<s.level-1) != 0 {
		return
	}
	if old, ok := s.keys[sg.key]; ok {
		old.count++
		s.keys[sg.key] = old
		return
	}
	s.keys[sg.key] = sample{hash: h, t: p.Time.UnixNano(), icrc: sg.icrc, hasICRC: sg.hasICRC, count: 1}
	for len(s.keys) > s.max {
		s.level++
		for k, v := range s.keys {
			if v.hash&(1<<s.level-1) != 0 {
				delete(s.keys, k)
			}
		}
	}
}

// Reset empties the Sampler, for another file: it keeps about as many
// transmissions as NewSampler's, in the room it has.
func (s *Sampler) Reset() {
	clear(s.keys)
	s.level, s.first, s.last, s.any = 0, time.Time{}, time.Time{}, false
}

// Span returns the file's first and last packet times (false when empty).
func (s *Sampler) Span() (first, last time.Time, ok bool) { return s.first, s.last, s.any }

// Offset is a file's clock offset: how far its clock runs ahead of the
// reference file's, its error bound and how it was found.
type Offset struct {
	Offset time.Duration
	// Error bounds |Offset - true offset| (MethodTwoWay, from the
	// minimum delays), 0 for the reference and overrides, -1 when unknown.
	Error  time.Duration
	Method string
	// Shared is the number of sampled transmissions the estimate used.
	Shared int
}

// pairEstimate is the offset of file j from file i (t_j - t_i for one
// instant) with its bound.
type pairEstimate struct {
	off, err float64
	method   string
	shared   int
}

// EstimateOffsets estimates each file's clock offset from the first's
// (see EstimateClocks). The second result says whether any two files are
// capture points of the same traffic (false: the files never meet).
func EstimateOffsets(samplers []*Sampler, overrides []*time.Duration) ([]Offset, bool) {
	e := EstimateClocks(samplers, overrides)
	return e.Offsets, len(e.Groups) > 0
}

// Estimate is what EstimateClocks finds.
type Estimate struct {
	// Offsets are the files' clock offsets, by file.
	Offsets []Offset
	// Groups are the sets of files that are capture points of one traffic
	// (linked by pairs of files that meet), each in file order, ordered by
	// their first file. A file that meets no other is in no group.
	Groups [][]int
	// Apart are the pairs of files that share transmissions (MinShared or
	// more) but do not meet, and why: the evidence against their being
	// points of one traffic.
	Apart []Apart
}

// Apart is a pair of files (indices A < B) that share transmissions but
// are not capture points of one traffic, and why.
type Apart struct {
	A, B   int
	counts pairCounts
}

// Why says why the pair is apart, the files named a and b.
func (p Apart) Why(a, b string) string { return p.counts.why(a, b) }

// Mostly says whether the two share at least 1/MinSharedRatio of the
// smaller one's sampled transmissions, as points of one traffic would:
// more than the few a rotation's next piece may share with the piece
// before it (a resend of its last packets).
func (p Apart) Mostly() bool { return p.counts.sharesMost() }

// EstimateClocks estimates each file's clock offset from the first's and
// groups the files that are capture points of the same traffic.
// overrides (may be nil; index by file) replace estimates. A file linked
// by no chain of pair estimates to the first file or to an override
// gets MethodNone and offset 0 when it is the first of its group (or in
// none), and its offset from that file otherwise.
func EstimateClocks(samplers []*Sampler, overrides []*time.Duration) Estimate {
	level := uint(0)
	for _, s := range samplers {
		level = max(level, s.level)
	}
	return estimateClocks(samplers, overrides, level)
}

// estimateClocks is EstimateClocks of the samplers' transmissions kept
// at level (no lower than any sampler's).
func estimateClocks(samplers []*Sampler, overrides []*time.Duration, level uint) Estimate {
	n := len(samplers)
	lists, flows := sampledLists(samplers, level)
	sc := newPairScratch(flows)
	// est[i] are file i's pair estimates, by the other file's index.
	est := make([][]pairEdge, n)
	var apart []Apart
	group := make([]int, n) // union-find parent
	for i := range group {
		group[i] = i
	}
	root := func(i int) int {
		for group[i] != i {
			group[i] = group[group[i]]
			i = group[i]
		}
		return i
	}
	hashes := func(yield func(int, uint64) bool) {
		for f, l := range lists {
			for k := range l {
				if !yield(f, l[k].hash) {
					return
				}
			}
		}
	}
	for _, p := range candidatePairs(n, hashes) {
		i, j := p[0], p[1]
		e, c := estimatePair(lists[i], lists[j], sc)
		if e == nil && c.shared >= MinShared {
			apart = append(apart, Apart{A: i, B: j, counts: c})
		}
		if e != nil {
			est[i] = append(est[i], pairEdge{j, e})
			est[j] = append(est[j], pairEdge{i, &pairEstimate{off: -e.off, err: e.err, method: e.method, shared: e.shared}})
			ri, rj := root(i), root(j)
			group[max(ri, rj)] = min(ri, rj)
		}
	}
	var groups [][]int
	at := map[int]int{} // root → index in groups
	for i := range n {
		r := root(i)
		k, ok := at[r]
		if !ok {
			k = len(groups)
			at[r] = k
			groups = append(groups, nil)
		}
		groups[k] = append(groups[k], i)
	}
	groups = slices.DeleteFunc(groups, func(g []int) bool { return len(g) < 2 })

	out := make([]Offset, n)
	known := make([]bool, n)
	errs := make([]float64, n) // accumulated error; +Inf unknown
	for i := range out {
		out[i].Method = MethodNone
		errs[i] = math.Inf(1)
	}
	if n > 0 {
		out[0] = Offset{Method: MethodReference}
		known[0], errs[0] = true, 0
	}
	for i, o := range overrides {
		if o != nil && i < n {
			out[i] = Offset{Offset: *o, Method: MethodOverride}
			known[i], errs[i] = true, 0
		}
	}
	for {
		grow(est, out, known, errs)
		// A group that neither the reference nor an override reaches
		// keeps its first file's clock as is (MethodNone).
		seeded := false
		for _, g := range groups {
			if !slices.ContainsFunc(g, func(i int) bool { return known[i] }) {
				known[g[0]], errs[g[0]] = true, 0
				seeded = true
				break
			}
		}
		if !seeded {
			break
		}
	}
	return Estimate{Offsets: out, Groups: groups, Apart: apart}
}

// pairEdge is a pair estimate of one file's clock from another's: the
// offset of file to from the file whose edge it is.
type pairEdge struct {
	to  int
	est *pairEstimate
}

// grow extends the known offsets along the pair estimates (est, each
// file's in the order of the other file's index), each time taking the
// unknown file whose best estimate from a known one has the smallest
// error (a tree of pair estimates: errors add along its branches). Ties
// go to the lowest file indices.
func grow(est [][]pairEdge, out []Offset, known []bool, errs []float64) {
	n := len(est)
	for {
		bi, bj := -1, -1
		var e *pairEstimate // bi's estimate of bj
		best := math.Inf(1)
		for i := range n {
			if !known[i] {
				continue
			}
			for _, edge := range est[i] {
				if known[edge.to] {
					continue
				}
				ee := edge.est.err
				if ee < 0 {
					ee = 1e18
				}
				if c := errs[i] + ee; bi < 0 || c < best {
					bi, bj, e, best = i, edge.to, edge.est, c
				}
			}
		}
		if bi < 0 {
			return
		}
		known[bj] = true
		errs[bj] = best
		o := Offset{Offset: out[bi].Offset + time.Duration(math.Round(e.off)), Method: e.method, Shared: e.shared}
		if e.err < 0 || out[bi].Error < 0 {
			o.Error = -1
		} else {
			o.Error = out[bi].Error + time.Duration(math.Ceil(e.err))
		}
		out[bj] = o
	}
}

// flowDelta is the range of t_j - t_i over one flow's shared packets.
type flowDelta struct{ lo, hi int64 }

// splitOffset estimates the offset from the flows' delta ranges (see
// estimatePair). It sorts fs by (lo, hi), a total order on the values: the
// flows come from a map, and the result must not depend on the order in
// which they were found (flows tied on lo with different hi would
// otherwise move the split from run to run).
func splitOffset(fs []flowDelta, shared int) *pairEstimate {
	slices.SortFunc(fs, func(x, y flowDelta) int {
		return cmp.Or(cmp.Compare(x.lo, y.lo), cmp.Compare(x.hi, y.hi))
	})
	// Choose the split k (lower = fs[:k]) with max(hi of lower) ≤ min(lo
	// of upper) and both groups present, the widest gap when several fit
	// (equal delays in both directions put the offset in its middle).
	prefixHi := make([]int64, len(fs)+1)
	prefixHi[0] = math.MinInt64
	for i, f := range fs {
		prefixHi[i+1] = max(prefixHi[i], f.hi)
	}
	bestK, bestGap := -1, int64(-1)
	for k := 1; k < len(fs); k++ {
		if gap := fs[k].lo - prefixHi[k]; gap >= 0 && gap > bestGap {
			bestK, bestGap = k, gap
		}
	}
	if bestK > 0 {
		lo, hi := float64(prefixHi[bestK]), float64(fs[bestK].lo)
		return &pairEstimate{off: (lo + hi) / 2, err: (hi - lo) / 2, method: MethodTwoWay, shared: shared}
	}
	// One direction only (or flows that overlap: no clean split). If every
	// delta has one sign relative to the smallest spread, take the bound
	// with a zero minimum delay.
	minLo, maxHi := fs[0].lo, prefixHi[len(fs)]
	if math.Abs(float64(minLo)) <= math.Abs(float64(maxHi)) {
		return &pairEstimate{off: float64(minLo), err: -1, method: MethodOneWay, shared: shared}
	}
	return &pairEstimate{off: float64(maxHi), err: -1, method: MethodOneWay, shared: shared}
}
