package synth

import (
	"slices"

	"github.com/roce-dissect/roce-dissect/layers"
)

// The NIC behaviour of the truth, from what the generator did and when it
// wrote each frame: which requests are resends and why (pkt.resend),
// which NAK they answer, which CNP is one the NIC's rate limit should have
// suppressed (pkt.extraCNP), and where the tap stands relative to the
// losses and the ECN marks. Timestamps are those written (nic.go,
// writtenTime).

// NIC is the expected nic object of a request flow (docs/json.md).
type NIC struct {
	CaptureSide         string   `json:"capture_side"`
	NAKResendNs         *Figure  `json:"nak_resend_ns"`
	TimeoutNs           *Figure  `json:"timeout_ns"`
	NegotiatedTimeoutNs *int64   `json:"negotiated_timeout_ns"`
	RNRResendNs         *Figure  `json:"rnr_resend_ns"`
	CNPIntervalNs       *Figure  `json:"cnp_interval_ns"`
	ECNToCNPNs          *Figure  `json:"ecn_to_cnp_ns"`
	ResponseLatencyNs   *Figure  `json:"response_latency_ns"`
	GoBackNViolations   int      `json:"go_back_n_violations"`
	TimeoutResends      int      `json:"timeout_resends"`
	RNREarly            int      `json:"rnr_early"`
	CNPs                int      `json:"cnps"`
	CNPTooClose         int      `json:"cnp_too_close"`
	CNPNoSlowdown       int      `json:"cnp_no_slowdown"`
	RequestsPerACK      *float64 `json:"requests_per_ack"`
	RateBeforeCNPBps    *Figure  `json:"rate_before_cnp_bps"`
	RateAfterCNPBps     *Figure  `json:"rate_after_cnp_bps"`
}

// Figure summarises samples; the median is the ((n+1)/2)-th smallest.
type Figure struct {
	Samples int   `json:"samples"`
	Min     int64 `json:"min"`
	Median  int64 `json:"median"`
	Max     int64 `json:"max"`
}

