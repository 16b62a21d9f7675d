package analyze

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/hist"
)

// nicFloor is the NIC's own minimum CNP interval: the smallest interval
// its CNPs show at least twice (within the histogram's 1/16), 0 when none.
func nicFloor(s *nicStat) int64 {
	if s == nil || s.n < 2 {
		return 0
	}
	var h rttHist
	if s.hist != nil {
		h = *s.hist
	} else {
		for _, v := range s.small[:s.n] {
			h.Add(v)
		}
	}
	for b, c := range h.Dense() {
		if c >= 2 {
			return hist.Low(b)
		}
	}
	return 0
}

// nicFindings returns the findings of nicReport without keeping its NIC
// object: most flows have none to give (no CNP), and building their NIC
// objects twice cost a report of 200,000 flows 600 MB of garbage.
func (a *Analyzer) nicFindings(f *flowState) []Finding {
	if n := f.nic; n == nil || n.nicEvents == nil || !n.afterOn && n.cands == nil {
		return nil
	}
	_, fs := a.nicReport(f, nil)
	return fs
}

// nicReport builds the NIC object of a request flow (nil when it has
// none) and the findings only the end can tell: CNPs closer than half the
// NIC's minimum interval, and the rate after the last CNP. It writes the
// object into reuse when not nil (all of it, and only it: the figures are
// new), else into a new one.
func (a *Analyzer) nicReport(f *flowState, reuse *NIC) (*NIC, []Finding) {
	if !f.hasNIC {
		return nil, nil
	}
	// A flow of one request has no NIC state yet, and one with no NAK,
	// resend, CNP or CE mark no event state: their figures are zero.
	var idle nicState
	var idleEv nicEvents
	n := f.nic
	if n == nil {
		n = &idle
	}
	ev := n.nicEvents
	if ev == nil {
		ev = &idleEv
	}
	out := reuse
	if out == nil {
		out = new(NIC)
	}
	*out = NIC{GoBackNViolations: ev.gbn, TimeoutResends: ev.timeouts, RNREarly: ev.rnrEarly, CNPs: ev.cnps, CNPNoSlowdown: ev.noSlow,
		up: ev.up, down: ev.down, reqPackets: f.requestPackets(), hadCNPs: ev.cnps > 0, hadECNCE: ev.ceSeen}
	for fig := range nicFigures {
		if st := n.stat(fig); st != nil {
			c := st.clone()
			out.stats[fig] = &c
		}
	}
	var fs []Finding
	if ev.afterOn {
		if after, slow, ok := a.endAfter(f, n, false); ok {
			if out.stats[figRateAfter] == nil {
				out.stats[figRateAfter] = &nicStat{}
			}
			out.stats[figRateAfter].add(after)
			if slow {
				out.CNPNoSlowdown++
				fs = append(fs, Finding{Frame: ev.cnpFrame, Time: ev.cnpTime, Kind: KindCNPNoSlowdown, Severity: SeverityWarning, Flow: f.flowID(), File: a.opts.File,
					Detail: fmt.Sprintf("sender rate %s after the CNP, %s before: no slowdown", bps(after), bps(ev.before))})
			}
		}
	}
	if floor := nicFloor(out.stats[figCNPInterval]); floor > 0 && ev.cands != nil {
		for _, c := range ev.cands[:ev.candN] {
			if c.ns*2 < floor {
				out.CNPTooClose++
				fs = append(fs, Finding{Frame: c.frame, Time: c.t, Kind: KindCNPTooClose, Severity: SeverityWarning, Flow: f.flowID(), File: a.opts.File,
					Detail: fmt.Sprintf("CNP %s after the CNP of %s; this NIC's CNPs are otherwise at least %s apart", time.Duration(c.ns), a.opts.Pieces.FrameName(c.prev), time.Duration(floor))})
			}
		}
	}
	if r := a.peerFlow(f); r != nil && r.resp != nil {
		out.acks = r.resp.ACKs
	}
	if f.conn >= 0 {
		if c := a.conns.list[f.conn]; c.ackTimeoutKnown && c.ackTimeout > 0 {
			out.negotiated = true
			v := int64(4096) << c.ackTimeout
			out.NegotiatedTimeoutNs = &v
		}
	}
	out.settle()
	return out, fs
}

