package analyze

import (
	"fmt"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/layers"
)

// NIC behaviour: how the NICs of an RC/UC QP pair recover from loss and
// react to congestion, measured from the capture's timestamps (see
// docs/analysis.md, "NIC behaviour"). Everything is kept on the request
// (data) flow: the NAKs, RNR NAKs and CNPs of its reverse flow concern
// its sender. The state per flow is fixed in size (nicState, a ring of the
// last requests, and a few figures that switch to rttHist's histogram past
// nicExact samples); a packet of a flow costs no allocation.

// Kinds of findings of NIC conformance.
const (
	// KindGoBackN is a go-back-N resend that did not restart at the NAKed
	// PSN, or skipped PSNs sent before the NAK.
	KindGoBackN = "go_back_n_violation"
	// KindRNREarly is a resend sooner after an RNR NAK than the timer the
	// RNR NAK advertised.
	KindRNREarly = "rnr_early"
	// KindCNPTooClose is a CNP closer to the previous CNP of its QP than
	// half the NIC's own minimum interval (the smallest interval its CNPs
	// show at least twice).
	KindCNPTooClose = "cnp_too_close"
	// KindCNPNoSlowdown is a sender whose rate after a CNP was not lower
	// than before it.
	KindCNPNoSlowdown = "cnp_no_slowdown"
)

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
	NAKResendNs *Figure `json:"nak_resend_ns"`
	// TimeoutNs: resend with no NAK before it → time since the last
	// transmission of its PSN.
	TimeoutNs *Figure `json:"timeout_ns"`
	// NegotiatedTimeoutNs is the Local ACK Timeout of the connection's CM
	// REQ (4.096 µs × 2^timeout); null when unknown or infinite (0).
	NegotiatedTimeoutNs *int64 `json:"negotiated_timeout_ns"`
	// RNRResendNs: RNR NAK → resend; requester side.
	RNRResendNs *Figure `json:"rnr_resend_ns"`
	// CNPIntervalNs: between two CNPs to this flow's sender QP.
	CNPIntervalNs *Figure `json:"cnp_interval_ns"`
	// ECNToCNPNs: ECN-CE marked request → the next CNP; responder side.
	ECNToCNPNs *Figure `json:"ecn_to_cnp_ns"`
	// ResponseLatencyNs: request → its ACK; responder side.
	ResponseLatencyNs *Figure `json:"response_latency_ns"`
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
	// RequestsPerACK is request packets per ACK (coalescing); null
	// without ACKs.
	RequestsPerACK *float64 `json:"requests_per_ack"`
	// RateBeforeCNPBps and RateAfterCNPBps are the sender's wire rate over
	// the nicWindow requests before and after each CNP.
	RateBeforeCNPBps *Figure `json:"rate_before_cnp_bps"`
	RateAfterCNPBps  *Figure `json:"rate_after_cnp_bps"`

	// For Merge.
	stats             [nicFigures]nicStat
	up, down          uint64 // side evidence: upstream / downstream of the loss or marking
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
				s.hist.add(x)
			}
		}
		s.hist.add(v)
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
			s.hist.add(x)
		}
	}
	s.hist.merge(o.hist)
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
		h := *s.hist
		c.hist = &h
	}
	return c
}

