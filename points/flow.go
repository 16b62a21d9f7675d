package points

// flowState is what the Matcher keeps per flow.
type flowState struct {
	key      flowKey
	n        int        // points
	requests bool       // carries RC/XRC requests
	pairs    []*pairAcc // by pair index, nil until used

	// Request flows: the highest request PSN sent, the acknowledgements
	// and resends of the last windows (for telling not-captured from
	// lost), and the misses not yet decided.
	sent    bool
	highest uint32
	acks    []event // acknowledged PSN rising over time
	ackOff  int
	resends []event
	resOff  int
	pending []pending
}

// event is an acknowledgement (PSN = highest acknowledged) or a resend.
type event struct {
	t   int64
	psn uint32
}

// pending is a miss waiting for an acknowledgement or a resend.
type pending struct {
	acc   *pairAcc
	o     int
	psn   uint32
	frame uint64
}

// pairIndex numbers the pair i < j of n points.
func pairIndex(n, i, j int) int { return i*(2*n-i-1)/2 + (j - i - 1) }

// pair returns the accumulator of points a and b (either order).
func (fs *flowState) pair(m *Matcher, a, b int) *pairAcc {
	i, j := min(a, b), max(a, b)
	k := pairIndex(m.n, i, j)
	if fs.pairs[k] == nil {
		fs.pairs[k] = &pairAcc{i: i, j: j, delays: reservoir{rng: uint64(k)*0x9e3779b97f4a7c15 + 1}}
	}
	return fs.pairs[k]
}

// expect is the flow's recent delay from point a to point b (0 unknown).
func (fs *flowState) expect(a, b int) int64 {
	if a == b {
		return 0
	}
	i, j := min(a, b), max(a, b)
	acc := fs.pairs[pairIndex(fs.n, i, j)]
	if acc == nil || !acc.hasEWMA {
		return 0
	}
	if a == i {
		return acc.ewma
	}
	return -acc.ewma
}

// trim drops events older than limit.
func trim(ev []event, off int, limit int64) ([]event, int) {
	for off < len(ev) && ev[off].t < limit {
		off++
	}
	if off > 64 && off > len(ev)/2 {
		n := copy(ev, ev[off:])
		ev, off = ev[:n], 0
	}
	return ev, off
}

// acked records that the responder acknowledged psn (and all before it)
// at t, and decides the pending misses it covers.
func (fs *flowState) acked(m *Matcher, psn uint32, t int64) {
	if n := len(fs.acks); n > fs.ackOff && psnDiff(psn, fs.acks[n-1].psn) <= 0 {
		// no progress
	} else {
		fs.acks, fs.ackOff = trim(fs.acks, fs.ackOff, t-4*m.win)
		fs.acks = append(fs.acks, event{t: t, psn: psn})
	}
	keep := fs.pending[:0]
	for _, p := range fs.pending {
		if psnDiff(p.psn, psn) <= 0 {
			p.acc.notCaptured[p.o]++
			continue
		}
		keep = append(keep, p)
	}
	fs.pending = keep
}

// resent records a resend of psn at t; the pending misses of that PSN
// were lost.
func (fs *flowState) resent(m *Matcher, psn uint32, t int64) {
	fs.resends, fs.resOff = trim(fs.resends, fs.resOff, t-4*m.win)
	fs.resends = append(fs.resends, event{t: t, psn: psn})
	keep := fs.pending[:0]
	for _, p := range fs.pending {
		if p.psn == psn {
			p.acc.lose(p.o, p.psn, p.frame, m.maxPSNs)
			continue
		}
		keep = append(keep, p)
	}
	fs.pending = keep
}

// ackTime returns when psn was first acknowledged after t.
func (fs *flowState) ackTime(psn uint32, t int64) (int64, bool) {
	for _, a := range fs.acks[fs.ackOff:] {
		if a.t >= t && psnDiff(psn, a.psn) <= 0 {
			return a.t, true
		}
	}
	return 0, false
}

// resendTime returns when psn was first resent after t.
func (fs *flowState) resendTime(psn uint32, t int64) (int64, bool) {
	for _, r := range fs.resends[fs.resOff:] {
		if r.t > t && r.psn == psn {
			return r.t, true
		}
	}
	return 0, false
}
