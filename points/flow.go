package points

// flowState is what the Matcher keeps per flow.
type flowState struct {
	key      flowKey
	requests bool // carries RC/XRC requests
	path     path // its points in path order and their links

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