// figure returns the summary; the median is the ((n+1)/2)-th smallest.
func (s *nicStat) figure() *Figure {
	if s.n == 0 {
		return nil
	}
	f := &Figure{Samples: s.n, Min: s.min, Max: s.max}
	if s.n <= nicExact {
		v := s.small
		w := v[:s.n]
		slices.Sort(w)
		f.Median = w[(s.n+1)/2-1]
	} else {
		f.Median = s.hist.median()
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

// nicState is the NIC behaviour state of a request flow.
type nicState struct {
	ring  [nicWindow]txRec
	ringN int
	ringH int

	stats [nicFigures]*nicStat // allocated by their first sample

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
	cands     [nicCands]cnpCand
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
	if n.stats[fig] == nil {
		n.stats[fig] = &nicStat{}
	}
	n.stats[fig].add(v)
}

// nicOf returns the NIC state of a request flow, allocating it.
func nicOf(f *flowState) *nicState {
	if f.nic == nil {
		f.nic = &nicState{}
	}
	return f.nic
}

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
	n := nicOf(f)
	t := p.Time.UnixNano()
	psn := p.BTH.PSN
	// A byte-identical repeat of the last request is a capture duplicate,
	// unless a NAK asked for it.
	back := (obs == obsOld || obs == obsFill) && (!isDup || n.nakPending)
	if back && !n.epActive {
		switch {
		case n.nakPending:
			n.nakPending = false
			d := t - n.nakT
			if n.nakRNR {
				n.add(figRNR, d)
				if d < n.nakTimer {
					n.rnrEarly++
					a.addFinding(p, KindRNREarly, SeverityError, f.name(), fmt.Sprintf("PSN %d resent %s after the RNR NAK of frame %d, which asked for %s", psn, time.Duration(d), n.nakFrame, time.Duration(n.nakTimer)))
				}
			} else {
				n.add(figNAK, d)
				if psn != n.nakPSN {
					n.gbn++
					a.addFinding(p, KindGoBackN, SeverityError, f.name(), fmt.Sprintf("resend after the NAK of frame %d restarted at PSN %d, not at the NAKed PSN %d", n.nakFrame, psn, n.nakPSN))
				}
			}
			n.epActive, n.epNAK, n.epEnd, n.epFrame = true, !n.nakRNR, f.psn.high, n.nakFrame
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
	if n.epActive && (!isDup || back) {
		switch {
		case psn == n.epExpect:
			n.epExpect = psnAdd(psn, int64(span))
		case n.epNAK && psnDiff(psn, n.epExpect) > 0 && psnDiff(n.epExpect, n.epEnd) <= 0:
			to := psnAdd(psn, -1)
			if psnDiff(to, n.epEnd) > 0 {
				to = n.epEnd
			}
			n.gbn++
			a.addFinding(p, KindGoBackN, SeverityError, f.name(), fmt.Sprintf("go-back-N after the NAK of frame %d skipped PSNs %d–%d, sent before the NAK", n.epFrame, n.epExpect, to))
			n.epActive = false
		default:
			n.epActive = false
		}
		if psnDiff(n.epExpect, n.epEnd) > 0 {
			n.epActive = false
		}
	}
	// The rate window after a CNP.
	if n.afterOn {
		if n.afterN == 0 {
			n.afterT0 = t
		} else {
			n.afterBytes += uint64(n.afterLastB)
		}
		n.afterLastT, n.afterLastB = t, uint32(p.Length)
		n.afterN++
		if n.afterN == nicWindow {
			a.endAfter(f, n, true)
		}
	}
	n.ring[n.ringH] = txRec{psn: psn, bytes: uint32(p.Length), t: t}
	n.ringH = (n.ringH + 1) % nicWindow
	if n.ringN < nicWindow {
		n.ringN++
	}
	if p.ECN == 3 {
		n.down++
		n.ceSeen = true
		if !n.cePending {
			n.cePending, n.ceT = true, t
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
			a.addFindingAt(n.cnpFrame, n.cnpTime, KindCNPNoSlowdown, SeverityWarning, f.name(), fmt.Sprintf("sender rate %s after the CNP, %s before: no slowdown", bps(after), bps(n.before)))
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
	if f == nil || f.nic == nil {
		return
	}
	n := f.nic
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
	if f == nil || f.nic == nil {
		return
	}
	n := f.nic
	t := p.Time.UnixNano()
	if n.cnps > 0 {
		d := t - n.lastCNP
		n.add(figCNPInterval, d)
		n.addCand(cnpCand{ns: d, frame: p.Frame, prev: n.lastFrame, t: p.Time})
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
	cands := a.byHosts[hostsOf(c.key.dst, c.key.src)]
	for _, gi := range cands[:min(len(cands), maxPairCandidates)] {
		if g := a.flowList[gi]; g.nic != nil {
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

// addFindingAt records an anomaly of an earlier frame.
func (a *Analyzer) addFindingAt(frame uint64, t time.Time, kind, severity, flow, detail string) {
	if len(a.findings) >= a.opts.MaxFindings {
		a.dropped++
		return
	}
	a.findings = append(a.findings, Finding{Frame: frame, Time: t, Kind: kind, Severity: severity, Flow: flow, Detail: detail, File: a.opts.File})
	a.shard.noteFinding(a.pkt.Frame)
}

// nicFloor is the NIC's own minimum CNP interval: the smallest interval
// its CNPs show at least twice (within the histogram's 1/16), 0 when none.
func nicFloor(s *nicStat) int64 {
	if s.n < 2 {
		return 0
	}
	var h rttHist
	if s.hist != nil {
		h = *s.hist
	} else {
		for _, v := range s.small[:s.n] {
			h.add(v)
		}
	}
	for b, c := range h.counts {
		if c >= 2 {
			if b < 16 {
				return int64(b)
			}
			e := b/16 + 3
			return int64(16+b%16) << (e - 4)
		}
	}
	return 0
}

// nicReport builds the NIC object of a request flow (nil when it has
// none) and the findings only the end can tell: CNPs closer than half the
// NIC's minimum interval, and the rate after the last CNP.
func (a *Analyzer) nicReport(f *flowState) (*NIC, []Finding) {
	n := f.nic
	if n == nil {
		return nil, nil
	}
	out := &NIC{GoBackNViolations: n.gbn, TimeoutResends: n.timeouts, RNREarly: n.rnrEarly, CNPs: n.cnps, CNPNoSlowdown: n.noSlow,
		up: n.up, down: n.down, reqPackets: f.reqPackets, hadCNPs: n.cnps > 0, hadECNCE: n.ceSeen}
	for i, st := range n.stats {
		if st != nil {
			out.stats[i] = st.clone()
		}
	}
	var fs []Finding
	if n.afterOn {
		if after, slow, ok := a.endAfter(f, n, false); ok {
			out.stats[figRateAfter].add(after)
			if slow {
				out.CNPNoSlowdown++
				fs = append(fs, Finding{Frame: n.cnpFrame, Time: n.cnpTime, Kind: KindCNPNoSlowdown, Severity: SeverityWarning, Flow: f.name(), File: a.opts.File,
					Detail: fmt.Sprintf("sender rate %s after the CNP, %s before: no slowdown", bps(after), bps(n.before))})
			}
		}
	}
	if floor := nicFloor(&out.stats[figCNPInterval]); floor > 0 {
		for _, c := range n.cands[:n.candN] {
			if c.ns*2 < floor {
				out.CNPTooClose++
				fs = append(fs, Finding{Frame: c.frame, Time: c.t, Kind: KindCNPTooClose, Severity: SeverityWarning, Flow: f.name(), File: a.opts.File,
					Detail: fmt.Sprintf("CNP %s after the CNP of frame %d; this NIC's CNPs are otherwise at least %s apart", time.Duration(c.ns), c.prev, time.Duration(floor))})
			}
		}
	}
	if r := a.peerFlow(f); r != nil && r.resp != nil {
		out.acks = r.resp.ACKs
	}
	if f.conn >= 0 {
		if c := &a.conns.list[f.conn]; c.ackTimeoutKnown && c.ackTimeout > 0 {
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
	o.TimeoutNs = o.stats[figTimeout].figure()
	o.CNPIntervalNs = o.stats[figCNPInterval].figure()
	o.RateBeforeCNPBps = o.stats[figRateBefore].figure()
	o.RateAfterCNPBps = o.stats[figRateAfter].figure()
	switch o.CaptureSide {
	case SideRequester:
		o.NAKResendNs = o.stats[figNAK].figure()
		o.RNRResendNs = o.stats[figRNR].figure()
	case SideResponder:
		o.ECNToCNPNs = o.stats[figECNToCNP].figure()
		o.ResponseLatencyNs = o.stats[figResponse].figure()
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
	for i := range a.stats {
		a.stats[i].merge(&b.stats[i])
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
