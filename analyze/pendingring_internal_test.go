package analyze

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPendingRing: pushes, acknowledgements (keepNewest) and lookups, with
// the requests left awaiting an ACK written out newest first by hand. A
// request is pushed as {psn: k, t: 10·k}, so each PSN names its push.
func TestPendingRing(t *testing.T) {
	type op struct {
		push int // push PSNs 1.. this many more (continuing the count)
		keep int // then keepNewest(keep), when ≥ 0
	}
	seq := func(from, to int) []uint32 { // from down to to
		var s []uint32
		for k := from; k >= to; k-- {
			s = append(s, uint32(k))
		}
		return s
	}
	tests := []struct {
		name    string
		ops     []op
		want    []uint32 // PSNs awaiting an ACK, newest first
		bufLen  int      // the buffer grows only as far as needed
		absent  []uint32 // PSNs find must not find
		findAge map[uint32]int
	}{
		{name: "empty", ops: nil, want: nil, bufLen: 0, absent: []uint32{0, 1}},
		{name: "three", ops: []op{{push: 3, keep: -1}}, want: []uint32{3, 2, 1}, bufLen: 3,
			absent: []uint32{0, 4}, findAge: map[uint32]int{3: 0, 2: 1, 1: 2}},
		{name: "full", ops: []op{{push: 64, keep: -1}}, want: seq(64, 1), bufLen: 64,
			findAge: map[uint32]int{64: 0, 1: 63}},
		// 70 pushes: the first six are overwritten, the buffer stays 64.
		{name: "wrapped", ops: []op{{push: 70, keep: -1}}, want: seq(70, 7), bufLen: 64,
			absent: []uint32{1, 6}, findAge: map[uint32]int{70: 0, 7: 63}},
		// An ACK for PSN 3 of 5 (age 2) acknowledges 3, 2, 1 too.
		{name: "acked", ops: []op{{push: 5, keep: 2}}, want: []uint32{5, 4}, bufLen: 5,
			absent: []uint32{1, 2, 3}},
		// Growing again after an ACK: the acknowledged stay gone.
		{name: "acked then grown", ops: []op{{push: 5, keep: 2}, {push: 2, keep: -1}},
			want: []uint32{7, 6, 5, 4}, bufLen: 7, absent: []uint32{3}},
		// Acknowledged across the wrap: 100 pushes, keep the 10 newest, push 60 more:
		// 70 would await, the ring holds 64 (160 down to 97).
		{name: "acked across the wrap", ops: []op{{push: 100, keep: 10}, {push: 60, keep: -1}},
			want: seq(160, 97), bufLen: 64, absent: []uint32{96, 90}},
		{name: "all acked", ops: []op{{push: 80, keep: 0}}, want: nil, bufLen: 64, absent: []uint32{80}},
		{name: "keep more than held", ops: []op{{push: 2, keep: 5}}, want: []uint32{2, 1}, bufLen: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r pendingRing
			k := 0
			for _, o := range tt.ops {
				for range o.push {
					k++
					r.push(pendingReq{psn: uint32(k), t: int64(10 * k)})
				}
				if o.keep >= 0 {
					r.keepNewest(o.keep)
				}
			}
			require.Equal(t, len(tt.want), r.len())
			assert.Len(t, r.buf, tt.bufLen)
			for i, psn := range tt.want {
				assert.Equal(t, pendingReq{psn: psn, t: int64(10 * psn)}, r.newest(i), "age %d", i)
			}
			for _, psn := range tt.absent {
				_, ok := r.find(psn)
				assert.False(t, ok, "PSN %d", psn)
			}
			for psn, age := range tt.findAge {
				got, ok := r.find(psn)
				assert.True(t, ok, "PSN %d", psn)
				assert.Equal(t, age, got, "PSN %d", psn)
			}
		})
	}
}
