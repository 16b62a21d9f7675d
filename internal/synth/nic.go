package synth

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/layers"
)

// NICKnobs model how the two NICs of the data connection behave and where
// the capture is taken, for the NIC behaviour figures of the analyzer
// (docs/analysis.md, "NIC behaviour"). The zero value writes the captures
// the generator always wrote: a tap between the ECN-marking switch and
// the point of loss ("mirror"), no link delay, resends right after a NAK,
// and after the RNR timer after an RNR NAK.
type NICKnobs struct {
	// Tap is where the capture is taken: "" (mirror, as above),
	// "requester" (at the requester's port: packets lost in the network
	// are captured, ECN marks are not yet set) or "responder" (at the
	// responder's port: lost packets are missing, marks are visible).
	Tap string
	// LinkDelayNs is the one-way delay between the NICs: a packet sent in
	// reaction to one from the far side passes the tap a round trip
	// (2 × LinkDelayNs) later than at the near side.
	LinkDelayNs int64
	// NAKDelayNs is the requester's delay from a NAK to its resend.
	NAKDelayNs int64
	// RNRDelayNs is the requester's wait after an RNR NAK (default the
	// advertised timer, 0.64 ms); shorter is a resend before the timer.
	RNRDelayNs int64
	// Timeout: these request packets are lost with no NAK (nothing is in
	// flight behind them); the requester resends from them TimeoutNs after
	// sending them.
	Timeout   []PSNRef
	TimeoutNs int64
	// GoBackNSkip > 0 makes the resend after a NAK restart that many PSNs
	// after the NAKed one (a go-back-N violation).
	GoBackNSkip int
	// CNPIntervalNs is the responder NIC's minimum interval between two
	// CNPs of the QP: a CE mark sooner after the last CNP gets none.
	CNPIntervalNs int64
	// CNPExtra: the CE mark of these PSNs gets a second CNP right after
	// the first (closer than the NIC's own interval).
	CNPExtra []PSNRef
	// RateCut, in (0, 1), is the fraction of the link rate the requester
	// sends its next nicWindow requests at after each CNP; 0 does not
	// slow down.
	RateCut float64
}

// Taps.
const (
	TapMirror    = "mirror"
	TapRequester = "requester"
	TapResponder = "responder"
)

// nicWindow is the number of requests the rate before and after a CNP is
// measured over (as the analyzer does).
const nicWindow = 8

// Causes of a resend beyond resendNAK and resendRNR.
const resendTimeout uint8 = 3

func (k *NICKnobs) normalize() error {
	switch k.Tap {
	case "", TapMirror, TapRequester, TapResponder:
	default:
		return fmt.Errorf("synth: %w: --tap %q (want requester, responder or mirror)", ErrConfig, k.Tap)
	}
	if k.Tap == TapMirror {
		k.Tap = ""
	}
	if k.LinkDelayNs < 0 || k.NAKDelayNs < 0 || k.RNRDelayNs < 0 || k.TimeoutNs < 0 || k.CNPIntervalNs < 0 || k.GoBackNSkip < 0 {
		return fmt.Errorf("synth: %w: negative NIC delay", ErrConfig)
	}
	if k.RateCut < 0 || k.RateCut >= 1 {
		return fmt.Errorf("synth: %w: --rate-cut %g (want 0 < cut < 1, or 0)", ErrConfig, k.RateCut)
	}
	if len(k.Timeout) > 0 && k.TimeoutNs == 0 {
		k.TimeoutNs = 4096 << 14 // the Local ACK Timeout of the CM REQ
	}
	return nil
}

func (k *NICKnobs) any() bool {
	return k.Tap != "" || k.LinkDelayNs+k.NAKDelayNs+k.RNRDelayNs+k.CNPIntervalNs > 0 || len(k.Timeout)+len(k.CNPExtra)+k.GoBackNSkip > 0 || k.RateCut > 0
}

// rtt is the extra time a reaction to the far side's packet takes to pass
// the tap when the reacting side is the far one.
func (k *NICKnobs) rtt() int64 { return 2 * k.LinkDelayNs }

