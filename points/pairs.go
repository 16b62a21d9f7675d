package points

import (
	"cmp"
	"iter"
	"math"
	"math/bits"
	"slices"

	"github.com/roce-dissect/roce-dissect/layers"
)

// sampledTx is a sampled data transmission of one file as estimatePair
// merges it: its flow numbered among the flows of all the files.
type sampledTx struct {
	hash       uint64 // of the flow and PSN (sample.hash)
	t          int64
	flow       uint32
	psn        uint32
	payloadLen int32
	icrc       uint32
	count      uint32
	ipID       uint16
	opcode     layers.Opcode
	hasICRC    bool
}

// samePSN orders transmissions by flow and PSN (the hash first, then the
// flow's number and the PSN), so that a flow and PSN's transmissions are
// next to each other and two files' lists merge in one pass.
func samePSN(a, b *sampledTx) int {
	switch {
	case a.hash != b.hash:
		return cmp.Compare(a.hash, b.hash)
	case a.flow != b.flow:
		return cmp.Compare(a.flow, b.flow)
	}
	return cmp.Compare(a.psn, b.psn)
}

// psnOf says whether two transmissions have one flow and PSN.
func psnOf(a, b *sampledTx) bool { return a.hash == b.hash && a.flow == b.flow && a.psn == b.psn }

// sameKey says whether two transmissions of one flow and PSN have the
// same key.
func sameKey(a, b *sampledTx) bool {
	return a.opcode == b.opcode && a.ipID == b.ipID && a.payloadLen == b.payloadLen
}

// sampledLists returns each sampler's data transmissions kept at level
// (management datagrams left out; none for a nil sampler), ordered by
// samePSN, and the number of flows among them.
func sampledLists(samplers []*Sampler, level uint) ([][]sampledTx, int) {
	mask := uint64(1)<<level - 1
	flows := map[flowKey]uint32{}
	lists := make([][]sampledTx, len(samplers))
	for i, s := range samplers {
		if s == nil {
			continue
		}
		l := make([]sampledTx, 0, len(s.keys))
		for k, v := range s.keys {
			if v.hash&mask != 0 || k.flow.management() {
				continue
			}
			f, ok := flows[k.flow]
			if !ok {
				f = uint32(len(flows))
				flows[k.flow] = f
			}
			l = append(l, sampledTx{hash: v.hash, t: v.t, flow: f, psn: k.psn, payloadLen: k.payloadLen,
				icrc: v.icrc, count: v.count, ipID: k.ipID, opcode: k.opcode, hasICRC: v.hasICRC})
		}
		slices.SortFunc(l, func(a, b sampledTx) int {
			return cmp.Or(samePSN(&a, &b), cmp.Compare(a.opcode, b.opcode), cmp.Compare(a.ipID, b.ipID), cmp.Compare(a.payloadLen, b.payloadLen))
		})
		lists[i] = l
	}
	return lists, len(flows)
}

// pairScratch is estimatePair's per-flow delta ranges, by flow number,
// kept between pairs (only the flows a pair touched are reset).
type pairScratch struct {
	deltas  []flowDelta
	seen    []bool
	touched []uint32
	shared  [][]uint32 // by flow: the PSNs whose key both files have
	withPSN []uint32   // the flows with some
	both    []psnArc   // by flow: the arc of PSNs both files saw (countMisses)
}

// psnArc is the PSNs from start to start+span, in the 24-bit PSN space,
// which wraps (a flow's PSNs past 0xFFFFFF go on from 0); ok: some.
type psnArc struct {
	start, span uint32
	ok          bool
}

// has says whether psn is on a.
func (a psnArc) has(psn uint32) bool { return a.ok && (psn-a.start)&0xFFFFFF <= a.span }

// arcOf returns the shortest arc that holds every PSN of psns (sorted
// in place): the circle without its largest gap between two of them.
func arcOf(psns []uint32) psnArc {
	slices.Sort(psns)
	n := len(psns)
	gap, at := uint32(0), n-1 // the largest gap is after psns[at]
	for i := range n {
		if g := (psns[(i+1)%n] - psns[i]) & 0xFFFFFF; g > gap || n == 1 {
			gap, at = g, i
		}
	}
	start := psns[(at+1)%n]
	return psnArc{start: start, span: (psns[at] - start) & 0xFFFFFF, ok: true}
}

