package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// rttJSON is the part of a JSON report the RTT test reads.
type rttJSON struct {
	Flows []struct {
		Src       string `json:"src"`
		DestQP    uint32 `json:"dest_qp"`
		Responses struct {
			RTT *struct {
				Samples  uint64 `json:"samples"`
				MinNs    int64  `json:"min_ns"`
				MedianNs int64  `json:"median_ns"`
				MaxNs    int64  `json:"max_ns"`
			} `json:"rtt"`
			RTTAt string `json:"rtt_at"`
		} `json:"responses"`
	} `json:"flows"`
}

func rttReport(t *testing.T, args ...string) (rttJSON, string) {
	t.Helper()
	var out, errb bytes.Buffer
	require.Equal(t, cli.ExitOK, cli.Run(context.Background(), append([]string{"-o", "json"}, args...), &out, &errb), errb.String())
	var rep rttJSON
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	var text, errt bytes.Buffer
	require.Equal(t, cli.ExitOK, cli.Run(context.Background(), append([]string{"--color", "never"}, args...), &text, &errt), errt.String())
	return rep, text.String()
}

// TestCapturePointsRTT: the RTT of a flow several capture points saw is
// the one measured at the point nearest its requester (the first point,
// the requester's tap), as that file alone measures it, and the report
// says where; it is a round trip of twice the hops' delays. Before, the
// combined report timed each request where it was seen first against
// its ACK where that was seen first (the responder's point): a time
// between two places, which matched neither host.
func TestCapturePointsRTT(t *testing.T) {
	hop := func(name string, offset, delay time.Duration) synth.Point {
		return synth.Point{Name: name, ClockOffset: offset, Delay: delay, TTLDec: 1}
	}
	for _, tc := range []struct {
		name   string
		base   synth.Config
		points []synth.Point
	}{
		{"write-bw, two hosts", synth.Config{Scenario: "write-bw", Messages: 8}, []synth.Point{{Name: "hostA"}, hop("hostB", 2*time.Millisecond, 20*time.Microsecond)}},
		{"read-bw, a mirror between", synth.Config{Scenario: "read-bw", Messages: 6, Nanos: true},
			[]synth.Point{{Name: "hostA"}, hop("mirror", -time.Millisecond, 5*time.Microsecond), hop("hostB", 3*time.Millisecond, 15*time.Microsecond)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, _ := writePoints(t, synth.PointsConfig{Base: tc.base, Points: tc.points})
			alone, _ := rttReport(t, files[0])
			all, text := rttReport(t, files...)
			var wantRTT time.Duration
			for _, p := range tc.points {
				wantRTT += 2 * p.Delay
			}
			measured := 0
			for _, f := range all.Flows {
				if f.Responses.RTT == nil {
					assert.Empty(t, f.Responses.RTTAt)
					continue
				}
				measured++
				assert.Equal(t, files[0], f.Responses.RTTAt, "%s QP %d", f.Src, f.DestQP)
				found := false
				for _, g := range alone.Flows {
					if g.Src == f.Src && g.DestQP == f.DestQP {
						found = true
						assert.Equal(t, g.Responses.RTT, f.Responses.RTT, "%s QP %d: the requester's file's own RTT", f.Src, f.DestQP)
					}
				}
				assert.True(t, found)
				assert.InDelta(t, wantRTT.Nanoseconds(), f.Responses.RTT.MinNs, 2000, "a round trip over every hop")
			}
			assert.Equal(t, 1, measured, "the data connection's requests")
			assert.Contains(t, text, "RTT measured at "+files[0]+", nearest the requester (its requests leave and their ACKs arrive there): 1 flow\n")
			assert.Equal(t, 1, strings.Count(text, "RTT measured at"))
		})
	}
}