// lossAfterTap applies a NAK (or RNR NAK) for the request with PSN psn:
// the next window requests still go out, the responder answers, the
// requester sends again from psn (or GoBackNSkip PSNs later), each passing
// the tap at the times the tap side gives.
func lossAfterTap(list []pkt, psn uint32, window int, syndrome uint8, cause uint8, k *NICKnobs) []pkt {
	i := findReq(list, psn, 0)
	if i < 0 {
		return list
	}
	rnr := cause == resendRNR
	out := make([]pkt, 0, len(list)+window+8)
	out = append(out, list[:i+1]...)
	lost := len(out) - 1
	c := list[i].c
	nak := pkt{c: c, fromB: true, op: layers.OpcodeRCAcknowledge, destQP: c.qa, psn: psn, aeth: syndrome, msn: msnBefore(list, i)}
	atResponder := k.Tap == TapResponder
	if atResponder && !rnr {
		out[lost].hidden = true // lost before the responder's port
	}
	placed := false
	if atResponder && rnr {
		out = append(out, nak) // the responder answers the request it got at once
		placed = true
	}
	for j, n := i+1, 0; n < window; n++ {
		j = nextReq(list, j)
		if j < 0 {
			break
		}
		out = append(out, list[j])
		j++
		if atResponder && !placed {
			out = append(out, nak) // right after the out-of-sequence request
			placed = true
		}
	}
	if !placed {
		if k.Tap == TapRequester {
			nak.delayNs = k.rtt()
		}
		out = append(out, nak)
	}
	from := i
	if !rnr && k.GoBackNSkip > 0 {
		if j := findReq(list, psnAdd(psn, k.GoBackNSkip), i); j >= 0 {
			from = j
		}
	}
	resend := len(out)
	out = append(out, list[from:]...)
	delay := k.NAKDelayNs
	if rnr {
		delay = rnrDelayNs
		if k.RNRDelayNs > 0 {
			delay = k.RNRDelayNs
		}
	}
	if atResponder {
		delay += k.rtt()
	}
	out[resend].delayNs += delay
	high := psn
	for _, q := range out[:resend] {
		if q.dataReq() && serial24(q.psn-high) > 0 {
			high = q.psn
		}
	}
	first := out[resend].psn
	for x := resend; x < len(out); x++ {
		if q := &out[x]; q.dataReq() && serial24(q.psn-first) >= 0 && serial24(q.psn-high) <= 0 && q.resend == resendNone {
			q.resend = cause
		}
	}
	return out
}

func psnAdd(p uint32, n int) uint32 { return uint32(int64(p)+int64(n)) & psnMask }

// timeoutLoss loses the request with PSN psn with nothing behind it: no
// NAK comes, and the requester resends from it TimeoutNs after sending it.
func timeoutLoss(list []pkt, psn uint32, k *NICKnobs) []pkt {
	i := findReq(list, psn, 0)
	if i < 0 {
		return list
	}
	// One more request is in flight behind it, and the NAK it triggers
	// is lost: only the requester's timer resends.
	out := make([]pkt, 0, len(list)+8)
	out = append(out, list[:i+1]...)
	if k.Tap == TapResponder {
		out[i].hidden = true
	}
	if j := nextReq(list, i+1); j >= 0 {
		out = append(out, list[j])
	}
	resend := len(out)
	out = append(out, list[i:]...)
	out[resend].sinceTxNs = k.TimeoutNs
	high := psn
	for _, q := range out[:resend] {
		if q.dataReq() && serial24(q.psn-high) > 0 {
			high = q.psn
		}
	}
	for x := resend; x < len(out); x++ {
		if q := &out[x]; q.dataReq() && serial24(q.psn-psn) >= 0 && serial24(q.psn-high) <= 0 && q.resend == resendNone {
			q.resend = resendTimeout
		}
	}
	return out
}

