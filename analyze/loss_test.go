package analyze_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestSendPSNStart rewrites the REP's StartingPSN of a generated capture
// (bytes 20–22 of the REP's MAD data, PROTOCOL.md; ICRC not checked) so
// that the requester's first request (PSN 1000) comes after or before the
// PSN the handshake says its requests start at.
func TestSendPSNStart(t *testing.T) {
	for _, tc := range []struct {
		name        string
		send        uint32
		missing     uint64
		beforeStart bool
	}{
		{"at the send PSN", 1000, 0, false},
		{"three PSNs after it", 997, 3, false},
		{"after it, across the wrap", 0xFFFFFE, 1002, false},
		{"before it", 1004, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, rep, firstReq := analyzeWithREPStartingPSN(t, tc.send)
			require.Len(t, rep.Connections, 1)
			require.NotNil(t, rep.Connections[0].Requester.SendPSN)
			assert.Equal(t, tc.send, *rep.Connections[0].Requester.SendPSN)
			var flow *analyze.Flow
			for i := range rep.Flows {
				if rep.Flows[i].DestQP > 1 && rep.Flows[i].Requests.Packets > 0 {
					flow = &rep.Flows[i]
				}
			}
			require.NotNil(t, flow)
			assert.Equal(t, tc.missing, flow.Requests.Missing)
			assert.Equal(t, tc.missing, flow.Requests.MissingNotCaptured, "the ACKs cover the PSNs before the first request")
			if tc.missing > 0 {
				require.NotEmpty(t, flow.Requests.Gaps)
				assert.Equal(t, analyze.Gap{From: tc.send, To: 999, Count: uint32(tc.missing), Frame: firstReq}, flow.Requests.Gaps[0])
			}
			checkSendPSNFindings(t, rep, firstReq, tc.beforeStart, tc.missing > 0)
			for _, tf := range tr.Flows {
				if tf.DestQP == flow.DestQP {
					assert.Equal(t, uint64(tf.Requests.Packets), flow.Requests.Packets)
				}
			}
		})
	}
}

// analyzeWithREPStartingPSN generates RDMA WRITEs whose requester starts
// at PSN 1000, rewrites the StartingPSN of the REP (frame 2) to send and
// analyzes the capture (ICRC not checked); it returns the generator's
// truth, the report and the frame of the requester's first request.
func analyzeWithREPStartingPSN(t *testing.T, send uint32) (*synth.Truth, *analyze.Report, uint64) {
	t.Helper()
	const repPSN = 14 + 20 + 8 + 12 + 8 + 24 + 20 // Ethernet, IPv4, UDP, BTH, DETH, MAD header
	start := uint32(1000)
	var capBuf bytes.Buffer
	cfg := synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 4, MsgSize: 1024, StartPSN: &start}
	tr, err := synth.Generate(cfg, &capBuf, nil)
	require.NoError(t, err)
	r, err := capture.NewReader(&capBuf)
	require.NoError(t, err)
	a := analyze.New(analyze.Options{NoICRC: true})
	firstReq := uint64(0)
	for i := 1; ; i++ {
		ci, data, lt, err := r.Next()
		if err != nil {
			break
		}
		if i == 2 { // the REP
			require.Equal(t, []byte{0, 0x03, 0xe8}, data[repPSN:repPSN+3], "the REP carries the requester's starting PSN")
			data = append([]byte(nil), data...)
			data[repPSN], data[repPSN+1], data[repPSN+2] = byte(send>>16), byte(send>>8), byte(send)
		}
		p := a.Feed(ci, lt, data)
		if firstReq == 0 && p.BTH != nil && p.BTH.DestQP > 1 && p.BTH.Opcode.IsRequest() {
			firstReq = p.Frame
		}
	}
	return tr, a.Report(), firstReq
}

// checkSendPSNFindings checks the findings of TestSendPSNStart: a
// psn_before_start warning where the first request comes before the send
// PSN, a capture_gap info where PSNs before it are missing, none
// otherwise; either at the first request's frame.
func checkSendPSNFindings(t *testing.T, rep *analyze.Report, firstReq uint64, beforeStart, missing bool) {
	t.Helper()
	var kinds []string
	for _, f := range rep.Findings {
		kinds = append(kinds, string(f.Kind)+"/"+f.Severity.String())
		if f.Kind == analyze.KindPSNBeforeStart || f.Kind == analyze.KindCaptureGap {
			assert.Equal(t, firstReq, f.Frame)
		}
	}
	switch {
	case beforeStart:
		assert.Equal(t, []string{"psn_before_start/warning"}, kinds)
	case missing:
		assert.Equal(t, []string{"capture_gap/info"}, kinds)
	default:
		assert.Empty(t, kinds)
	}
}
