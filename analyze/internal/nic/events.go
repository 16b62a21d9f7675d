package nic

import "time"

// NAK is a NAK (PSN sequence error) or an RNR NAK of the reverse flow of
// a request flow.
type NAK struct {
	T     int64  // its time, Unix ns
	Frame uint64 // its frame
	PSN   uint32 // the PSN it names
	RNR   bool   // an RNR NAK
	Timer int64  // an RNR NAK's timer, ns
	// Captured says the request flow's PSN stream holds the NAKed PSN
	// (seen before the NAK, not missing): the capture is upstream of the
	// loss. Read for a NAK, not an RNR NAK.
	Captured bool
}

// NAK follows a NAK or RNR NAK concerning the requests of f; nothing
// when f is no request flow the stage follows.
func (s *Stage) NAK(f *Flow, k NAK) {
	if !f.Has() {
		return
	}
	n := f.state()
	n.ev()
	n.nakPending, n.nakRNR, n.nakPSN, n.nakT, n.nakFrame = true, k.RNR, k.PSN, k.T, k.Frame
	n.epActive = false
	if k.RNR {
		n.nakTimer = k.Timer
		return
	}
	// Was the NAKed PSN captured before the NAK? Then the capture is
	// upstream of the loss (at the requester); else downstream.
	if k.Captured {
		n.up++
	} else {
		n.down++
	}
}

// CNP follows a CNP to the sender QP of f, at t, frame frame; nothing
// when f is no request flow the stage follows.
func (s *Stage) CNP(f *Flow, t time.Time, frame uint64) {
	if !f.Has() {
		return
	}
	n := f.state()
	n.ev()
	ns := t.UnixNano()
	if n.cnps > 0 {
		if d := ns - n.lastCNP; ns >= n.lastCNP { // not across the clock going back
			n.add(figCNPInterval, d)
			n.addCand(cnpCand{ns: d, frame: frame, prev: n.lastFrame, t: t})
		}
	}
	n.cnps++
	n.lastCNP, n.lastFrame = ns, frame
	if n.cePending {
		n.add(figECNToCNP, ns-n.ceT)
		n.cePending = false
	}
	if !n.afterOn {
		n.before = 0
		if n.ringN >= 2 {
			var b uint64
			t0 := n.ring[(n.ringH-n.ringN+window)%window].t
			t1 := n.ring[(n.ringH-1+window)%window].t
			for i := 1; i < n.ringN; i++ {
				b += uint64(n.ring[(n.ringH-1-i+2*window)%window].bytes)
			}
			n.before = rateOf(b, t0, t1)
		}
		if n.before > 0 {
			n.add(figRateBefore, n.before)
		}
		n.afterOn, n.afterN, n.afterBytes, n.cnpFrame, n.cnpTime = true, 0, 0, frame, t
	}
}

// CE follows an ECN CE mark the network added to a request of f, seen
// at t (Unix ns) by a capture point downstream; nothing when f is no
// request flow the stage follows.
func (s *Stage) CE(f *Flow, t int64) {
	if !f.Has() {
		return
	}
	n := f.state()
	n.ev()
	n.markCE(t)
}

// Response adds a response latency of f: d ns from a request asking for
// an ACK to its ACK; nothing when f is no request flow the stage follows.
func (s *Stage) Response(f *Flow, d int64) {
	if f.Has() { // inlined: the check alone for a flow the stage does not follow
		f.response(d)
	}
}

func (f *Flow) response(d int64) { f.state().add(figResponse, d) }