// applyNIC applies the NIC knobs that are not part of a NAK: timeouts and
// the extra CNPs (the rate cut after CNPs is applied as they are
// written: generator.emit).
func applyNIC(list []pkt, k *NICKnobs, start uint32) ([]pkt, error) {
	for _, r := range append(append([]PSNRef(nil), k.Timeout...), k.CNPExtra...) {
		if p := r.resolve(start); findReq(list, p, 0) < 0 {
			return nil, fmt.Errorf("synth: %w: the data connection has no request with PSN %d", ErrConfig, p)
		}
	}
	for _, r := range k.Timeout {
		list = timeoutLoss(list, r.resolve(start), k)
	}
	for _, r := range k.CNPExtra {
		i := findReq(list, r.resolve(start), 0)
		if i < 0 || i+1 >= len(list) || !list[i+1].op.IsCNP() {
			return nil, fmt.Errorf("synth: %w: --cnp-extra %s: the request is not ECN marked (--ecn)", ErrConfig, r)
		}
		extra := list[i+1]
		extra.extraCNP = true
		list = insert(list, i+2, extra)
	}
	return list, nil
}

// ParseTap parses --tap.
func ParseTap(s string) (string, error) {
	switch strings.ToLower(s) {
	case "", TapMirror:
		return "", nil
	case TapRequester, TapResponder:
		return strings.ToLower(s), nil
	}
	return "", fmt.Errorf("synth: unknown tap %q (want requester, responder or mirror)", s)
}

// writtenTime is the timestamp as the capture file stores it (and the
// analyzer reads it back): microseconds in a µs pcap, the ERF record's
// own nanoseconds on ERF.
func writtenTime(ts time.Time, cfg *Config) time.Time {
	if cfg.Format == FormatPcap && !cfg.Nanos && cfg.Encap != EncapERF {
		return ts.Truncate(time.Microsecond)
	}
	return ts
}

// addNICFlags adds the flags of the NIC knobs to roce-synth.
func addNICFlags(fs *flag.FlagSet, v *cliFlags) {
	k := &v.cfg.NIC
	fs.StringVar(&v.tap, "tap", "mirror", "capture point: requester, responder, or mirror (between the ECN-marking switch and the loss)")
	fs.Int64Var(&k.LinkDelayNs, "link-delay", 0, "one-way delay between the NICs, `ns`")
	fs.Int64Var(&k.NAKDelayNs, "nak-delay", 0, "requester's delay from a NAK to its resend, `ns`")
	fs.Int64Var(&k.RNRDelayNs, "rnr-delay", 0, "requester's wait after an RNR NAK, `ns` (default the advertised 0.64 ms)")
	fs.StringVar(&v.timeout, "timeout", "", "`PSN`s lost with their NAK: resent by the requester's timer")
	fs.Int64Var(&k.TimeoutNs, "timeout-ns", 0, "requester's retransmission timeout, `ns` (default the CM REQ's Local ACK Timeout, 67.1 ms)")
	fs.IntVar(&k.GoBackNSkip, "gbn-skip", 0, "after a NAK, resend from `N` PSNs after the NAKed one (a go-back-N violation)")
	fs.Int64Var(&k.CNPIntervalNs, "cnp-interval", 0, "responder NIC's minimum interval between CNPs of the QP, `ns`")
	fs.StringVar(&v.cnpExtra, "cnp-extra", "", "ECN-marked `PSN`s whose CNP is sent twice (closer than the NIC's interval)")
	fs.Float64Var(&k.RateCut, "rate-cut", 0, "requester's rate after a CNP as a `fraction` of the link rate, for 8 requests (0: no reaction)")
}

// parseNICFlags reads the NIC flags that need parsing.
func parseNICFlags(v *cliFlags, cfg *Config) error {
	var err error
	if cfg.NIC.Tap, err = ParseTap(v.tap); err != nil {
		return err
	}
	if cfg.NIC.Timeout, err = ParsePSNList(v.timeout); err != nil {
		return err
	}
	cfg.NIC.CNPExtra, err = ParsePSNList(v.cnpExtra)
	return err
}
