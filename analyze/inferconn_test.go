package analyze_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestInferredConnections: RC QPs that no CM handshake set up are paired
// from their packets. roce-synth writes each scenario with its CM
// handshakes, whose QPNs its truth gives; the test feeds the analyzer the
// capture without its CM messages (every MAD, as NCCL and perftest
// exchange QPNs out of band), at -j 1 and through Sharded, and expects one
// inferred RC connection per CM connection of the truth, with its
// requester's and responder's address and QPN, and the flows of the pair
// naming it; the capture with its CM messages has no inferred
// connection, its flows being the CM connections'.
func TestInferredConnections(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  synth.Config
	}{
		{"write-bw", synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 8, MsgSize: 4096, MTU: 1024}},
		{"read-bw", synth.Config{Scenario: synth.ScenarioReadBW, Messages: 8, MsgSize: 4096, MTU: 1024}},
		{"send-bw ipv6", synth.Config{Scenario: synth.ScenarioSendBW, Encap: synth.EncapIPv6, Messages: 8, MsgSize: 4096, MTU: 1024}},
		{"atomic", synth.Config{Scenario: synth.ScenarioAtomic, Messages: 8}},
		{"mix of 8 QPs", synth.Config{Scenario: synth.ScenarioMix, Packets: 600, QPs: 8, MTU: 1024, MsgSize: 4096}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames, cis, lt, truthJSON := genFrames(t, tc.cfg)
			var truth synth.Truth
			require.NoError(t, json.Unmarshal(truthJSON, &truth))
			var want []string
			for _, c := range truth.Connections {
				require.NotNil(t, c.Requester.QPN)
				require.NotNil(t, c.Responder.QPN)
				want = append(want, fmt.Sprintf("%s QPN %d ↔ %s QPN %d", c.Requester.IP, *c.Requester.QPN, c.Responder.IP, *c.Responder.QPN))
			}
			require.NotEmpty(t, want)

			var noCM []int // the frames but those to QP1, the CM's
			for i, data := range frames {
				bth, _ := gopacket.NewPacket(data, lt, gopacket.Default).Layer(layers.LayerTypeBTH).(*layers.BTH)
				if bth == nil || bth.DestQP != 1 {
					noCM = append(noCM, i)
				}
			}
			require.Less(t, len(noCM), len(frames), "the capture has CM messages")

			a := analyze.New(analyze.Options{})
			for _, i := range noCM {
				a.Feed(cis[i], lt, frames[i])
			}
			seq := a.Finish()
			sh := analyze.NewSharded(analyze.Options{}, 3)
			for _, i := range noCM {
				sh.Feed(cis[i], lt, frames[i])
			}
			sharded, err := sh.Finish()
			require.NoError(t, err)

			for _, rep := range []*analyze.Report{seq, sharded} {
				var got []string
				for _, c := range rep.Connections {
					assert.Equal(t, analyze.StateInferred, c.State)
					require.NotNil(t, c.Transport)
					assert.Equal(t, "RC", *c.Transport)
					got = append(got, fmt.Sprintf("%s QPN %d ↔ %s QPN %d", c.Requester.IP, *c.Requester.QPN, c.Responder.IP, *c.Responder.QPN))
					var named []string
					for _, f := range rep.Flows {
						if f.Connection != nil && *f.Connection == c.ID {
							named = append(named, fmt.Sprintf("%s → %s QP %d", f.Src, f.Dst, f.DestQP))
						}
					}
					assert.ElementsMatch(t, []string{
						fmt.Sprintf("%s → %s QP %d", c.Requester.IP, c.Responder.IP, *c.Responder.QPN),
						fmt.Sprintf("%s → %s QP %d", c.Responder.IP, c.Requester.IP, *c.Requester.QPN),
					}, named, "connection %d's flows", c.ID)
				}
				assert.ElementsMatch(t, want, got)
			}
			assert.Equal(t, seq.Connections, sharded.Connections, "-j 1 and -j 3 number them alike")

			a = analyze.New(analyze.Options{})
			for i := range frames {
				a.Feed(cis[i], lt, frames[i])
			}
			for _, c := range a.Finish().Connections {
				assert.NotEqual(t, analyze.StateInferred, c.State, "a connection CM set up is not inferred too")
			}
		})
	}
}
