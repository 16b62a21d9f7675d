package nic

// Capture sides.
const (
	SideRequester = "requester"
	SideResponder = "responder"
	SideMirror    = "mirror"
	SideUnknown   = "unknown"
)

// NIC is the NIC behaviour of a request flow and its response flow.
type NIC struct {
	// CaptureSide is where the capture appears to be taken: requester,
	// responder, mirror or unknown; CaptureSideReason says why.
	CaptureSide       string `json:"capture_side"`
	CaptureSideReason string `json:"capture_side_reason"`
	// NAKResendNs: NAK (PSN sequence error) → first resend; requester side.
	NAKResendNs *Figure `json:"nak_resend_ns,omitempty"`
	// TimeoutNs: resend with no NAK before it → time since the last
	// transmission of its PSN.
	TimeoutNs *Figure `json:"timeout_ns,omitempty"`
	// NegotiatedTimeoutNs is the Local ACK Timeout of the connection's CM
	// REQ (4.096 µs × 2^timeout); nil when unknown or infinite (0).
	NegotiatedTimeoutNs *int64 `json:"negotiated_timeout_ns,omitempty"`
	// RNRResendNs: RNR NAK → resend; requester side.
	RNRResendNs *Figure `json:"rnr_resend_ns,omitempty"`
	// CNPIntervalNs: between two CNPs to this flow's sender QP.
	CNPIntervalNs *Figure `json:"cnp_interval_ns,omitempty"`
	// ECNToCNPNs: ECN-CE marked request → the next CNP; responder side.
	ECNToCNPNs *Figure `json:"ecn_to_cnp_ns,omitempty"`
	// ResponseLatencyNs: request → its ACK; responder side.
	ResponseLatencyNs *Figure `json:"response_latency_ns,omitempty"`
	// NAKResendSeenNs, RNRResendSeenNs and ECNToCNPSeenNs are those waits
	// as the capture saw them where its side does not make them the NIC's
	// own (a NAK and its resend away from the requester, a CE mark and its
	// CNP away from the responder): the gap between the two packets at the
	// capture point, which also holds the path between it and the NIC.
	// Absent when the figure itself is given, or has no sample.
	NAKResendSeenNs *Figure `json:"nak_resend_seen_ns,omitempty"`
	RNRResendSeenNs *Figure `json:"rnr_resend_seen_ns,omitempty"`
	ECNToCNPSeenNs  *Figure `json:"ecn_to_cnp_seen_ns,omitempty"`
	// GoBackNViolations counts resends that restarted at another PSN than
	// the NAK's or skipped PSNs.
	GoBackNViolations uint64 `json:"go_back_n_violations"`
	// TimeoutResends counts resend episodes with no NAK or RNR NAK before.
	TimeoutResends uint64 `json:"timeout_resends"`
	// RNREarly counts resends sooner than the RNR timer.
	RNREarly uint64 `json:"rnr_early"`
	// CNPs counts CNPs to this flow's sender QP; CNPTooClose those closer
	// than half the NIC's minimum interval.
	CNPs        uint64 `json:"cnps"`
	CNPTooClose uint64 `json:"cnp_too_close"`
	// CNPNoSlowdown counts CNPs after which the sender did not slow down.
	CNPNoSlowdown uint64 `json:"cnp_no_slowdown"`
	// RequestsPerACK is request packets per ACK (coalescing); nil
	// without ACKs.
	RequestsPerACK *float64 `json:"requests_per_ack,omitempty"`
	// RateBeforeCNPBps and RateAfterCNPBps are the sender's wire rate over
	// the 8 requests before and after each CNP.
	RateBeforeCNPBps *Figure `json:"rate_before_cnp_bps,omitempty"`
	RateAfterCNPBps  *Figure `json:"rate_after_cnp_bps,omitempty"`

	// For Merge.
	stats             [figures]*stat // nil: no sample (most flows have none: a report of many flows holds no empty figures)
	up, down          uint64         // side evidence: upstream / downstream of the loss or marking
	reqPackets, acks  uint64
	negotiated        bool
	hadCNPs, hadECNCE bool
}