func newPairScratch(flows int) *pairScratch {
	return &pairScratch{deltas: make([]flowDelta, flows), seen: make([]bool, flows), shared: make([][]uint32, flows), both: make([]psnArc, flows)}
}

// share notes that both files have a key of flow f at psn.
func (sc *pairScratch) share(f, psn uint32) {
	if len(sc.shared[f]) == 0 {
		sc.withPSN = append(sc.withPSN, f)
	}
	sc.shared[f] = append(sc.shared[f], psn)
}

// countMisses counts, in c, each list's transmissions within the PSNs
// both files saw of their flow (the arc of the PSNs whose key both
// have), given how many of them the other file has (matchedA,
// matchedB), and clears what it noted.
func (sc *pairScratch) countMisses(c *pairCounts, a, b []sampledTx, matchedA, matchedB int) {
	for _, f := range sc.withPSN {
		sc.both[f] = arcOf(sc.shared[f])
	}
	for k := range a {
		if sc.both[a[k].flow].has(a[k].psn) {
			c.inA++
		}
	}
	for k := range b {
		if sc.both[b[k].flow].has(b[k].psn) {
			c.inB++
		}
	}
	c.missA, c.missB = c.inA-matchedA, c.inB-matchedB
	for _, f := range sc.withPSN {
		sc.shared[f], sc.both[f] = sc.shared[f][:0], psnArc{}
	}
	sc.withPSN = sc.withPSN[:0]
}

// add widens flow f's delta range by d.
func (sc *pairScratch) add(f uint32, d int64) {
	if sc.seen[f] {
		sc.deltas[f].lo, sc.deltas[f].hi = min(sc.deltas[f].lo, d), max(sc.deltas[f].hi, d)
		return
	}
	sc.seen[f], sc.deltas[f] = true, flowDelta{lo: d, hi: d}
	sc.touched = append(sc.touched, f)
}

// find returns the index in g (transmissions of one flow and PSN) of the
// one with tx's key, -1 when none has it.
func find(g []sampledTx, tx *sampledTx) int {
	for k := range g {
		if sameKey(&g[k], tx) {
			return k
		}
	}
	return -1
}

// estimatePair estimates t_j - t_i from the transmissions both files
// sampled (a of file i, b of file j, from sampledLists), nil when the two
// files do not meet (see meets). Management datagrams (QP0, QP1) are
// left out: two runs of the same software between the same hosts can
// send byte-identical CM datagrams, which prove nothing, and their times
// (a DREQ at the end of runs of different lengths) say nothing of the
// clocks. A flow crosses the two points in one direction: its deltas are
// all the offset plus a delay (i upstream) or all the offset minus one (j
// upstream), so the flows split into a lower group (j first) whose
// largest delta bounds the offset from below and an upper group (i first)
// whose smallest delta bounds it from above.
//
// The lists are merged in one pass, a flow and PSN at a time: a
// transmission of one file conflicts when the other has its flow and PSN
// but not its key, or has its key with another ICRC; it is shared when
// the other has its key, each file once.
func estimatePair(a, b []sampledTx, sc *pairScratch) (*pairEstimate, pairCounts) {
	c := pairCounts{na: len(a), nb: len(b)}
	for _, f := range sc.touched {
		sc.seen[f] = false
	}
	sc.touched = sc.touched[:0]
	i, j := 0, 0
	matchedA, matchedB := 0, 0 // transmissions whose key the other file has
	for i < len(a) && j < len(b) {
		switch o := samePSN(&a[i], &b[j]); {
		case o < 0:
			i++
			continue
		case o > 0:
			j++
			continue
		}
		i2, j2 := i+1, j+1
		for i2 < len(a) && psnOf(&a[i2], &a[i]) {
			i2++
		}
		for j2 < len(b) && psnOf(&b[j2], &b[j]) {
			j2++
		}
		for y := j; y < j2; y++ {
			if find(a[i:i2], &b[y]) < 0 {
				c.conflicts++
			} else {
				matchedB++
			}
		}
		for x := i; x < i2; x++ {
			sa := &a[x]
			k := find(b[j:j2], sa)
			if k < 0 {
				c.conflicts++
				continue
			}
			matchedA++
			sc.share(sa.flow, sa.psn)
			sb := &b[j+k]
			if sa.hasICRC && sb.hasICRC && sa.icrc != sb.icrc {
				c.conflicts++
				continue
			}
			if sa.count != 1 || sb.count != 1 {
				continue
			}
			c.shared++
			sc.add(sa.flow, sb.t-sa.t)
		}
		i, j = i2, j2
	}
	sc.countMisses(&c, a, b, matchedA, matchedB)
	if !c.meets() {
		return nil, c
	}
	fs := make([]flowDelta, len(sc.touched))
	for k, f := range sc.touched {
		fs[k] = sc.deltas[f]
	}
	return splitOffset(fs, c.shared), c
}

