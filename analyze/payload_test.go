package analyze_test

import (
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestPacketPayload: the decoded packet carries the IB payload after the
// RETH, without pad and ICRC, as it was written into the frame; whole or
// as far as a snap length kept it.
func TestPacketPayload(t *testing.T) {
	payload := []byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5} // 9 bytes: 3 of pad
	frame := writeOnly(7, payload)
	for _, tc := range []struct {
		name string
		keep int
		want []byte
	}{
		{"whole", len(frame), payload},
		{"cut inside the payload", len(frame) - 4 - 3 - 5, payload[:4]},
		{"empty", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := analyze.New(analyze.Options{})
			data, length := frame[:tc.keep], len(frame)
			if tc.keep == 0 {
				data = writeOnly(7, nil)
				length = len(data)
			}
			p := a.Feed(gopacket.CaptureInfo{CaptureLength: len(data), Length: length}, 1, data)
			require.NotNil(t, p.RETH)
			assert.Equal(t, len(tc.want), len(p.Payload))
			if len(tc.want) > 0 {
				assert.Equal(t, tc.want, p.Payload)
			}
		})
	}
}
