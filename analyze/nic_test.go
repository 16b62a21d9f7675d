package analyze_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// nicCase generates a capture with NIC knobs and returns its truth and
// the analyzer's report.
func nicCase(t *testing.T, cfg synth.Config) (map[string]any, []byte, *analyze.Report) {
	t.Helper()
	var capBuf, truthBuf bytes.Buffer
	_, err := synth.Generate(cfg, &capBuf, &truthBuf)
	require.NoError(t, err)
	r, err := capture.NewReader(&capBuf)
	require.NoError(t, err)
	a := analyze.New(analyze.Options{})
	for {
		ci, data, lt, err := r.Next()
		if err != nil {
			break
		}
		a.Feed(ci, lt, data)
	}
	var truth map[string]any
	require.NoError(t, json.Unmarshal(truthBuf.Bytes(), &truth))
	return truth, truthBuf.Bytes(), a.Report()
}

// truthNIC returns the nic object of the truth's data flow.
func truthNIC(t *testing.T, truth map[string]any) map[string]any {
	t.Helper()
	for _, f := range truth["flows"].([]any) {
		if n, ok := f.(map[string]any)["nic"].(map[string]any); ok {
			return n
		}
	}
	t.Fatal("the truth has no nic object")
	return nil
}

func rel(vs ...uint32) []synth.PSNRef {
	var out []synth.PSNRef
	for _, v := range vs {
		out = append(out, synth.PSNRef{Value: v, Relative: true})
	}
	return out
}

// TestNICBehaviourMatchesTruth generates each NIC behaviour with known
// values at both tap sides (and the mirror) and compares every figure of
// the nic object, and every finding, with the generator's truth; it also
// checks the figures against the knobs themselves where the tap side
// makes them the NIC's own timing.
func TestNICBehaviourMatchesTruth(t *testing.T) {
	const link = 5_000 // ns one way
	cases := []struct {
		name string
		im   synth.Impairments
		nk   synth.NICKnobs
		// check looks at the analyzer's figures for a tap side.
		check func(t *testing.T, tap string, n *analyze.NIC)
	}{
		{"nak", synth.Impairments{NAK: rel(4)}, synth.NICKnobs{NAKDelayNs: 3_000},
			func(t *testing.T, tap string, n *analyze.NIC) {
				if tap == synth.TapRequester {
					require.NotNil(t, n.NAKResendNs)
					// The resend leaves NAKDelayNs after the NAK's frame ended.
					assert.GreaterOrEqual(t, n.NAKResendNs.Min, int64(3_000))
					assert.Less(t, n.NAKResendNs.Min, int64(3_100))
				}
				if tap == synth.TapResponder {
					assert.Nil(t, n.NAKResendNs, "a responder tap sees the round trip, not the NIC")
				}
			}},
		{"go-back-n wrong PSN", synth.Impairments{NAK: rel(4)}, synth.NICKnobs{GoBackNSkip: 2},
			func(t *testing.T, _ string, n *analyze.NIC) { assert.Equal(t, uint64(1), n.GoBackNViolations) }},
		{"rnr honoured", synth.Impairments{RNR: rel(4)}, synth.NICKnobs{},
			func(t *testing.T, _ string, n *analyze.NIC) { assert.Zero(t, n.RNREarly) }},
		{"rnr early", synth.Impairments{RNR: rel(4)}, synth.NICKnobs{RNRDelayNs: 100_000},
			func(t *testing.T, _ string, n *analyze.NIC) { assert.Equal(t, uint64(1), n.RNREarly) }},
		{"timeout", synth.Impairments{}, synth.NICKnobs{Timeout: rel(7), TimeoutNs: 2_000_000},
			func(t *testing.T, tap string, n *analyze.NIC) {
				if tap == synth.TapRequester {
					require.NotNil(t, n.TimeoutNs)
					assert.Equal(t, int64(2_000_000), n.TimeoutNs.Median)
					assert.Equal(t, uint64(1), n.TimeoutResends)
				}
				require.NotNil(t, n.NegotiatedTimeoutNs)
				assert.Equal(t, int64(4096<<14), *n.NegotiatedTimeoutNs)
			}},
		{"cnp interval", synth.Impairments{ECN: ecnRange(2, 170)}, synth.NICKnobs{CNPIntervalNs: 20_000, RateCut: 0.5},
			func(t *testing.T, _ string, n *analyze.NIC) {
				require.NotNil(t, n.CNPIntervalNs)
				assert.GreaterOrEqual(t, n.CNPIntervalNs.Min, int64(20_000))
				assert.Zero(t, n.CNPNoSlowdown)
			}},
		{"cnp too close, no slowdown", synth.Impairments{ECN: ecnRange(2, 170)}, synth.NICKnobs{CNPIntervalNs: 20_000, CNPExtra: rel(2)},
			func(t *testing.T, _ string, n *analyze.NIC) {
				assert.Equal(t, uint64(1), n.CNPTooClose)
				assert.NotZero(t, n.CNPNoSlowdown)
			}},
	}
	for _, c := range cases {
		for _, tap := range []string{synth.TapRequester, synth.TapResponder, ""} {
			label := fmt.Sprintf("%s/tap=%s", c.name, tap)
			t.Run(label, func(t *testing.T) {
				nk := c.nk
				nk.Tap, nk.LinkDelayNs = tap, link
				cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 60, MsgSize: 3072, MTU: 1024, Nanos: true, Impairments: c.im, NIC: nk}
				truth, _, rep := nicCase(t, cfg)
				raw := relaxMedians(t, truth, rep)
				diffs := compareTruth(t, raw, rep)
				assert.Empty(t, diffs, "report differs from the truth:\n%s", strings.Join(diffs, "\n"))
				var got *analyze.NIC
				for i := range rep.Flows {
					if rep.Flows[i].NIC != nil {
						got = rep.Flows[i].NIC
					}
				}
				require.NotNil(t, got)
				want := truthNIC(t, truth)
				switch tap {
				case synth.TapRequester, synth.TapResponder:
					if want["capture_side"] != analyze.SideUnknown {
						assert.Equal(t, tap, got.CaptureSide, "the side the generator's tap is at")
					}
				}
				c.check(t, tap, got)
			})
		}
	}
}

