package nic

import "github.com/roce-dissect/roce-dissect/analyze/internal/psn"

// Stage follows the NIC behaviour of the request flows of one capture.
// Each flow holds its Flow; the stage holds the facts of the last event
// fed (Pending, Facts), for the caller to turn into findings.
type Stage struct {
	facts [2]Fact // a request ends at most an episode and a rate window
	n     int
}

// Pending says the last event fed left facts.
func (s *Stage) Pending() bool { return s.n > 0 }

// Facts returns the facts of the last event fed and forgets them: the
// slice is valid until the next event.
func (s *Stage) Facts() []Fact {
	fs := s.facts[:s.n]
	s.n = 0
	return fs
}

func (s *Stage) fact(f Fact) {
	if s.n < len(s.facts) {
		s.facts[s.n] = f
		s.n++
	}
}

// Order is where a request's PSN stood in its flow's PSN stream.
type Order uint8

// Orders of a request.
const (
	InOrder Order = iota // the PSN expected
	Gap                  // jumped ahead over missing PSNs
	Fill                 // filled a hole: out of order
	Old                  // a PSN already seen: a resend or a duplicate
)

// Request is a request packet of an RC or UC flow.
type Request struct {
	T     int64  // its time, Unix ns
	PSN   uint32 // its PSN
	Bytes uint32 // its length on the wire
	Span  uint32 // the PSNs it takes (a READ request's response packets)
	High  uint32 // the highest PSN of the flow's stream, with it
	Order Order
	Dup   bool // a byte-identical repeat of the flow's last request
	CE    bool // ECN CE marked
}

// Request follows a request of f: resends after NAKs, RNR NAKs and
// timeouts, the go-back-N episode, the rate window after a CNP.
func (s *Stage) Request(f *Flow, r Request) {
	if f.s == nil && !f.Has() && r.Order == InOrder && !r.CE {
		// The first request, in order and not CE-marked, only enters the
		// ring: kept in the flow, the state is allocated by the next
		// event (an idle flow never needs it).
		f.first = txRec{psn: r.PSN | held, bytes: r.Bytes, t: r.T}
		return
	}
	n := f.state() // the second request of a flow is quiet too, once it has a state
	if f.Quiet(r.T, r.PSN, r.Bytes, r.Order, r.Dup, r.CE) {
		return
	}
	n.ev()
	// A byte-identical repeat of the last request is a capture duplicate,
	// unless a NAK asked for it.
	back := (r.Order == Old || r.Order == Fill) && (!r.Dup || n.nakPending)
	if back && !n.epActive {
		s.resend(n, &r)
	}
	if n.epActive && (!r.Dup || back) {
		s.episode(n, &r)
	}
	if n.afterOn {
		s.afterCNP(n, &r)
	}
	n.push(txRec{psn: r.PSN, bytes: r.Bytes, t: r.T})
	if r.CE {
		n.markCE(r.T)
	}
}

// Quiet follows a request of f at t that only enters the ring of its
// last requests, and reports whether it was one: on a flow with a state
// and no NAK, resend, CNP or CE mark so far, a request in order, or a
// capture duplicate, and not CE-marked. Nearly every request is one, so
// the caller tries Quiet first and builds a Request (for Request) only
// for the others.
func (f *Flow) Quiet(t int64, psn, bytes uint32, o Order, dup, ce bool) bool {
	n := f.s
	if n == nil || n.events != nil || ce || (o == Old || o == Fill) && !dup {
		return false
	}
	n.push(txRec{psn: psn, bytes: bytes, t: t})
	return true
}

// markCE notes a CE-marked request at t: the network marked it before
// the capture point, and the next CNP is timed from it.
func (n *state) markCE(t int64) {
	n.down++
	n.ceSeen = true
	if !n.cePending {
		n.cePending, n.ceT = true, t
	}
}

