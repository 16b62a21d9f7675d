package analyze_test

import (
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestOnRelease: the library never collects garbage by itself; Finish
// calls the caller's OnRelease once the flow table is released and after
// every 32,768 flows turned into reports, and only when there are that
// many flows.
func TestOnRelease(t *testing.T) {
	template := roceFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: 1, PSN: 1}, gopacket.Payload(make([]byte, 8)))
	for _, tc := range []struct {
		name  string
		flows int
		calls int
	}{
		{"few flows", 1_000, 0},
		{"one batch", 32_768, 2},
		{"two batches and one more", 2*32_768 + 1, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			a := analyze.New(analyze.Options{NoICRC: true, OnRelease: func() { calls++ }})
			feedQPs(a, template, tc.flows)
			r := a.Finish()
			assert.Len(t, r.Flows, tc.flows)
			assert.Equal(t, tc.calls, calls)
		})
	}
}
