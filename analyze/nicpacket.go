package analyze

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/layers"
)

// nicReqFlow returns the request flow a response or CNP flow concerns.
func (a *Analyzer) nicReqFlow(r *flowState, psn uint32) *flowState {
	if r.peer >= 0 {
		return a.flowList[r.peer]
	}
	return a.peerOf(r, psn)
}

// nicRequest follows a request of a flow: resends after NAKs, RNR NAKs
// and timeouts, the go-back-N episode, the rate window after a CNP.
func (a *Analyzer) nicRequest(f *flowState, p *Packet, obs observation, isDup bool, span uint32) {
	if f.transport != layers.TransportRC && f.transport != layers.TransportUC {
		return
	}
	t := p.Time.UnixNano()
	psn := p.BTH.PSN
	if f.nic == nil && !f.hasNIC && obs == obsInOrder && p.ECN != 3 {
		// The first request, in order and not CE-marked, only enters the
		// ring: kept in the flow, the NIC state is allocated by the next
		// event (an idle flow never needs it).
		f.hasNIC, f.hasNICFirst = true, true
		f.nicFirst = txRec{psn: psn, bytes: uint32(p.CarriedLength), t: t}
		return
	}
	n := nicOf(f)
	if n.nicEvents == nil {
		// No NAK, resend, CNP or CE mark so far: an in-order request, or
		// a capture duplicate, only enters the ring.
		if (obs != obsOld && obs != obsFill || isDup) && p.ECN != 3 {
			n.push(txRec{psn: psn, bytes: uint32(p.CarriedLength), t: t})
			return
		}
		n.events()
	}
	// A byte-identical repeat of the last request is a capture duplicate,
	// unless a NAK asked for it.
	back := (obs == obsOld || obs == obsFill) && (!isDup || n.nakPending)
	if back && !n.epActive {
		a.nicResend(f, n, p, obs, t)
	}
	if n.epActive && (!isDup || back) {
		a.nicEpisode(f, n, p, span)
	}
	if n.afterOn {
		a.nicAfterCNP(f, n, p, t)
	}
	n.push(txRec{psn: psn, bytes: uint32(p.CarriedLength), t: t})
	if p.ECN == 3 {
		n.markCE(t)
	}
}

// markCE notes a CE-marked request at t: the network marked it before
// the capture point, and the next CNP is timed from it.
func (n *nicState) markCE(t int64) {
	n.down++
	n.ceSeen = true
	if !n.cePending {
		n.cePending, n.ceT = true, t
	}
}

// nicResend begins a resend episode at request p (at t), a PSN sent
// before: after a NAK or an RNR NAK, times the resend against it; a hole
// filled without one is a reordering; else it is a timeout, timed against
// the first transmission when the ring still holds it.
func (a *Analyzer) nicResend(f *flowState, n *nicState, p *Packet, obs observation, t int64) {
	psn := p.BTH.PSN
	switch {
	case n.nakPending:
		a.nakResend(f, n, p, t)
	case obs == obsFill:
		// A hole filled with no NAK before it: a reordering, or (at the
		// responder) a resend of a request lost before the capture,
		// whose first transmission is not there to time it.
		n.epActive, n.epNAK, n.epEnd = true, false, f.psn.high
	default:
		n.timeouts++
		for i := range n.ringN {
			if r := n.ring[(n.ringH-1-i+2*nicWindow)%nicWindow]; r.psn == psn {
				n.add(figTimeout, t-r.t)
				break
			}
		}
		n.epActive, n.epNAK, n.epEnd = true, false, f.psn.high
	}
	n.epExpect = psn
}

// nakResend times the resend p (at t) answering the pending NAK or RNR NAK,
// with the findings of an RNR resend sent too early and of a go-back-N
// restarting elsewhere than at the NAKed PSN.
func (a *Analyzer) nakResend(f *flowState, n *nicState, p *Packet, t int64) {
	psn := p.BTH.PSN
	n.nakPending = false
	d := t - n.nakT
	switch {
	case n.nakRNR:
		n.add(figRNR, d)
		if d >= n.nakTimer || wentBack(n.nakT, t) {
			break
		}
		n.rnrEarly++
		if fd := a.finding(p, KindRNREarly, SeverityError, f); fd != nil {
			fd.Detail = fmt.Sprintf("PSN %d resent %s after the RNR NAK of %s, which asked for %s", psn, time.Duration(d), a.opts.Pieces.FrameName(n.nakFrame), time.Duration(n.nakTimer))
		}
	default:
		n.add(figNAK, d)
		if psn == n.nakPSN {
			break
		}
		n.gbn++
		if fd := a.finding(p, KindGoBackN, SeverityError, f); fd != nil {
			fd.Detail = fmt.Sprintf("resend after the NAK of %s restarted at PSN %d, not at the NAKed PSN %d", a.opts.Pieces.FrameName(n.nakFrame), psn, n.nakPSN)
		}
	}
	n.epActive, n.epNAK, n.epEnd, n.epFrame = true, !n.nakRNR, f.psn.high, n.nakFrame
}

