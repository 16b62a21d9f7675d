package analyze

import (
	"slices"
	"time"
)

// NIC behaviour: how the NICs of an RC/UC QP pair recover from loss and
// react to congestion, measured from the capture's timestamps (see
// docs/analysis.md, "NIC behaviour"). Everything is kept on the request
// (data) flow: the NAKs, RNR NAKs and CNPs of its reverse flow concern
// its sender. The state per flow is fixed in size (nicState, a ring of the
// last requests, and a few figures that switch to rttHist's histogram past
// nicExact samples); a packet of a flow costs no allocation.

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
	// the nicWindow requests before and after each CNP.
	RateBeforeCNPBps *Figure `json:"rate_before_cnp_bps,omitempty"`
	RateAfterCNPBps  *Figure `json:"rate_after_cnp_bps,omitempty"`

	// For Merge.
	stats             [nicFigures]*nicStat // nil: no sample (most flows have none: a report of many flows holds no empty figures)
	up, down          uint64               // side evidence: upstream / downstream of the loss or marking
	reqPackets, acks  uint64
	negotiated        bool
	hadCNPs, hadECNCE bool
}

// Figure summarises samples: nanoseconds (_ns) or bits per second (_bps).
type Figure struct {
	Samples uint64 `json:"samples"`
	Min     int64  `json:"min"`
	Median  int64  `json:"median"`
	Max     int64  `json:"max"`
}

// Figures of nicState.stats.
const (
	figNAK = iota
	figTimeout
	figRNR
	figCNPInterval
	figECNToCNP
	figRateBefore
	figRateAfter
	figResponse
	nicFigures
)

// nicExact is how many samples a figure keeps exactly (its median is
// exact up to that count; beyond it, within rttHist's 1/16).
const nicExact = 15

// nicStat is one figure's samples.
type nicStat struct {
	n        uint64
	min, max int64
	small    [nicExact]int64
	hist     *rttHist
}

func (s *nicStat) add(v int64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	if s.n < nicExact {
		s.small[s.n] = v
	} else {
		if s.hist == nil {
			s.hist = &rttHist{}
			for _, x := range s.small {
				s.hist.Add(x)
			}
		}
		s.hist.Add(v)
	}
	s.n++
}

func (s *nicStat) merge(o *nicStat) {
	if o.n == 0 {
		return
	}
	if o.n <= nicExact {
		for _, v := range o.small[:o.n] {
			s.add(v)
		}
		return
	}
	if s.hist == nil {
		s.hist = &rttHist{}
		for _, x := range s.small[:min(s.n, nicExact)] {
			s.hist.Add(x)
		}
	}
	s.hist.Merge(o.hist)
	if s.n == 0 || o.min < s.min {
		s.min = o.min
	}
	if s.n == 0 || o.max > s.max {
		s.max = o.max
	}
	s.n += o.n
}

func (s *nicStat) clone() nicStat {
	c := *s
	if s.hist != nil {
		h := s.hist.Clone()
		c.hist = &h
	}
	return c
}

// figure returns the summary; the median is the ((n+1)/2)-th smallest.
func (s *nicStat) figure() *Figure {
	if s == nil || s.n == 0 {
		return nil
	}
	f := &Figure{Samples: s.n, Min: s.min, Max: s.max}
	if s.n <= nicExact {
		v := s.small
		w := v[:s.n]
		slices.Sort(w)
		f.Median = w[(s.n+1)/2-1]
	} else {
		f.Median = s.hist.Median()
	}
	return f
}

// nicWindow is the number of requests the rate before and after a CNP is
// measured over.
const nicWindow = 8

// txRec is one request of the ring of the last ones sent.
type txRec struct {
	psn   uint32
	bytes uint32
	t     int64
}

// cnpCand is one of the smallest CNP intervals, kept with its frames for
// the cnp_too_close findings.
type cnpCand struct {
	ns          int64
	frame, prev uint64
	t           time.Time
}

const nicCands = 8

// nicState is the NIC behaviour state of a request flow: the ring of its
// last requests and its response latency, which every request flow with
// ACKs writes; the rest, which only NAKs, resends, CNPs and CE marks
// write, in nicEvents, allocated by the first of them (events).
type nicState struct {
	ring  [nicWindow]txRec
	ringN int
	ringH int
	resp  *nicStat // figResponse, allocated by its first sample
	*nicEvents
}

// nicEvents is the NIC state of a flow with NAKs, resends, CNPs or CE
// marks.
type nicEvents struct {
	stats [nicFigures]*nicStat // all but figResponse (nicState.resp), allocated by their first sample

	// The NAK or RNR NAK waiting for its resend.
	nakPending bool
	nakRNR     bool
	nakPSN     uint32
	nakT       int64
	nakTimer   int64 // RNR timer, ns
	nakFrame   uint64
	// The go-back-N resend in progress.
	epActive  bool
	epNAK     bool
	epExpect  uint32
	epEnd     uint32
	epFrame   uint64 // its NAK's frame
	gbn       uint64
	timeouts  uint64
	rnrEarly  uint64
	up, down  uint64
	cePending bool
	ceT       int64
	ceSeen    bool
	cnps      uint64
	lastCNP   int64
	lastFrame uint64
	cands     *[nicCands]cnpCand // allocated by the first CNP interval
	candN     int
	// The rate window after the last CNP.
	afterOn    bool
	afterN     int
	afterBytes uint64
	afterT0    int64
	afterLastT int64
	afterLastB uint32
	before     int64 // rate before that CNP, bps (0: unknown)
	cnpFrame   uint64
	cnpTime    time.Time
	noSlow     uint64
}

// add adds a sample to a figure.
func (n *nicState) add(fig int, v int64) {
	if v < 0 {
		return // measured across the capture's clock going back (wentBack): no figure
	}
	st := &n.resp
	if fig != figResponse {
		st = &n.events().stats[fig]
	}
	if *st == nil {
		*st = &nicStat{}
	}
	(*st).add(v)
}

// stat returns a figure's samples, nil when it has none.
func (n *nicState) stat(fig int) *nicStat {
	switch {
	case fig == figResponse:
		return n.resp
	case n.nicEvents == nil:
		return nil
	}
	return n.stats[fig]
}

// events returns the flow's NIC event state, allocating it.
func (n *nicState) events() *nicEvents {
	if n.nicEvents == nil {
		n.nicEvents = &nicEvents{}
	}
	return n.nicEvents
}

// push adds a request to the ring of the last ones sent.
func (n *nicState) push(r txRec) {
	n.ring[n.ringH] = r
	n.ringH = (n.ringH + 1) % nicWindow
	if n.ringN < nicWindow {
		n.ringN++
	}
}

// nicOf returns the NIC state of a request flow, allocating it: the
// first request of the flow, kept in the flow until then (nicFirst), goes
// into its ring.
func nicOf(f *flowState) *nicState {
	if f.nic == nil {
		f.nic = &nicState{}
		f.hasNIC = true
		if f.hasNICFirst {
			f.nic.ring[0] = f.nicFirst
			f.nic.ringH, f.nic.ringN = 1, 1
			f.hasNICFirst = false
		}
	}
	return f.nic
}