// settle computes the public figures from the private state.
func (o *NIC) settle() {
	o.CaptureSide, o.CaptureSideReason = o.side()
	o.NAKResendNs, o.RNRResendNs, o.ECNToCNPNs, o.ResponseLatencyNs = nil, nil, nil, nil
	o.NAKResendSeenNs, o.RNRResendSeenNs, o.ECNToCNPSeenNs = nil, nil, nil
	o.TimeoutNs = o.stats[figTimeout].figure()
	o.CNPIntervalNs = o.stats[figCNPInterval].figure()
	o.RateBeforeCNPBps = o.stats[figRateBefore].figure()
	o.RateAfterCNPBps = o.stats[figRateAfter].figure()
	nak, rnr, ecn := o.stats[figNAK].figure(), o.stats[figRNR].figure(), o.stats[figECNToCNP].figure()
	if o.CaptureSide == SideRequester {
		o.NAKResendNs, o.RNRResendNs = nak, rnr
	} else {
		o.NAKResendSeenNs, o.RNRResendSeenNs = nak, rnr
	}
	if o.CaptureSide == SideResponder {
		o.ECNToCNPNs, o.ResponseLatencyNs = ecn, o.stats[figResponse].figure()
	} else {
		o.ECNToCNPSeenNs = ecn
	}
	o.RequestsPerACK = nil
	if o.acks > 0 {
		v := float64(o.reqPackets) / float64(o.acks)
		o.RequestsPerACK = &v
	}
}

// side infers the capture side from where the capture stands relative to
// the losses and the ECN marking.
func (o *NIC) side() (string, string) {
	up := o.up
	if o.hadCNPs && !o.hadECNCE {
		up++
	}
	switch {
	case up > 0 && o.down > 0:
		return SideMirror, "some losses or marks happened before the capture point and some after it"
	case up > 0:
		return SideRequester, "NAKed packets were captured before they were lost, or CNPs came with no ECN-marked request: the capture is upstream of the network"
	case o.down > 0:
		return SideResponder, "NAKed packets were never captured, or requests arrive ECN-CE marked: the capture is downstream of the network"
	}
	return SideUnknown, "no NAK, CNP or ECN mark tells where the capture was taken"
}

// mergeNIC adds the NIC figures of the next part. Samples add up (exact
// medians up to nicExact samples, histograms beyond); an event whose two
// ends fall on either side of the seam (a NAK and its resend, two CNPs, a
// CE mark and its CNP, a rate window) is not measured.
func mergeNIC(a, b *NIC) *NIC {
	switch {
	case b == nil:
		return a
	case a == nil:
		return b
	}
	for i, st := range b.stats {
		if st == nil {
			continue
		}
		if a.stats[i] == nil {
			a.stats[i] = &nicStat{}
		}
		a.stats[i].merge(st)
	}
	a.GoBackNViolations += b.GoBackNViolations
	a.TimeoutResends += b.TimeoutResends
	a.RNREarly += b.RNREarly
	a.CNPs += b.CNPs
	a.CNPTooClose += b.CNPTooClose
	a.CNPNoSlowdown += b.CNPNoSlowdown
	a.up += b.up
	a.down += b.down
	a.reqPackets += b.reqPackets
	a.acks += b.acks
	a.hadCNPs = a.hadCNPs || b.hadCNPs
	a.hadECNCE = a.hadECNCE || b.hadECNCE
	if a.NegotiatedTimeoutNs == nil {
		a.NegotiatedTimeoutNs = b.NegotiatedTimeoutNs
	}
	a.settle()
	return a
}
