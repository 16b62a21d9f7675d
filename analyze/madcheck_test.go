package analyze_test

import (
	"fmt"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestShortMADsMalformed: a MAD shorter than 256 bytes in a frame the
// capture did not cut is malformed and makes no connection, from 0 bytes
// (a datagram to QP1 with no payload was an ordinary packet) to 255. An RC
// SEND to QP1 carries no MAD (no DETH): its payload, even a CM REQ's first
// bytes, makes no connection (a 28-byte one made one with QPN 0) and the
// packet is not malformed. The MAD bytes are a real CM REQ's first n bytes (cm's
// encoder, the oracle): header, then the REQ's LocalCommID and on.
func TestShortMADsMalformed(t *testing.T) {
	full, err := (&cm.MAD{Header: cm.Header{BaseVersion: 1, MgmtClass: cm.ClassCM, ClassVersion: 2, Method: 3, AttributeID: cm.AttrConnectRequest},
		Message: &cm.ConnectRequest{LocalCommID: 9, LocalQPN: 0x100, TransportServiceType: cm.TransportRC}}).AppendBinary(nil)
	require.NoError(t, err)
	require.Len(t, full, cm.MADLen)
	ud := func(qp uint32, mad []byte) []byte {
		return roceFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeUDSendOnly, PKey: 0xFFFF, DestQP: qp}, &layers.DETH{QKey: 0x80010000, SrcQP: 1}, gopacket.Payload(mad))
	}
	rc := func(mad []byte) []byte {
		return roceFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: 1}, gopacket.Payload(mad))
	}
	tests := []struct {
		name      string
		frame     []byte
		n         int
		malformed bool
	}{
		{"UD to QP1, 0 bytes", ud(1, nil), 0, true},
		{"UD to QP0, 0 bytes", ud(0, nil), 0, true},
		{"UD to QP1, 4 bytes", ud(1, full[:4]), 4, true},
		{"UD to QP1, 24 bytes (a header)", ud(1, full[:24]), 24, true},
		{"UD to QP1, 28 bytes (a CommID)", ud(1, full[:28]), 28, true},
		{"UD to QP1, 100 bytes", ud(1, full[:100]), 100, true},
		{"RC SEND to QP1, 28 bytes", rc(full[:28]), 28, false},
		{"RC SEND to QP1, 100 bytes", rc(full[:100]), 100, false},
		{"UD to QP1, 256 bytes", ud(1, full), 256, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := analyze.New(analyze.Options{})
			feedFrames(a, tt.frame)
			r := a.Finish()
			if !tt.malformed {
				assert.Zero(t, r.Capture.Malformed)
				conns := 0
				if tt.n == cm.MADLen {
					conns = 1
				}
				assert.Len(t, r.Connections, conns)
				return
			}
			assert.Equal(t, uint64(1), r.Capture.Malformed)
			assert.Zero(t, r.Capture.RoCEPackets)
			assert.Empty(t, r.Connections)
			require.Len(t, r.Capture.MalformedFrames, 1)
			assert.Contains(t, r.Capture.MalformedFrames[0].Reason, fmt.Sprintf("short MAD: %d-byte MAD, need 256", tt.n))
			require.Len(t, r.Findings, 1)
			assert.Equal(t, analyze.KindMalformed, r.Findings[0].Kind)
		})
	}
}