func figureOf(v []int64) *Figure {
	if len(v) == 0 {
		return nil
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return &Figure{Samples: len(s), Min: s[0], Median: s[(len(s)+1)/2-1], Max: s[len(s)-1]}
}

type txTruth struct {
	t     int64
	bytes int64
}

// nicTruth is the NIC state of one request flow.
type nicTruth struct {
	nak, timeout, rnr, cnpIv, ecnCNP, resp, before, after []int64

	nakPending, nakRNR bool
	nakPSN             uint32
	nakT               int64
	inEpisode          bool
	lastTx             map[uint32]int64
	pend               map[uint32]int64 // last PSN of a request awaiting its ACK → time
	ring               []txTruth
	up, down           int
	ceSeen, cePending  bool
	ceT                int64
	cnps               int
	lastCNP            int64
	afterOn            bool
	afterPkts          []txTruth
	beforeRate         int64
	cnpFrame           int
	out                NIC
}

func (t *tracker) nicOf(c *conn) *nicTruth {
	fs := t.reqFlow[c]
	if fs == nil || fs.f.Transport != "RC" {
		return nil
	}
	if fs.nic == nil {
		fs.nic = &nicTruth{lastTx: map[uint32]int64{}, pend: map[uint32]int64{}}
	}
	return fs.nic
}

// rateTruth is the analyzer's rate over packets: the bytes of all but the
// last over the time from the first to the last, in bits per second.
func rateTruth(w []txTruth) int64 {
	if len(w) < 2 || w[len(w)-1].t <= w[0].t {
		return 0
	}
	var b int64
	for _, x := range w[:len(w)-1] {
		b += x.bytes
	}
	return int64(uint64(b) * 8 * 1e9 / uint64(w[len(w)-1].t-w[0].t))
}

func (t *tracker) nicRequest(fs *flowState, p *pkt, frame int) {
	if p.cm != cmNone || p.fromB || p.c.kind == kindUD || p.c.dc {
		return
	}
	n := t.nicOf(p.c)
	if n == nil {
		return
	}
	now := t.now
	switch {
	case p.resend == resendNone:
		n.inEpisode = false
	case !n.inEpisode:
		n.inEpisode = true
		switch p.resend {
		case resendNAK, resendRNR:
			if n.nakPending {
				n.nakPending = false
				d := now - n.nakT
				if n.nakRNR {
					n.rnr = append(n.rnr, d)
					if d < rnrDelayNs { // the timer the RNR NAK advertised
						n.out.RNREarly++
						t.finding("rnr_early", "error", frame)
					}
				} else {
					n.nak = append(n.nak, d)
					if p.psn != n.nakPSN {
						n.out.GoBackNViolations++
						t.finding("go_back_n_violation", "error", frame)
					}
				}
			}
		case resendTimeout:
			if fs.again { // its first transmission was captured
				n.out.TimeoutResends++
				n.timeout = append(n.timeout, now-n.lastTx[p.psn])
			}
		}
	}
	n.lastTx[p.psn] = now
	pos := p.op.Position()
	if fs.fresh && (p.ackReq || pos == layers.PositionLast || pos == layers.PositionOnly || pos == layers.PositionNone) {
		n.pend[(p.psn+max(p.span, 1)-1)&psnMask] = now
	}
	tx := txTruth{t: now, bytes: int64(t.origLen)}
	if n.afterOn {
		n.afterPkts = append(n.afterPkts, tx)
		if len(n.afterPkts) == nicWindow {
			t.nicEndAfter(n)
		}
	}
	n.ring = append(n.ring, tx)
	if len(n.ring) > nicWindow {
		n.ring = n.ring[1:]
	}
	if p.ce {
		n.down++
		n.ceSeen = true
		if !n.cePending {
			n.cePending, n.ceT = true, now
		}
	}
}

func (t *tracker) nicEndAfter(n *nicTruth) {
	n.afterOn = false
	after := rateTruth(n.afterPkts)
	if after <= 0 {
		return
	}
	n.after = append(n.after, after)
	if n.beforeRate > 0 && after*16 >= n.beforeRate*15 {
		n.out.CNPNoSlowdown++
		t.finding("cnp_no_slowdown", "warning", n.cnpFrame)
	}
}

func (t *tracker) nicResponse(p *pkt, frame int) {
	if p.cm != cmNone || p.c.kind == kindUD || p.c.dc {
		return
	}
	n := t.nicOf(p.c)
	if n == nil {
		return
	}
	a := layers.AETH{Syndrome: p.aeth}
	hasAETH := p.op.Operation() != layers.OperationRDMAReadResponseMiddle
	switch {
	case !hasAETH:
	case a.IsACK():
		if at, ok := n.pend[p.psn]; ok {
			n.resp = append(n.resp, t.now-at)
			delete(n.pend, p.psn)
		}
	case a.IsRNRNAK() || a.IsNAK() && p.aeth == synNAKSeq:
		n.nakPending, n.nakRNR, n.nakPSN, n.nakT = true, a.IsRNRNAK(), p.psn, t.now
		n.inEpisode = false
		if !n.nakRNR {
			// The tap is upstream of the loss when it wrote the lost
			// request, downstream when it never saw it.
			fs := t.reqFlow[p.c]
			if fs.req.set && fs.reqSeen.contains(fs.req.at(p.psn)) {
				n.up++
			} else {
				n.down++
			}
		}
	}
}

func (t *tracker) nicCNP(p *pkt, frame int) {
	n := t.nicOf(p.c)
	if n == nil {
		return
	}
	if n.cnps > 0 {
		n.cnpIv = append(n.cnpIv, t.now-n.lastCNP)
	}
	if p.extraCNP {
		n.out.CNPTooClose++
		t.finding("cnp_too_close", "warning", frame)
	}
	n.cnps++
	n.lastCNP = t.now
	if n.cePending {
		n.ecnCNP = append(n.ecnCNP, t.now-n.ceT)
		n.cePending = false
	}
	if !n.afterOn {
		n.beforeRate = rateTruth(n.ring)
		if n.beforeRate > 0 {
			n.before = append(n.before, n.beforeRate)
		}
		n.afterOn, n.afterPkts, n.cnpFrame = true, nil, frame
	}
}

// nicFinish writes the nic object of a request flow; conns are the
// connections whose request flow it is.
func (t *tracker) nicFinish(fs *flowState, conns []*conn) {
	n := fs.nic
	if n == nil {
		return
	}
	if n.afterOn && len(n.afterPkts) >= 2 {
		t.nicEndAfter(n)
	}
	o := n.out
	o.CNPs = n.cnps
	up := n.up
	if n.cnps > 0 && !n.ceSeen {
		up++ // CNPs came, no mark was seen: the marks are set after the tap
	}
	switch {
	case up > 0 && n.down > 0:
		o.CaptureSide = "mirror"
	case up > 0:
		o.CaptureSide = "requester"
	case n.down > 0:
		o.CaptureSide = "responder"
	default:
		o.CaptureSide = "unknown"
	}
	o.TimeoutNs = figureOf(n.timeout)
	o.CNPIntervalNs = figureOf(n.cnpIv)
	o.RateBeforeCNPBps = figureOf(n.before)
	o.RateAfterCNPBps = figureOf(n.after)
	switch o.CaptureSide {
	case "requester":
		o.NAKResendNs = figureOf(n.nak)
		o.RNRResendNs = figureOf(n.rnr)
	case "responder":
		o.ECNToCNPNs = figureOf(n.ecnCNP)
		o.ResponseLatencyNs = figureOf(n.resp)
	}
	for _, c := range conns {
		if r := t.flows[flowKey{c.b.idx, c.a.idx, c.qa}]; r != nil && r.f.Responses.ACKs > 0 {
			v := float64(fs.f.Requests.Packets) / float64(r.f.Responses.ACKs)
			o.RequestsPerACK = &v
		}
		if t.ackTimeout != nil {
			if v, ok := t.ackTimeout(c); ok {
				o.NegotiatedTimeoutNs = &v
			}
		}
	}
	fs.f.NIC = &o
}