// candidatePairs returns the pairs of the n files (i < j, in order) that
// may share MinShared sampled transmissions (hashes: each file's, by
// file), the only ones estimatePair can
// find to meet or to be apart: every pair of files whose lists have
// MinShared transmissions with one hash or more (a transmission of one
// file counted once for each of the other's with its hash, which counts
// no fewer than they share). Files that share none, as the pieces of a
// rotation or files a capture's frames alternate over, are never
// compared: the cost follows the transmissions the files share, not the
// pairs of files.
func candidatePairs(n int, hashes iter.Seq2[int, uint64]) [][2]int {
	if n < 2 {
		return nil
	}
	// Each transmission as its hash with the low bits replaced by its
	// file's index, sorted: a hash's transmissions are next to each
	// other, by file. Hashes that differ in those low bits alone make
	// more pairs candidates, never fewer.
	b := bits.Len(uint(n - 1))
	total := 0
	for range hashes {
		total++
	}
	keys := make([]uint64, 0, total)
	for f, h := range hashes {
		keys = append(keys, h>>b<<b|uint64(f))
	}
	slices.Sort(keys)
	counts := newPairTally(n)
	fileMask := uint64(1)<<b - 1
	for lo := 0; lo < len(keys); {
		hi := lo + 1
		for hi < len(keys) && keys[hi]>>b == keys[lo]>>b {
			hi++
		}
		for x := lo; x < hi; x++ {
			for y := x + 1; y < hi; y++ {
				if i, j := int(keys[x]&fileMask), int(keys[y]&fileMask); i != j {
					counts.add(i, j)
				}
			}
		}
		lo = hi
	}
	return counts.atLeast(MinShared)
}

// pairTally counts the hashes pairs of n files share (candidatePairs): in a table of every
// pair for a few files, in a map of the pairs counted for more.
type pairTally struct {
	n      int
	table  []uint8 // i*n+j, up to 255
	sparse map[[2]int]int
}

// denseFiles is the most files whose pairs pairTally keeps in a table.
const denseFiles = 256

func newPairTally(n int) *pairTally {
	if n <= denseFiles {
		return &pairTally{n: n, table: make([]uint8, n*n)}
	}
	return &pairTally{n: n, sparse: map[[2]int]int{}}
}

// add counts one for files i < j.
func (c *pairTally) add(i, j int) {
	if c.table != nil {
		if v := &c.table[i*c.n+j]; *v < math.MaxUint8 {
			*v++
		}
		return
	}
	c.sparse[[2]int{i, j}]++
}

// atLeast returns the pairs counted least or more, in order.
func (c *pairTally) atLeast(least int) [][2]int {
	var out [][2]int
	if c.table != nil {
		for k, v := range c.table {
			if int(v) >= least {
				out = append(out, [2]int{k / c.n, k % c.n})
			}
		}
		return out
	}
	for p, v := range c.sparse {
		if v >= least {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b [2]int) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	return out
}