// relaxMedians checks the medians of the truth's nic figures of more than
// 15 samples within the analyzer's histogram resolution (1/16) and
// returns the truth with those medians set to the report's, for the exact
// comparison of everything else. Up to 15 samples, medians are exact.
func relaxMedians(t *testing.T, truth map[string]any, rep *analyze.Report) []byte {
	t.Helper()
	var got *analyze.NIC
	for i := range rep.Flows {
		if rep.Flows[i].NIC != nil {
			got = rep.Flows[i].NIC
		}
	}
	want := truthNIC(t, truth)
	if got != nil {
		figs := map[string]*analyze.Figure{"nak_resend_ns": got.NAKResendNs, "timeout_ns": got.TimeoutNs, "rnr_resend_ns": got.RNRResendNs,
			"cnp_interval_ns": got.CNPIntervalNs, "ecn_to_cnp_ns": got.ECNToCNPNs, "response_latency_ns": got.ResponseLatencyNs,
			"rate_before_cnp_bps": got.RateBeforeCNPBps, "rate_after_cnp_bps": got.RateAfterCNPBps}
		for k, g := range figs {
			w, ok := want[k].(map[string]any)
			if !ok || g == nil || w["samples"].(float64) <= 15 {
				continue
			}
			m := w["median"].(float64)
			assert.InDelta(t, m, float64(g.Median), m/16+1, "%s median within 1/16", k)
			w["median"] = float64(g.Median)
		}
	}
	b, err := json.Marshal(truth)
	require.NoError(t, err)
	return b
}

// TestNICMergeHalves: the merged NIC figures of two halves equal the
// whole's where no event spans the seam.
func TestNICMergeHalves(t *testing.T) {
	cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 16, MsgSize: 3072, MTU: 1024, Nanos: true,
		Impairments: synth.Impairments{NAK: rel(5), RNR: rel(30)}, NIC: synth.NICKnobs{Tap: synth.TapRequester, LinkDelayNs: 2_000, NAKDelayNs: 1_000}}
	var capBuf bytes.Buffer
	_, err := synth.Generate(cfg, &capBuf, nil)
	require.NoError(t, err)
	r, err := capture.NewReader(&capBuf)
	require.NoError(t, err)
	whole, first, second := analyze.New(analyze.Options{}), analyze.New(analyze.Options{}), analyze.New(analyze.Options{})
	var n int
	for {
		ci, data, lt, err := r.Next()
		if err != nil {
			break
		}
		n++
		whole.Feed(ci, lt, data)
		if n <= 45 { // the NAK episode before the seam, the RNR one after
			first.Feed(ci, lt, data)
		} else {
			second.Feed(ci, lt, data)
		}
	}
	w, m := whole.Report(), first.Report()
	require.NoError(t, m.Merge(second.Report()))
	var wn, mn *analyze.NIC
	for i := range w.Flows {
		if w.Flows[i].NIC != nil {
			wn = w.Flows[i].NIC
		}
	}
	for i := range m.Flows {
		if m.Flows[i].NIC != nil {
			mn = m.Flows[i].NIC
		}
	}
	require.NotNil(t, wn)
	require.NotNil(t, mn)
	assert.Equal(t, wn.CaptureSide, mn.CaptureSide)
	assert.Equal(t, wn.NAKResendNs, mn.NAKResendNs)
	assert.Equal(t, wn.RNRResendNs, mn.RNRResendNs)
	assert.Equal(t, wn.RequestsPerACK, mn.RequestsPerACK)
	assert.Equal(t, wn.NegotiatedTimeoutNs, mn.NegotiatedTimeoutNs)
	assert.Equal(t, wn.GoBackNViolations, mn.GoBackNViolations)
}

