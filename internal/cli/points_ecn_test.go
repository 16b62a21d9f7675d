package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestCapturePointsECNMarks: ECN CE marks the network added between two
// capture points (seen only in the downstream files) are in the combined
// report: each flow's ecn_ce is the stream's (marks set by the sender)
// plus those added on its links, each added mark is an ecn_ce finding in
// the file of the point past the hop that added it, and each link says
// how many it added (ecn_ce_added), all as the generator's truth says.
// Before, the combined report, fed each transmission's first sighting
// only, counted none of them (issue 41: 225 in the downstream file, 0
// combined).
func TestCapturePointsECNMarks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		base   synth.Config
		points []synth.Point
	}{
		{"two points, marks on the hop and at the sender (µs)", synth.Config{Scenario: "write-bw", Messages: 8, Impairments: synth.Impairments{ECN: mustPSNs(t, "+12")}},
			[]synth.Point{{Name: "host-a"}, {Name: "host-b", ClockOffset: 1500 * time.Microsecond, Delay: 3 * time.Microsecond, TTLDec: 1, ECN: mustPSNs(t, "+2,+5,+9")}}},
		{"three points ipv6, marks on both hops (ns)", synth.Config{Scenario: "send-bw", Encap: synth.EncapIPv6, Messages: 10, Nanos: true},
			[]synth.Point{
				{Name: "host-a", ClockOffset: -2 * time.Millisecond},
				{Name: "mirror", ClockOffset: 40 * time.Microsecond, Delay: time.Microsecond, Jitter: 100 * time.Nanosecond, TTLDec: 1, ECN: mustPSNs(t, "+3")},
				{Name: "host-b", ClockOffset: 7 * time.Millisecond, Delay: 2 * time.Microsecond, TTLDec: 1, ECN: mustPSNs(t, "+3,+6,+7")},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, tr := writePoints(t, synth.PointsConfig{Base: tc.base, Points: tc.points})
			var out, errb bytes.Buffer
			require.Equal(t, cli.ExitOK, cli.Run(context.Background(), append([]string{"-o", "json"}, files...), &out, &errb), errb.String())
			var rep struct {
				Flows []struct {
					Src        string `json:"src"`
					Dst        string `json:"dst"`
					DestQP     uint32 `json:"dest_qp"`
					Congestion struct {
						ECNCE int `json:"ecn_ce"`
					} `json:"congestion"`
				} `json:"flows"`
				Findings []struct {
					Kind string `json:"kind"`
					File string `json:"file"`
				} `json:"findings"`
				Points *struct {
					Links []synth.PointLinkTruth `json:"links"`
				} `json:"points"`
			}
			require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
			require.NotNil(t, rep.Points)
			type flowKey struct {
				src, dst string
				qp       uint32
			}
			added, addedAt, total := map[flowKey]int{}, map[string]int{}, 0
			for _, w := range tr.Links {
				added[flowKey{w.Src, w.Dst, w.DestQP}] += w.ECNCEAdded
				addedAt[w.To] += w.ECNCEAdded
				total += w.ECNCEAdded
				found := false
				for _, g := range rep.Points.Links {
					if g.Src == w.Src && g.Dst == w.Dst && g.DestQP == w.DestQP && g.From == w.From && g.To == w.To {
						found = true
						assert.Equal(t, w.ECNCEAdded, g.ECNCEAdded, "ecn_ce_added %s → %s", w.From, w.To)
					}
				}
				assert.True(t, found, "link %s → %s", w.From, w.To)
			}
			require.Positive(t, total, "the case adds no mark")
			require.Len(t, rep.Flows, len(tr.Stream.Flows))
			for _, w := range tr.Stream.Flows {
				for _, g := range rep.Flows {
					if g.Src == w.Src && g.Dst == w.Dst && g.DestQP == w.DestQP {
						assert.Equal(t, w.Congestion.ECNCE+added[flowKey{w.Src, w.Dst, w.DestQP}], g.Congestion.ECNCE, "ecn_ce of %s → %s", w.Src, w.Dst)
					}
				}
			}
			sender := 0
			for _, w := range tr.Stream.Flows {
				sender += w.Congestion.ECNCE
			}
			findingsAt := map[string]int{}
			for _, f := range rep.Findings {
				if f.Kind == "ecn_ce" {
					findingsAt[f.File]++
				}
			}
			// The sender's marks are findings at the first point that saw
			// them (host-a), the added ones at the point past their hop.
			addedAt[files[0]] += sender
			for f, n := range addedAt {
				if n == 0 {
					delete(addedAt, f)
				}
			}
			assert.Equal(t, addedAt, findingsAt, "ecn_ce findings by file")
		})
	}
}
