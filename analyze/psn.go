package analyze

import "github.com/roce-dissect/roce-dissect/analyze/internal/psn"

// PSNs are 24-bit serial numbers: they wrap, and compare by the sign of
// their 24-bit difference (package psn).

const psnMask = psn.Mask

// psnDiff returns a − b as a signed 24-bit serial difference.
func psnDiff(a, b uint32) int32 { return psn.Diff(a, b) }

// psnAdd returns p + n modulo 2^24.
func psnAdd(p uint32, n int64) uint32 { return psn.Add(p, n) }

// psnGap is a range of PSNs not seen, [from, to], with the frame where the
// jump over it was seen.
type psnGap struct {
	from, to uint32
	frame    uint64
}

func (g psnGap) count() uint32 { return uint32(psnDiff(g.to, g.from)) + 1 }

// maxGaps bounds the gap list of one flow; beyond it gaps are still
// counted in Missing but no longer listed or filled.
const maxGaps = 256

// psnTracker follows the request PSNs of one flow.
type psnTracker struct {
	first uint32   // PSN of the first request in capture order
	low   uint32   // lowest PSN seen
	high  uint32   // highest PSN seen
	next  uint32   // PSN expected next (high + span of the highest request)
	rare  *psnRare // allocated by the first gap or guessed READ span
	seen  bool
}

// psnRare is what a PSN tracker holds only once a PSN went missing or a
// READ span was guessed.
type psnRare struct {
	gaps      []psnGap
	guess     readGuess
	untracked uint64 // missing PSNs beyond maxGaps
}

// more returns the tracker's rare part, allocating it.
func (t *psnTracker) more() *psnRare {
	if t.rare == nil {
		t.rare = &psnRare{}
	}
	return t.rare
}

// gaps returns the PSN ranges still missing.
func (t *psnTracker) gaps() []psnGap {
	if t.rare == nil {
		return nil
	}
	return t.rare.gaps
}

// observation is what one request packet turned out to be.
type observation uint8

const (
	obsInOrder observation = iota
	obsGap                 // jumped ahead over missing PSNs
	obsFill                // filled a hole: out of order
	obsOld                 // PSN already seen: retransmission or duplicate
)

// observe records a request of span PSNs starting at psn and says what it
// was; for obsGap it also returns the gap it opened.
func (t *psnTracker) observe(psn uint32, span uint32, frame uint64) (observation, psnGap) {
	end := psnAdd(psn, int64(span))
	if !t.seen {
		t.seen, t.first, t.low, t.high, t.next = true, psn, psn, psn, end
		return obsInOrder, psnGap{}
	}
	if psnDiff(psn, t.low) < 0 && psnDiff(psn, t.next) < 0 {
		// Below every PSN seen: it came after higher ones (the capture
		// began inside a reordering); the PSNs between it and the lowest
		// seen are a hole.
		if psnDiff(end, t.low) < 0 {
			g := psnGap{from: end, to: psnAdd(t.low, -1), frame: frame}
			if r := t.more(); len(r.gaps) < maxGaps {
				r.gaps = append([]psnGap{g}, r.gaps...)
			} else {
				r.untracked += uint64(g.count())
			}
		}
		t.low = psn
		return obsFill, psnGap{}
	}
	d := psnDiff(psn, t.next)
	switch {
	case d == 0:
		t.high, t.next = psn, end
		return obsInOrder, psnGap{}
	case d > 0:
		g := psnGap{from: t.next, to: psnAdd(psn, -1), frame: frame}
		if r := t.more(); len(r.gaps) < maxGaps {
			r.gaps = append(r.gaps, g)
		} else {
			r.untracked += uint64(g.count())
		}
		t.high, t.next = psn, end
		return obsGap, g
	}
	if psnDiff(psn, t.high) > 0 {
		// Inside the span of the last READ request, above the highest
		// PSN: not a PSN a request can reuse; treat as seen.
		return obsOld, psnGap{}
	}
	if t.fill(psn, span) {
		return obsFill, psnGap{}
	}
	return obsOld, psnGap{}
}

