package layers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestRNRTimer checks the 32 RNR NAK timer codes of IBTA table 45.
func TestRNRTimer(t *testing.T) {
	ms := []float64{
		655.36, 0.01, 0.02, 0.03, 0.04, 0.06, 0.08, 0.12, 0.16, 0.24, 0.32, 0.48, 0.64, 0.96, 1.28, 1.92,
		2.56, 3.84, 5.12, 7.68, 10.24, 15.36, 20.48, 30.72, 40.96, 61.44, 81.92, 122.88, 163.84, 245.76, 327.68, 491.52,
	}
	for code, want := range ms {
		got := RNRTimerDuration(uint8(code))
		assert.Equal(t, time.Duration(want*1e6+0.5), got, "code %d", code)
		a := AETH{Syndrome: 0x20 | uint8(code)}
		assert.True(t, a.IsRNRNAK())
		assert.Equal(t, got, a.RNRTimer())
	}
	assert.Equal(t, RNRTimerDuration(1), RNRTimerDuration(33), "only the low five bits count")
}

func TestAETHSyndrome(t *testing.T) {
	tests := []struct {
		syndrome uint8
		typ      AckType
		text     string
	}{
		{0x1F, AckTypeACK, "ACK credits=unlimited"},
		{0x00, AckTypeACK, "ACK credits=0"},
		{0x0A, AckTypeACK, "ACK credits=10"},
		{0x20, AckTypeRNRNAK, "RNR_NAK timer=655.36ms"},
		{0x2C, AckTypeRNRNAK, "RNR_NAK timer=0.64ms"},
		{0x2E, AckTypeRNRNAK, "RNR_NAK timer=1.28ms"},
		{0x60, AckTypeNAK, "NAK PSN_SEQUENCE_ERROR"},
		{0x61, AckTypeNAK, "NAK INVALID_REQUEST"},
		{0x62, AckTypeNAK, "NAK REMOTE_ACCESS_ERROR"},
		{0x63, AckTypeNAK, "NAK REMOTE_OPERATIONAL_ERROR"},
		{0x64, AckTypeNAK, "NAK INVALID_RD_REQUEST"},
		{0x65, AckTypeNAK, "NAK RESERVED_5"},
		{0x40, AckTypeReserved, "RESERVED syndrome=0x40"},
		{0x9F, AckTypeACK, "ACK credits=unlimited"}, // bit 7 is reserved
	}
	for _, tt := range tests {
		a := AETH{Syndrome: tt.syndrome}
		assert.Equal(t, tt.typ, a.Type(), "0x%02x", tt.syndrome)
		assert.Equal(t, tt.text, a.SyndromeString(), "0x%02x", tt.syndrome)
		assert.Equal(t, tt.typ == AckTypeACK, a.IsACK())
		assert.Equal(t, tt.typ == AckTypeNAK, a.IsNAK())
		assert.Equal(t, tt.syndrome&0x1F, a.Value())
	}
	assert.Equal(t, "RNR_NAK", AckTypeRNRNAK.String())
	assert.Equal(t, NAKRemoteAccessError, (&AETH{Syndrome: 0x62}).NAKCode())
	assert.Equal(t, uint8(10), (&AETH{Syndrome: 0x0A}).Credits())
}