// resend begins a resend episode at request r, a PSN sent before: after
// a NAK or an RNR NAK, times the resend against it; a hole filled
// without one is a reordering; else it is a timeout, timed against the
// first transmission when the ring still holds it.
func (s *Stage) resend(n *state, r *Request) {
	switch {
	case n.nakPending:
		s.nakResend(n, r)
	case r.Order == Fill:
		// A hole filled with no NAK before it: a reordering, or (at the
		// responder) a resend of a request lost before the capture,
		// whose first transmission is not there to time it.
		n.epActive, n.epNAK, n.epEnd = true, false, r.High
	default:
		n.timeouts++
		for i := range n.ringN {
			if x := n.ring[(n.ringH-1-i+2*window)%window]; x.psn == r.PSN {
				n.add(figTimeout, r.T-x.t)
				break
			}
		}
		n.epActive, n.epNAK, n.epEnd = true, false, r.High
	}
	n.epExpect = r.PSN
}

// nakResend times the resend r answering the pending NAK or RNR NAK,
// with the facts of an RNR resend sent too early and of a go-back-N
// restarting elsewhere than at the NAKed PSN.
func (s *Stage) nakResend(n *state, r *Request) {
	n.nakPending = false
	d := r.T - n.nakT
	switch {
	case n.nakRNR:
		n.add(figRNR, d)
		if d >= n.nakTimer || r.T < n.nakT {
			break
		}
		n.rnrEarly++
		s.fact(Fact{Kind: RNREarly, PSN: r.PSN, Wait: d, Ref: n.nakFrame, Limit: n.nakTimer})
	default:
		n.add(figNAK, d)
		if r.PSN == n.nakPSN {
			break
		}
		n.gbn++
		s.fact(Fact{Kind: Restart, Ref: n.nakFrame, PSN: r.PSN, From: n.nakPSN})
	}
	n.epActive, n.epNAK, n.epEnd, n.epFrame = true, !n.nakRNR, r.High, n.nakFrame
}

// episode follows a resend episode with request r: go-back-N resends
// every PSN from the NAKed one up to the highest sent before the NAK, in
// order; one skipped is a fact, and the episode ends past that PSN or at
// anything else.
func (s *Stage) episode(n *state, r *Request) {
	switch p := r.PSN; {
	case p == n.epExpect:
		n.epExpect = psn.Add(p, int64(r.Span))
	case n.epNAK && psn.Diff(p, n.epExpect) > 0 && psn.Diff(n.epExpect, n.epEnd) <= 0:
		to := psn.Add(p, -1)
		if psn.Diff(to, n.epEnd) > 0 {
			to = n.epEnd
		}
		n.gbn++
		s.fact(Fact{Kind: Skip, Ref: n.epFrame, From: n.epExpect, To: to})
		n.epActive = false
	default:
		n.epActive = false
	}
	if psn.Diff(n.epExpect, n.epEnd) > 0 {
		n.epActive = false
	}
}

// afterCNP adds request r to the rate window after a CNP, which closes
// after window requests.
func (s *Stage) afterCNP(n *state, r *Request) {
	if n.afterN == 0 {
		n.afterT0 = r.T
	} else {
		n.afterBytes += uint64(n.afterLastB)
	}
	n.afterLastT, n.afterLastB = r.T, r.Bytes
	n.afterN++
	if n.afterN == window {
		if after, slow, ok := n.endAfter(true); ok && slow {
			s.fact(Fact{Kind: NoSlowdown, Frame: n.cnpFrame, Time: n.cnpTime, Rate: after, Before: n.before})
		}
	}
}

// rateOf is the wire rate of packets over [t0, t1]: the bytes of all of
// them but the last, in bits per second; 0 when not measurable.
func rateOf(bytes uint64, t0, t1 int64) int64 {
	if t1 <= t0 {
		return 0
	}
	return int64(bytes * 8 * 1e9 / uint64(t1-t0))
}

// endAfter closes the rate window after a CNP; record says whether the
// figures are kept in the state (false: for a report only).
func (n *state) endAfter(record bool) (after int64, slow bool, ok bool) {
	if record {
		n.afterOn = false
	}
	if n.afterN < 2 {
		return 0, false, false
	}
	after = rateOf(n.afterBytes, n.afterT0, n.afterLastT)
	if after <= 0 {
		return 0, false, false
	}
	noSlow := n.before > 0 && after*16 >= n.before*15
	if record {
		n.add(figRateAfter, after)
		if noSlow {
			n.noSlow++
		}
	}
	return after, noSlow, true
}
