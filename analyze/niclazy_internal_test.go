package analyze

import (
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestNICStateLazy checks that a request flow's NIC state waits for its
// second request, and that the first request, kept in the flow until
// then, enters the ring with the PSN, length and time of its frame; and
// that its event state waits for a resend (a repeat of the last request
// is a capture duplicate, not a resend).
func TestNICStateLazy(t *testing.T) {
	only := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, AckReq: true}, gopacket.Payload(make([]byte, 64)))
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		psns     []uint32
		ringN    int
		events   bool
		timeouts uint64
	}{
		{"one request: no NIC state", []uint32{7}, 0, false, 0},
		{"two requests: both in the ring", []uint32{7, 8}, 2, false, 0},
		{"three requests", []uint32{7, 8, 9}, 3, false, 0},
		{"a repeat second: a capture duplicate", []uint32{7, 7}, 2, false, 0},
		{"a resend after a later request: a timeout", []uint32{7, 8, 7}, 3, true, 1},
		{"a hole filled: a reordering", []uint32{7, 9, 8}, 3, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Options{NoICRC: true})
			setQP(only, 0x123)
			for i, psn := range tc.psns {
				setPSN(only, psn)
				a.Feed(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(only), Length: len(only)}, gplayers.LinkTypeEthernet, only)
			}
			require.Len(t, a.flowList, 1)
			f := a.flowList[0]
			assert.True(t, f.hasNIC)
			if tc.ringN == 0 {
				assert.Nil(t, f.nic)
				nic, fs := a.nicReport(f, nil)
				require.NotNil(t, nic, "a request flow has a NIC report from its first request")
				assert.Empty(t, fs)
				assert.Equal(t, uint64(1), nic.reqPackets)
				return
			}
			require.NotNil(t, f.nic)
			assert.False(t, f.hasNICFirst)
			require.Equal(t, tc.ringN, f.nic.ringN)
			assert.Equal(t, tc.events, f.nic.nicEvents != nil, "event state")
			nic, _ := a.nicReport(f, nil)
			require.NotNil(t, nic)
			assert.Equal(t, tc.timeouts, nic.TimeoutResends)
			for i, psn := range tc.psns {
				r := f.nic.ring[i]
				assert.Equal(t, psn, r.psn, "ring %d", i)
				assert.Equal(t, uint32(len(only)), r.bytes, "ring %d", i)
				assert.Equal(t, ts.Add(time.Duration(i)*time.Microsecond).UnixNano(), r.t, "ring %d", i)
			}
		})
	}
}
