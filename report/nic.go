package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// writeNICViolations writes how many findings of NIC conformance the
// flow has, by kind: the findings themselves are listed once, under
// Findings.
func writeNICViolations(w io.Writer, n *analyze.NIC) {
	var kinds []string
	for _, k := range []struct {
		kind analyze.Kind
		n    uint64
	}{{analyze.KindGoBackN, n.GoBackNViolations}, {analyze.KindRNREarly, n.RNREarly}, {analyze.KindCNPTooClose, n.CNPTooClose}, {analyze.KindCNPNoSlowdown, n.CNPNoSlowdown}} {
		if k.n > 0 {
			kinds = append(kinds, fmt.Sprintf("%d %s", k.n, k.kind))
		}
	}
	if len(kinds) > 0 {
		fmt.Fprintf(w, "    %-22s %s (under Findings)\n", "violations", strings.Join(kinds, ", "))
	}
}

// NICEvents is how much a flow's NIC object has to say, violations
// first: the NIC section lists the flows with any.
func NICEvents(n *analyze.NIC) (violations, events uint64) {
	violations = n.GoBackNViolations + n.RNREarly + n.CNPTooClose + n.CNPNoSlowdown
	events = n.CNPs + n.TimeoutResends
	for _, f := range []*analyze.Figure{n.NAKResendNs, n.RNRResendNs, n.ECNToCNPNs, n.NAKResendSeenNs, n.RNRResendSeenNs, n.ECNToCNPSeenNs} {
		if f != nil {
			events += f.Samples
		}
	}
	return violations, events
}

// writeNIC writes the "NIC behaviour" section: per flow with NAKs,
// resends or CNPs, the figures and the conformance violations with their
// frames, worst flow first.
func (t *textWriter) writeNIC(w io.Writer, rep *analyze.Report) {
	p := t.p
	var flows []*analyze.Flow
	for i := range rep.Flows {
		if n := rep.Flows[i].NIC; n != nil {
			if v, e := NICEvents(n); v+e > 0 {
				flows = append(flows, &rep.Flows[i])
			}
		}
	}
	if len(flows) == 0 {
		return
	}
	sort.SliceStable(flows, func(i, j int) bool {
		vi, ei := NICEvents(flows[i].NIC)
		vj, ej := NICEvents(flows[j].NIC)
		if vi != vj {
			return vi > vj
		}
		return ei > ej
	})
	fmt.Fprintln(w)
	p.Bold.Fprintln(w, "NIC behaviour")
	for _, f := range flows {
		n := f.NIC
		fmt.Fprintf(w, "  %s: capture at the %s side (%s)\n", f.ID(), n.CaptureSide, n.CaptureSideReason)
		fig := func(label string, v *analyze.Figure, unit func(int64) string) {
			if v == nil {
				return
			}
			fmt.Fprintf(w, "    %-22s %s / %s / %s (min / median / max, %d samples)\n", label, unit(v.Min), unit(v.Median), unit(v.Max), v.Samples)
		}
		ns := func(v int64) string { return time.Duration(v).String() }
		rate := func(v int64) string { f := float64(v); return HumanRate(&f) }
		fig("NAK → resend", n.NAKResendNs, ns)
		fig("NAK → resend, seen", n.NAKResendSeenNs, ns)
		if n.TimeoutResends > 0 || n.TimeoutNs != nil {
			fmt.Fprintf(w, "    %-22s %d", "timeout resends", n.TimeoutResends)
			if n.NegotiatedTimeoutNs != nil {
				fmt.Fprintf(w, " (negotiated Local ACK Timeout %s)", ns(*n.NegotiatedTimeoutNs))
			}
			fmt.Fprintln(w)
		}
		fig("timeout", n.TimeoutNs, ns)
		fig("RNR NAK → resend", n.RNRResendNs, ns)
		fig("RNR → resend, seen", n.RNRResendSeenNs, ns)
		fig("response latency", n.ResponseLatencyNs, ns)
		if n.CNPs > 0 {
			fmt.Fprintf(w, "    %-22s %d\n", "CNPs", n.CNPs)
		}
		fig("CNP interval", n.CNPIntervalNs, ns)
		fig("ECN-CE → CNP", n.ECNToCNPNs, ns)
		fig("ECN-CE → CNP, seen", n.ECNToCNPSeenNs, ns)
		fig("rate before CNP", n.RateBeforeCNPBps, rate)
		fig("rate after CNP", n.RateAfterCNPBps, rate)
		if n.RequestsPerACK != nil {
			fmt.Fprintf(w, "    %-22s %.2f\n", "requests per ACK", *n.RequestsPerACK)
		}
		if n.NAKResendSeenNs != nil || n.RNRResendSeenNs != nil || n.ECNToCNPSeenNs != nil {
			fmt.Fprintf(w, "    (seen: the gap at the capture point, which holds the path between it and the NIC)\n")
		}
		writeNICViolations(w, n)
	}
}