// TestNICClockBack: a resend timestamped before the RNR NAK it answers
// (the capture's clock went back) measures nothing: no negative RNR wait,
// no rnr_early error "resent −28 ns after the RNR NAK" (issue 23).
func TestNICClockBack(t *testing.T) {
	frames, cis, lt, err := loadFrames("../testdata/rnr_corrupt_icrc.pcap")
	require.NoError(t, err)
	// Frame 10 is the RNR NAK (640 µs), frame 11 the resend 640 µs later.
	back := append([]gopacket.CaptureInfo{}, cis...)
	back[10].Timestamp = cis[9].Timestamp.Add(-28 * time.Nanosecond)
	for name, c := range map[string][]gopacket.CaptureInfo{"as captured": cis, "clock back": back} {
		rep := analyzeFrames(frames, c, lt)
		early := 0
		for _, f := range rep.Findings {
			if f.Kind == analyze.KindRNREarly {
				early++
			}
		}
		assert.Zero(t, early, name)
		for _, f := range rep.Flows {
			if f.NIC == nil || f.NIC.RNRResendNs == nil {
				continue
			}
			assert.GreaterOrEqual(t, f.NIC.RNRResendNs.Min, int64(0), name)
		}
	}
}

// TestNICSeenFigures: where the capture side does not make a NAK's or an
// RNR NAK's wait the requester NIC's own, the report still gives the gap
// the capture saw between the NAK and the resend it asked for (the
// capture's timestamps of those two frames), as a _seen figure, rather
// than dropping it (issue 23: no NIC section on rnr_corrupt_icrc.pcap and
// loss_behind_tap.pcap).
func TestNICSeenFigures(t *testing.T) {
	for _, tc := range []struct {
		file      string
		nak, resp analyze.Kind // the finding of the NAK, of the resend
		rnr       bool
	}{
		{"rnr_corrupt_icrc.pcap", analyze.KindRNRNAK, analyze.KindRetransmission, true},
		{"loss_behind_tap.pcap", analyze.KindNAK, analyze.KindRetransmission, false},
	} {
		t.Run(tc.file, func(t *testing.T) {
			frames, cis, lt, err := loadFrames("../testdata/" + tc.file)
			require.NoError(t, err)
			rep := analyzeFrames(frames, cis, lt)
			var nakFrame, resendFrame uint64
			for _, f := range rep.Findings {
				if f.Kind == tc.nak && nakFrame == 0 {
					nakFrame = f.Frame
				}
			}
			for _, f := range rep.Findings {
				if f.Kind == tc.resp && f.Frame > nakFrame && resendFrame == 0 {
					resendFrame = f.Frame
				}
			}
			require.NotZero(t, nakFrame)
			require.NotZero(t, resendFrame)
			want := cis[resendFrame-1].Timestamp.Sub(cis[nakFrame-1].Timestamp).Nanoseconds()
			var nic *analyze.NIC
			for _, f := range rep.Flows {
				if f.NIC != nil && (f.NIC.NAKResendSeenNs != nil || f.NIC.RNRResendSeenNs != nil) {
					nic = f.NIC
				}
			}
			require.NotNil(t, nic, "a flow gives the seen wait")
			assert.NotEqual(t, analyze.SideRequester, nic.CaptureSide)
			seen := nic.NAKResendSeenNs
			if tc.rnr {
				seen = nic.RNRResendSeenNs
				assert.Nil(t, nic.RNRResendNs)
			} else {
				assert.Nil(t, nic.NAKResendNs)
			}
			require.NotNil(t, seen)
			assert.Equal(t, uint64(1), seen.Samples)
			assert.Equal(t, want, seen.Median, "the gap between frames %d and %d", nakFrame, resendFrame)
		})
	}
}
