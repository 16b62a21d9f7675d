package nccl

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestKindOf: the kind, algorithm and S of a collective from its links
// (each one connection: receives posted, bytes, the size its CTS
// offered), against NCCL's ring and tree patterns worked by hand.
func TestKindOf(t *testing.T) {
	const mib = 1 << 20
	type l struct {
		s, r         int
		steps, bytes uint64
	}
	ring3 := func(steps, bytes uint64) []l {
		return []l{{0, 1, steps, bytes}, {1, 2, steps, bytes}, {2, 0, steps, bytes}}
	}
	for _, tc := range []struct {
		name      string
		n         int
		links     []l
		kind, alg string
		size      uint64
	}{
		{"ring AllReduce, one loop: 2(n−1) ring steps of 2 slices", 3, ring3(8, 32768), KindAllReduce, AlgorithmRing, 24576},
		{"ring AllReduce of 1 byte, links uneven", 3, []l{{0, 1, 8, 1}, {1, 2, 8, 2}, {2, 0, 8, 1}}, KindAllReduce, AlgorithmRing, 1},
		{"ring AllReduce, two loops: the first of full 2 MiB chunks", 3, ring3(16, 12*mib), KindAllReduce, AlgorithmRing, 9 * mib},
		{"ring of n−1 ring steps: AllGather or ReduceScatter", 3, ring3(4, 32768), KindUnknown, AlgorithmRing, 0},
		{"ring steps of neither", 3, ring3(6, 32768), KindUnknown, AlgorithmRing, 0},
		{"8 steps too many bytes for one AllReduce loop", 3, ring3(8, 9*mib), KindUnknown, AlgorithmRing, 0},
		{"tree AllReduce: each edge as many bytes down as up", 3, []l{{0, 2, 4, 100}, {2, 0, 4, 100}, {1, 2, 4, 50}, {2, 1, 4, 50}}, KindAllReduce, AlgorithmTree, 75},
		{"tree, an edge uneven", 3, []l{{0, 2, 4, 100}, {2, 0, 4, 90}, {1, 2, 4, 50}, {2, 1, 4, 50}}, KindUnknown, AlgorithmTree, 0},
		{"one link of three ranks: send/recv", 3, []l{{1, 2, 2, 4096}}, KindSendRecv, AlgorithmUnknown, 4096},
		{"one link of two ranks: broadcast, reduce or send/recv", 2, []l{{1, 0, 2, 4096}}, KindUnknown, AlgorithmUnknown, 0},
		{"a ring path (broadcast or reduce)", 3, []l{{0, 1, 2, 4096}, {1, 2, 2, 4096}}, KindUnknown, AlgorithmUnknown, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var links []*linkOf
			for _, x := range tc.links {
				cs := &connSteps{c: &conn{}, sender: x.s, receiver: x.r}
				links = append(links, &linkOf{Link: Link{SenderRank: new(x.s), ReceiverRank: new(x.r), Bytes: x.bytes, Messages: x.steps, Steps: x.steps},
					conns: []*connSteps{cs}, steps: map[*connSteps]uint64{cs: x.steps}, bytes: map[*connSteps]uint64{cs: x.bytes}, offer: map[*connSteps]uint64{cs: mib}})
			}
			kind, alg, size := kindOf(links, tc.n)
			assert.Equal(t, tc.kind, kind)
			assert.Equal(t, tc.alg, alg)
			assert.Equal(t, tc.size, size)
		})
	}
}
