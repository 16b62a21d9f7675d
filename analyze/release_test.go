package analyze_test

import (
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestOnRelease: the library never collects garbage by itself; Finish
// and a report stream call the caller's OnRelease once the flow table is
// released and after every 32,768 flows turned into reports, and only
// when there are that many flows. A stream calls it once more at its
// start: its Analyzer (each shard of 32,768 flows or more: here one host
// pair, so one shard, holds every flow) before its report is allocated,
// the combined stream once the combiner is (its startReport and
// newCombiner leave garbage: with -j 2 on 65,536 QPs, leaving that call
// out raised the peak RSS 257-261 -> 276-281 MB).
func TestOnRelease(t *testing.T) {
	template := roceFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, DestQP: 1, PSN: 1}, gopacket.Payload(make([]byte, 8)))
	// each way to finish an analysis of n flows, returning the flows
	// reported, and the calls it makes at its start beyond Finish's
	type finish struct {
		run   func(opts analyze.Options, n int) int
		extra int
	}
	finishes := map[string]finish{
		"Finish": {func(opts analyze.Options, n int) int {
			a := analyze.New(opts)
			feedQPs(a, template, n)
			return len(a.Finish().Flows)
		}, 0},
		"FinishStream": {func(opts analyze.Options, n int) int {
			a := analyze.New(opts)
			feedQPs(a, template, n)
			return len(a.FinishStream().Report().Flows)
		}, 1},
		"Sharded.FinishStream": {func(opts analyze.Options, n int) int {
			s := analyze.NewSharded(opts, 3)
			feedQPsTo(s.Feed, template, n)
			st, err := s.FinishStream()
			require.NoError(t, err)
			return len(st.Report().Flows)
		}, 1},
	}
	for _, tc := range []struct {
		name  string
		flows int
		calls int
	}{
		{"few flows", 1_000, 0},
		{"one batch", 32_768, 2},
		{"two batches and one more", 2*32_768 + 1, 3},
	} {
		for name, fin := range finishes {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				calls := 0
				assert.Equal(t, tc.flows, fin.run(analyze.Options{NoICRC: true, OnRelease: func() { calls++ }}, tc.flows))
				want := tc.calls
				if want > 0 {
					want += fin.extra
				}
				assert.Equal(t, want, calls)
			})
		}
	}
}
