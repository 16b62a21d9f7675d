package analyze_test

import (
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestActiveThroughput: the rate of a flow while its messages were on the
// wire. roce-synth writes a write-bw flow of four 4 KiB messages (four
// 1 KiB packets each); the test re-times it, message k starting 10 s after
// message k−1 and its packets spaced[k] apart, the ACKs 1 ns after the
// request before them. The oracle is that timing: each message's three
// MIDDLE and LAST packets carried 3 KiB in 3 × spaced[k], a gap above the
// interval (a stalled sender) counting for nothing, where throughput_bps
// spreads the bytes over the 30 s of idle time.
func TestActiveThroughput(t *testing.T) {
	for _, tc := range []struct {
		name    string
		spaced  []time.Duration
		wantNs  int64
		wantBps float64
	}{
		{"steady", []time.Duration{4 * time.Microsecond, 4 * time.Microsecond, 4 * time.Microsecond, 4 * time.Microsecond},
			4 * 3 * 4000, 4 * 3 * 1024 * 8 / (4 * 3 * 4e-6)},
		{"uneven", []time.Duration{1 * time.Microsecond, 2 * time.Microsecond, 4 * time.Microsecond, 8 * time.Microsecond},
			3 * (1000 + 2000 + 4000 + 8000), 4 * 3 * 1024 * 8 / (3 * 15e-6)},
		{"one message stalled past the interval", []time.Duration{2 * time.Microsecond, 2 * time.Millisecond, 2 * time.Microsecond, 2 * time.Microsecond},
			3 * 3 * 2000, 3 * 3 * 1024 * 8 / (3 * 3 * 2e-6)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames, cis, lt, _ := genFrames(t, synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 4, MsgSize: 4096, MTU: 1024})
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			msg, at := -1, start
			for i, data := range frames {
				pkt := gopacket.NewPacket(data, lt, gopacket.Default)
				bth, _ := pkt.Layer(layers.LayerTypeBTH).(*layers.BTH)
				switch {
				case bth != nil && bth.Opcode.Position() == layers.PositionFirst:
					msg++
					at = start.Add(time.Duration(msg) * 10 * time.Second)
				case bth != nil && bth.Opcode.IsRequest() && bth.Opcode.Position() != layers.PositionNone && bth.Opcode.Position() != layers.PositionOnly:
					at = at.Add(tc.spaced[msg])
				default:
					at = at.Add(time.Nanosecond)
				}
				cis[i].Timestamp = at
			}
			require.Equal(t, 3, msg, "four messages")
			a := analyze.New(analyze.Options{})
			for i := range frames {
				a.Feed(cis[i], lt, frames[i])
			}
			rep := a.Finish()
			var req *analyze.Flow
			for i := range rep.Flows {
				if rep.Flows[i].Requests.Packets > 0 {
					req = &rep.Flows[i]
				}
			}
			require.NotNil(t, req)
			assert.Equal(t, tc.wantNs, req.ActiveNs)
			require.NotNil(t, req.ActiveThroughputBps)
			assert.InEpsilon(t, tc.wantBps, *req.ActiveThroughputBps, 1e-9)
			require.NotNil(t, req.ThroughputBps)
			assert.Less(t, *req.ThroughputBps, 1e4, "the average over 30 s")
		})
	}
}