// nicEpisode follows a resend episode with request p: go-back-N resends
// every PSN from the NAKed one up to the highest sent before the NAK, in
// order; one skipped is a finding, and the episode ends past that PSN or
// at anything else.
func (a *Analyzer) nicEpisode(f *flowState, n *nicState, p *Packet, span uint32) {
	psn := p.BTH.PSN
	switch {
	case psn == n.epExpect:
		n.epExpect = psnAdd(psn, int64(span))
	case n.epNAK && psnDiff(psn, n.epExpect) > 0 && psnDiff(n.epExpect, n.epEnd) <= 0:
		to := psnAdd(psn, -1)
		if psnDiff(to, n.epEnd) > 0 {
			to = n.epEnd
		}
		n.gbn++
		if fd := a.finding(p, KindGoBackN, SeverityError, f); fd != nil {
			fd.Detail = fmt.Sprintf("go-back-N after the NAK of %s skipped PSNs %d–%d, sent before the NAK", a.opts.Pieces.FrameName(n.epFrame), n.epExpect, to)
		}
		n.epActive = false
	default:
		n.epActive = false
	}
	if psnDiff(n.epExpect, n.epEnd) > 0 {
		n.epActive = false
	}
}

// nicAfterCNP adds request p (at t) to the rate window after a CNP, which
// closes after nicWindow requests.
func (a *Analyzer) nicAfterCNP(f *flowState, n *nicState, p *Packet, t int64) {
	if n.afterN == 0 {
		n.afterT0 = t
	} else {
		n.afterBytes += uint64(n.afterLastB)
	}
	n.afterLastT, n.afterLastB = t, uint32(p.CarriedLength)
	n.afterN++
	if n.afterN == nicWindow {
		a.endAfter(f, n, true)
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
func (a *Analyzer) endAfter(f *flowState, n *nicState, record bool) (after int64, slow bool, ok bool) {
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
			if fd := a.findingAt(n.cnpFrame, n.cnpTime, KindCNPNoSlowdown, SeverityWarning, f); fd != nil {
				fd.Detail = fmt.Sprintf("sender rate %s after the CNP, %s before: no slowdown", bps(after), bps(n.before))
			}
		}
	}
	return after, noSlow, true
}

func bps(v int64) string { return fmt.Sprintf("%.3g Gbit/s", float64(v)/1e9) }

// nicResponse follows a response of flow r: NAKs and RNR NAKs of the
// requests of its peer.
func (a *Analyzer) nicResponse(r *flowState, p *Packet) {
	if p.AETH == nil || p.AETH.IsACK() {
		return
	}
	rnr := p.AETH.IsRNRNAK()
	if !rnr && p.AETH.NAKCode() != layers.NAKPSNSequenceError {
		return
	}
	f := a.nicReqFlow(r, p.BTH.PSN)
	if f == nil || !f.hasNIC {
		return
	}
	n := nicOf(f)
	n.events()
	psn := p.BTH.PSN
	n.nakPending, n.nakRNR, n.nakPSN, n.nakT, n.nakFrame = true, rnr, psn, p.Time.UnixNano(), p.Frame
	n.epActive = false
	if rnr {
		n.nakTimer = int64(p.AETH.RNRTimer())
		return
	}
	// Was the NAKed PSN captured before the NAK? Then the capture is
	// upstream of the loss (at the requester); else downstream.
	t := &f.psn
	if t.seen && psnDiff(psn, t.low) >= 0 && psnDiff(psn, t.high) <= 0 && !t.anyIn(psn, psn) {
		n.up++
	} else {
		n.down++
	}
}

// nicCNP follows a CNP of flow c (to the QP of the request flow's sender).
func (a *Analyzer) nicCNP(c *flowState, p *Packet) {
	f := a.peerFlow(c)
	if f == nil {
		f = a.onlyRequester(c)
	}
	if f == nil || !f.hasNIC {
		return
	}
	n := nicOf(f)
	n.events()
	t := p.Time.UnixNano()
	if n.cnps > 0 {
		if d := t - n.lastCNP; !wentBack(n.lastCNP, t) {
			n.add(figCNPInterval, d)
			n.addCand(cnpCand{ns: d, frame: p.Frame, prev: n.lastFrame, t: p.Time})
		}
	}
	n.cnps++
	n.lastCNP, n.lastFrame = t, p.Frame
	if n.cePending {
		n.add(figECNToCNP, t-n.ceT)
		n.cePending = false
	}
	if !n.afterOn {
		n.before = 0
		if n.ringN >= 2 {
			var b uint64
			t0 := n.ring[(n.ringH-n.ringN+nicWindow)%nicWindow].t
			t1 := n.ring[(n.ringH-1+nicWindow)%nicWindow].t
			for i := 1; i < n.ringN; i++ {
				b += uint64(n.ring[(n.ringH-1-i+2*nicWindow)%nicWindow].bytes)
			}
			n.before = rateOf(b, t0, t1)
		}
		if n.before > 0 {
			n.add(figRateBefore, n.before)
		}
		n.afterOn, n.afterN, n.afterBytes, n.cnpFrame, n.cnpTime = true, 0, 0, p.Frame, p.Time
	}
}

// onlyRequester returns the request flow a CNP flow's CNPs concern when
// the flows are not paired yet (no CM handshake captured, no ACK seen):
// the only RC/UC request flow of the reverse direction, if there is one.
func (a *Analyzer) onlyRequester(c *flowState) *flowState {
	var found *flowState
	cands := a.reverse(c)
	for _, gi := range cands[:min(len(cands), maxPairCandidates)] {
		if g := a.flowList[gi]; g.hasNIC {
			if found != nil {
				return nil
			}
			found = g
		}
	}
	return found
}

// addCand keeps the nicCands smallest CNP intervals.
func (n *nicState) addCand(c cnpCand) {
	if n.cands == nil {
		n.cands = new([nicCands]cnpCand)
	}
	if n.candN < nicCands {
		n.cands[n.candN] = c
		n.candN++
		return
	}
	worst := 0
	for i := 1; i < nicCands; i++ {
		if n.cands[i].ns > n.cands[worst].ns {
			worst = i
		}
	}
	if c.ns < n.cands[worst].ns {
		n.cands[worst] = c
	}
}
