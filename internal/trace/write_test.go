package trace_test

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/trace"
	"github.com/roce-dissect/roce-dissect/layers"
)

type event struct {
	Ph   string         `json:"ph"`
	Name string         `json:"name"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur"`
	Args map[string]any `json:"args"`
}

func TestWriteCapsEvents(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	src := analyze.Addr{IP: netip.MustParseAddr("10.0.0.1")}
	dst := analyze.Addr{IP: netip.MustParseAddr("10.0.0.2")}
	last := t0.Add(10 * time.Microsecond)
	rep := &analyze.Report{Flows: []analyze.Flow{{Src: "10.0.0.1", Dst: "10.0.0.2", DestQP: 0x11}}}
	rep.Capture.FirstTime, rep.Capture.LastTime = &t0, &last
	for _, tc := range []struct {
		name     string
		messages int
		cap      int
		slices   int
		left     float64 // events_left_out of the note; 0: no note
	}{
		{"under the cap", 3, 10, 3, 0},
		{"at the cap", 3, 3, 3, 0},
		{"over the cap", 5, 2, 2, 3},
		{"collector's cap", 5, 0, 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := trace.NewCollector(trace.Limits{Events: 4})
			for i := range tc.messages {
				at := t0.Add(time.Duration(i+1) * time.Microsecond)
				c.Message(analyze.Message{Src: src, Dst: dst, DestQP: 0x11, First: uint64(i + 1), Frame: uint64(i + 1), Time: at, Bytes: 64, Opcode: layers.OpcodeRCRDMAWriteOnly})
			}
			var buf bytes.Buffer
			require.NoError(t, trace.Write(&buf, rep, []trace.Source{{Name: "a.pcap", Collector: c}}, nil, trace.Limits{Events: tc.cap}))
			var tr struct {
				TraceEvents []event `json:"traceEvents"`
			}
			require.NoError(t, json.Unmarshal(buf.Bytes(), &tr), buf.String())
			slices := 0
			var left float64
			for _, ev := range tr.TraceEvents {
				switch {
				case ev.Ph == "X":
					slices++
					require.NotNil(t, ev.Dur)
					assert.Equal(t, 0.0, *ev.Dur, "a one-packet message")
					assert.Equal(t, "WRITE", ev.Name)
				case ev.Name == "trace_capped":
					left = ev.Args["events_left_out"].(float64)
				}
			}
			assert.Equal(t, tc.slices, slices)
			assert.Equal(t, tc.left, left)
		})
	}
}

func TestNilCollector(t *testing.T) {
	var c *trace.Collector
	assert.NotPanics(t, func() {
		c.Add(&analyze.Packet{})
		c.Message(analyze.Message{})
	})
}

// TestWriteTunnelFlows: the same addresses and QP in VXLAN VNI 100 and
// 200 are two flows of the report (analyze.Flow.Tunnel), and each gets its
// own track named as the report names it, with its own messages.
func TestWriteTunnelFlows(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	src := analyze.Addr{IP: netip.MustParseAddr("10.0.0.1")}
	dst := analyze.Addr{IP: netip.MustParseAddr("10.0.0.2")}
	last := t0.Add(10 * time.Microsecond)
	tunnels := []analyze.FlowTunnel{{Kind: "vxlan", ID: 100, IDName: "VNI"}, {Kind: "vxlan", ID: 200, IDName: "VNI"}}
	rep := &analyze.Report{}
	for i := range tunnels {
		rep.Flows = append(rep.Flows, analyze.Flow{Src: "10.0.0.1", Dst: "10.0.0.2", DestQP: 0x11, Tunnel: &tunnels[i]})
	}
	rep.Capture.FirstTime, rep.Capture.LastTime = &t0, &last
	c := trace.NewCollector(trace.Limits{Events: 100})
	for i := range 5 { // 3 messages in VNI 100, 2 in VNI 200
		at := t0.Add(time.Duration(i+1) * time.Microsecond)
		c.Message(analyze.Message{Src: src, Dst: dst, DestQP: 0x11, Tunnel: tunnels[min(i/3, 1)], First: uint64(i + 1), Frame: uint64(i + 1), Time: at, Bytes: 64, Opcode: layers.OpcodeRCRDMAWriteOnly})
	}
	var buf bytes.Buffer
	require.NoError(t, trace.Write(&buf, rep, []trace.Source{{Name: "a.pcap", Collector: c}}, nil, trace.Limits{Events: 100}))
	var tr struct {
		TraceEvents []struct {
			event
			Tid int `json:"tid"`
		} `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &tr), buf.String())
	names := map[int]string{}
	for _, ev := range tr.TraceEvents {
		if ev.Ph == "M" && ev.Name == "thread_name" {
			names[ev.Tid] = ev.Args["name"].(string)
		}
	}
	slices := map[string]int{}
	for _, ev := range tr.TraceEvents {
		if ev.Ph == "X" {
			slices[names[ev.Tid]]++
		}
	}
	assert.Equal(t, map[string]int{
		"10.0.0.1 → 10.0.0.2 QP 0x000011 in vxlan VNI 100": 3,
		"10.0.0.1 → 10.0.0.2 QP 0x000011 in vxlan VNI 200": 2,
	}, slices)
}