// fill removes [psn, psn+span) from the gaps; it reports whether psn was in
// a gap.
func (t *psnTracker) fill(psn, span uint32) bool {
	r := t.rare
	if r == nil {
		return false
	}
	for i := range r.gaps {
		g := r.gaps[i]
		if psnDiff(psn, g.from) < 0 || psnDiff(psn, g.to) > 0 {
			continue
		}
		last := psnAdd(psn, int64(span)-1)
		if psnDiff(last, g.to) > 0 {
			last = g.to
		}
		switch {
		case psn == g.from && last == g.to:
			r.gaps = append(r.gaps[:i], r.gaps[i+1:]...)
		case psn == g.from:
			r.gaps[i].from = psnAdd(last, 1)
		case last == g.to:
			r.gaps[i].to = psnAdd(psn, -1)
		default:
			tail := psnGap{from: psnAdd(last, 1), to: g.to, frame: g.frame}
			r.gaps[i].to = psnAdd(psn, -1)
			if len(r.gaps) < maxGaps {
				r.gaps = append(r.gaps, psnGap{})
				copy(r.gaps[i+2:], r.gaps[i+1:])
				r.gaps[i+1] = tail
			} else {
				r.untracked += uint64(tail.count())
			}
		}
		return true
	}
	return false
}

// missing returns the number of PSNs never seen.
func (t *psnTracker) missing() uint64 {
	if t.rare == nil {
		return 0
	}
	n := t.rare.untracked
	for _, g := range t.rare.gaps {
		n += uint64(g.count())
	}
	return clampMissing(n)
}

// note records a PSN without judging it: first and highest only, for
// streams whose gaps mean nothing (see tracksPSN).
func (t *psnTracker) note(psn uint32) {
	if !t.seen {
		t.seen, t.first, t.low, t.high, t.next = true, psn, psn, psn, psnAdd(psn, 1)
		return
	}
	if psnDiff(psn, t.low) < 0 {
		t.low = psn
	}
	if psnDiff(psn, t.high) > 0 {
		t.high, t.next = psn, psnAdd(psn, 1)
	}
}

// anyIn reports whether a PSN in [from, to] is still missing.
func (t *psnTracker) anyIn(from, to uint32) bool {
	for _, g := range t.gaps() {
		if psnDiff(g.to, from) >= 0 && psnDiff(g.from, to) <= 0 {
			return true
		}
	}
	return false
}

// maxPairGap bounds the gaps jumpedOver looks in: a PSN inside a larger
// jump is weak evidence of which flow an ACK answers.
const maxPairGap = 1 << 12

// jumpedOver reports that psn is missing inside one of the listed gaps of
// at most maxPairGap PSNs.
func (t *psnTracker) jumpedOver(psn uint32) bool {
	for _, g := range t.gaps() {
		if g.count() <= maxPairGap && psnDiff(psn, g.from) >= 0 && psnDiff(g.to, psn) >= 0 {
			return true
		}
	}
	return false
}

// readGuess is a READ request whose span was guessed (1 PSN) because the
// path MTU was unknown.
type readGuess struct {
	active bool
	psn    uint32
	dmaLen uint32
}

// settleRead settles a guessed READ span with the PSN of the request that
// follows it: the jump is ceil(DMALength/PMTU) for the path MTU in use, so
// a jump one of the five path MTUs explains is no gap, and names the path
// MTU (returned; 0 when none or not settled). A longer jump is a gap after
// the longest possible span.
func (t *psnTracker) settleRead(psn uint32) int {
	if t.rare == nil || !t.rare.guess.active {
		return 0
	}
	g := t.rare.guess
	t.rare.guess.active = false
	if t.high != g.psn {
		return 0
	}
	d := psnDiff(psn, g.psn)
	if d <= 1 {
		return 0
	}
	var longest uint32
	for _, m := range [...]int{4096, 2048, 1024, 512, 256} {
		k := spanOf(g.dmaLen, m)
		if int32(k) == d {
			t.next = psnAdd(g.psn, int64(k))
			return m
		}
		if int32(k) < d {
			longest = max(longest, k)
		}
	}
	t.next = psnAdd(g.psn, int64(max(longest, 1)))
	return 0
}