// In is what a request flow's report reads besides the stage's state.
type In struct {
	Requests uint64 // the flow's request packets
	ACKs     uint64 // the ACKs of its reverse flow
	// ACKTimeout is the Local ACK Timeout of its connection's CM REQ
	// (4.096 µs × 2^ACKTimeout); 0 when unknown or infinite.
	ACKTimeout uint8
}

// HasFacts says the report of f has facts to give (Report): the rate
// window after its last CNP is open, or it has CNP intervals.
func (f *Flow) HasFacts() bool {
	n := f.s
	return n != nil && n.events != nil && (n.afterOn || n.cands != nil)
}

// Report builds the NIC object of f (nil when the stage does not follow
// it) and the facts only the end can tell: CNPs closer than half the
// NIC's minimum interval, and the rate after the last CNP. It writes the
// object into reuse when not nil (all of it, and only it: the figures
// are new), else into a new one.
func (s *Stage) Report(f *Flow, in In, reuse *NIC) (*NIC, []Fact) {
	if !f.Has() {
		return nil, nil
	}
	// A flow of one request has no state yet, and one with no NAK,
	// resend, CNP or CE mark no event state: their figures are zero.
	var idle state
	var idleEv events
	n := f.s
	if n == nil {
		n = &idle
	}
	ev := n.events
	if ev == nil {
		ev = &idleEv
	}
	out := reuse
	if out == nil {
		out = new(NIC)
	}
	*out = NIC{GoBackNViolations: ev.gbn, TimeoutResends: ev.timeouts, RNREarly: ev.rnrEarly, CNPs: ev.cnps, CNPNoSlowdown: ev.noSlow,
		up: ev.up, down: ev.down, reqPackets: in.Requests, acks: in.ACKs, hadCNPs: ev.cnps > 0, hadECNCE: ev.ceSeen}
	for fig := range figures {
		if st := n.stat(fig); st != nil {
			c := st.clone()
			out.stats[fig] = &c
		}
	}
	var fs []Fact
	if ev.afterOn {
		if after, slow, ok := n.endAfter(false); ok {
			if out.stats[figRateAfter] == nil {
				out.stats[figRateAfter] = &stat{}
			}
			out.stats[figRateAfter].add(after)
			if slow {
				out.CNPNoSlowdown++
				fs = append(fs, Fact{Kind: NoSlowdown, Frame: ev.cnpFrame, Time: ev.cnpTime, Rate: after, Before: ev.before})
			}
		}
	}
	if fl := floor(out.stats[figCNPInterval]); fl > 0 && ev.cands != nil {
		for _, c := range ev.cands[:ev.candN] {
			if c.ns*2 < fl {
				out.CNPTooClose++
				fs = append(fs, Fact{Kind: TooClose, Frame: c.frame, Time: c.t, Wait: c.ns, Ref: c.prev, Limit: fl})
			}
		}
	}
	if in.ACKTimeout > 0 {
		out.negotiated = true
		v := int64(4096) << in.ACKTimeout
		out.NegotiatedTimeoutNs = &v
	}
	out.settle()
	return out, fs
}

// Clone returns a copy of o that shares no figure with it.
func (o *NIC) Clone() *NIC {
	n := *o
	for i, st := range n.stats {
		if st != nil {
			c := st.clone()
			n.stats[i] = &c
		}
	}
	return &n
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

// Merge adds the NIC figures of the next part, b, to a, and returns
// a (b when a is nil). Samples add up (exact
// medians up to exact samples, histograms beyond); an event whose two
// ends fall on either side of the seam (a NAK and its resend, two CNPs, a
// CE mark and its CNP, a rate window) is not measured.
func Merge(a, b *NIC) *NIC {
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
			a.stats[i] = &stat{}
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
