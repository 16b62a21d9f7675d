package analyze

import (
	"slices"
	"sort"
)

func mergeRequests(a, b *Requests) {
	a.Retransmitted += b.Retransmitted
	a.Duplicates += b.Duplicates
	a.OutOfOrder += b.OutOfOrder
	a.Packets += b.Packets
	if b.PSNFirst == nil {
		a.Missing = clampMissing(a.Missing + b.Missing)
		return
	}
	if a.PSNFirst == nil {
		pk, rt, dp, oo := a.Packets, a.Retransmitted, a.Duplicates, a.OutOfOrder
		*a = *b
		a.Packets, a.Retransmitted, a.Duplicates, a.OutOfOrder = pk, rt, dp, oo
		return
	}
	// Two captures of unrelated runs can share a flow key: a second part
	// whose PSNs are nowhere near the first part's is another stream, not
	// a continuation (no gap at the seam).
	if d := psnDiff(b.low, a.next); d > maxSeamJump || d < -maxSeamJump {
		a.Gaps = append(a.Gaps, b.Gaps...)
		a.Missing = clampMissing(a.Missing + b.Missing)
		if psnDiff(*b.PSNLast, *a.PSNLast) > 0 {
			last := *b.PSNLast
			a.PSNLast = &last
		}
		a.next = b.next
		return
	}
	// PSNs are missing when neither part saw them, between the first PSN
	// and the end of the later part: a jump at the seam is a gap, and PSNs
	// one part missed but the other saw are not.
	base := a.low
	if psnDiff(b.low, base) < 0 {
		base = b.low
	}
	off := func(p uint32) int64 { return int64(psnDiff(p, base)) }
	untracked := subSat(a.Missing, gapSum(a.Gaps)) + subSat(b.Missing, gapSum(b.Gaps))
	seen := append(seenSpans(a, off), seenSpans(b, off)...)
	end := max(off(a.next), off(b.next))
	var gaps []Gap
	cur := int64(0)
	for _, sp := range mergeSpans(seen) {
		if sp[0] > cur {
			gaps = append(gaps, gapBetween(cur, sp[0], base, a, b))
		}
		cur = max(cur, sp[1])
	}
	if end > cur {
		gaps = append(gaps, gapBetween(cur, end, base, a, b))
	}
	a.Gaps = gaps
	if a.Gaps == nil {
		a.Gaps = []Gap{}
	}
	a.Missing = clampMissing(untracked + gapSum(gaps))
	if psnDiff(*b.PSNLast, *a.PSNLast) > 0 {
		last := *b.PSNLast
		a.PSNLast = &last
	}
	if off(b.next) > off(a.next) {
		a.next = b.next
	}
	a.low = base
}

// reclassifyHead corrects the second part's first requests with what the
// first part saw: a request of a PSN the first part saw (a go-back-N
// resend right after the seam) is a retransmission, or a duplicate when it
// repeats the first part's last request byte for byte, and the messages
// and incomplete messages made of such requests are not news.
func reclassifyHead(a, b *Flow) {
	ar, br := &a.Requests, &b.Requests
	base := ar.low
	off := func(p uint32) int64 { return int64(psnDiff(p, base)) }
	spans := seenSpans(ar, off)
	inA := func(p uint32) bool {
		o := off(p)
		for _, sp := range spans {
			if o >= sp[0] && o < sp[1] {
				return true
			}
		}
		return false
	}
	cause := causeNone
	for i, e := range br.head {
		if !inA(e.psn) {
			break
		}
		if i == 0 {
			// The part before saw this PSN: the part begins inside a
			// resend episode, back to this PSN.
			l := br.ev.log()
			l.backs = append(slices.Clip(l.backs), psnRange{from: e.psn, to: *ar.PSNLast})
			br.ev.withLogs(l)
		}
		switch e.obs {
		case obsInOrder, obsGap:
		case obsFill:
			br.OutOfOrder--
		default:
			continue // already a retransmission or duplicate
		}
		if i == 0 && ar.hasLast && ar.lastKey == e.key {
			br.Duplicates++
			continue
		}
		br.Retransmitted++
		if cause == causeNone {
			cause = e.cause
			switch {
			case ar.ev.episode != causeNone:
				cause = ar.ev.episode // the resend began before the seam
			case ar.ev.openNAK != causeNone:
				cause = ar.ev.openNAK // the NAK came before the seam
			}
		}
		br.RetransmitCauses.count(cause)
	}
	for _, m := range br.headMsgs {
		if inA(m.from) && inA(m.to) {
			b.Messages.Count--
			b.Messages.Bytes -= m.bytes
			b.Messages.SizeBuckets = removeSizeBucket(b.Messages.SizeBuckets, m.bytes)
		}
	}
	for _, to := range br.pendingTo {
		if inA(to) {
			b.Messages.Incomplete--
		}
	}
	// A message still open at the end of the first part that the second
	// part's resend completed is not incomplete.
	if o := a.reqOpen; o.valid && !o.broken {
		for _, m := range br.headMsgs {
			if psnDiff(m.from, o.start) <= 0 && psnDiff(m.to, o.psn) >= 0 {
				a.Messages.Incomplete--
				a.reqOpen = seamMessage{}
				break
			}
		}
	}
}

// maxSeamJump is the largest PSN distance between two parts that Merge
// still reads as one stream continuing.
const maxSeamJump = 1 << 16

func gapSum(gs []Gap) uint64 {
	var n uint64
	for _, g := range gs {
		n += uint64(g.Count)
	}
	return n
}

// seenSpans returns the PSN spans a part saw, as [from, to) offsets: from
// its first PSN to the one it expected next, less its gaps.
func seenSpans(r *Requests, off func(uint32) int64) [][2]int64 {
	var out [][2]int64
	cur := off(r.low)
	for _, g := range r.Gaps {
		if from := off(g.From); from > cur {
			out = append(out, [2]int64{cur, from})
		}
		cur = off(g.To) + 1
	}
	if end := off(r.next); end > cur {
		out = append(out, [2]int64{cur, end})
	}
	return out
}

// mergeSpans sorts spans and joins those that overlap or touch.
func mergeSpans(sp [][2]int64) [][2]int64 {
	sort.Slice(sp, func(i, j int) bool { return sp[i][0] < sp[j][0] })
	var out [][2]int64
	for _, s := range sp {
		if n := len(out); n > 0 && s[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], s[1])
			continue
		}
		out = append(out, s)
	}
	return out
}

// gapBetween makes the gap [from, to) (offsets from base), with the frame
// of the gap of either part that begins it, else the first frame of the
// second part (a jump at the seam).
func gapBetween(from, to int64, base uint32, a, b *Requests) Gap {
	g := Gap{From: psnAdd(base, from), To: psnAdd(base, to-1), Count: uint32(to - from), Frame: b.firstFrame}
	for _, parts := range [][]Gap{a.Gaps, b.Gaps} {
		for _, og := range parts {
			if psnDiff(g.From, og.From) >= 0 && psnDiff(g.From, og.To) <= 0 {
				g.Frame = og.Frame
				return g
			}
		}
	}
	return g
}
