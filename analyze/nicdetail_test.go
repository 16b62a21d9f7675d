package analyze_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestNICFindingDetails holds the NIC stage's findings (go-back-N,
// early RNR resend, CNP too close, no slowdown after a CNP) to the
// frames and words the analyzer gave them before the stage moved into
// package nic, which words them no longer (its facts are numbers): the
// want lists are that code's output (main at 248a84f), for the
// generator's captures of each behaviour at the requester.
func TestNICFindingDetails(t *testing.T) {
	for _, tc := range []struct {
		name string
		im   synth.Impairments
		nk   synth.NICKnobs
		want []string
	}{
		{"go-back-n wrong PSN", synth.Impairments{NAK: rel(4)}, synth.NICKnobs{GoBackNSkip: 2}, []string{
			"13 00:00:00.000012885 go_back_n_violation: resend after the NAK of frame 12 restarted at PSN 11372304, not at the NAKed PSN 11372302",
		}},
		{"rnr early", synth.Impairments{RNR: rel(4)}, synth.NICKnobs{RNRDelayNs: 100_000}, []string{
			"12 00:00:00.000112525 rnr_early: PSN 11372302 resent 100.028µs after the RNR NAK of frame 11, which asked for 640µs",
		}},
		{"cnp too close, no slowdown", synth.Impairments{ECN: ecnRange(2, 170)}, synth.NICKnobs{CNPIntervalNs: 20_000, CNPExtra: rel(2)}, []string{
			"7 00:00:00.000001401 cnp_no_slowdown: sender rate 23.9 Gbit/s after the CNP, 24.4 Gbit/s before: no slowdown",
			"8 00:00:00.000001433 cnp_too_close: CNP 32ns after the CNP of frame 7; this NIC's CNPs are otherwise at least 19.456µs apart",
			"83 00:00:00.000021581 cnp_no_slowdown: sender rate 23.9 Gbit/s after the CNP, 23.6 Gbit/s before: no slowdown",
			"157 00:00:00.000041695 cnp_no_slowdown: sender rate 23.6 Gbit/s after the CNP, 23.9 Gbit/s before: no slowdown",
			"231 00:00:00.000061809 cnp_no_slowdown: sender rate 23.9 Gbit/s after the CNP, 23.9 Gbit/s before: no slowdown",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nk := tc.nk
			nk.Tap, nk.LinkDelayNs = synth.TapRequester, 5_000
			cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 60, MsgSize: 3072, MTU: 1024, Nanos: true, Impairments: tc.im, NIC: nk}
			_, _, rep := nicCase(t, cfg)
			var got []string
			for _, f := range rep.Findings {
				switch f.Kind {
				case analyze.KindGoBackN, analyze.KindRNREarly, analyze.KindCNPTooClose, analyze.KindCNPNoSlowdown:
					got = append(got, fmt.Sprintf("%d %s %s: %s", f.Frame, f.Time.Format("15:04:05.000000000"), f.Kind, f.Detail))
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

// ecnRange is the relative PSNs from to to, each CE-marked.
func ecnRange(from, to uint32) []synth.PSNRef {
	var out []uint32
	for v := from; v <= to; v++ {
		out = append(out, v)
	}
	return rel(out...)
}
