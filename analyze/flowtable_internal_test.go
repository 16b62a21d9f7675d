package analyze

import (
	"math/rand/v2"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestFlowTable checks that flowFor finds every flow again by its key,
// whether its direction holds few flows (read as a list) or many (a map
// by QP), with the flow cache emptied between the two passes, and that
// the direction of a flow and the reverse direction stay apart.
func TestFlowTable(t *testing.T) {
	x, y := Addr{IP: netip.MustParseAddr("10.0.0.1")}, Addr{IP: netip.MustParseAddr("10.0.0.2")}
	g := Addr{IP: netip.MustParseAddr("fe80::1")}
	lid := Addr{LID: 7, IsLID: true}
	for _, n := range []int{1, dirMapAt - 1, dirMapAt, dirMapAt + 1, 300} {
		a := New(Options{})
		var keys []flowKey
		for i := range n {
			qp := uint32(0x100 + 37*i)
			keys = append(keys, flowKey{src: x, dst: y, qp: qp}, flowKey{src: y, dst: x, qp: qp}, flowKey{src: g, dst: lid, qp: qp})
		}
		flowAt := func(k flowKey) *flowState {
			return a.flowFor(&Packet{Src: k.src, Dst: k.dst, BTH: &layers.BTH{DestQP: k.qp}})
		}
		for _, k := range keys {
			require.NotNil(t, flowAt(k))
		}
		require.Len(t, a.flowList, len(keys), "n=%d: one flow per key", n)
		a.flowCache = [flowCacheLen]cacheSlot{}
		for i, k := range keys {
			f := flowAt(k)
			assert.Same(t, a.flowList[i], f, "n=%d key %d", n, i)
			assert.Equal(t, k, f.key())
			idx, ok := a.flowOf(k)
			assert.True(t, ok)
			assert.Equal(t, int32(i), idx)
		}
		_, ok := a.flowOf(flowKey{src: x, dst: y, qp: 1})
		assert.False(t, ok, "an unknown QP")
		d := a.dirs[hostsOf(x, y)]
		assert.Equal(t, n >= dirMapAt, d.qps != nil, "n=%d: the map is made by the %d-th flow", n, dirMapAt)
		assert.Len(t, a.dirFlows(y, x), n)
	}
}

// TestFlowCacheLikeMaps feeds keys built to collide in the flow cache
// (same last bytes, IPv4 vs IPv4-mapped, LIDs with IP bytes, zero vs ::)
// in random order under a flow cap, and checks flowFor against a model
// keyed as the maps are (hostsOf + QP).
func TestFlowCacheLikeMaps(t *testing.T) {
	ips := []netip.Addr{
		netip.MustParseAddr("10.0.1.2"), netip.MustParseAddr("::ffff:10.0.1.2"), netip.MustParseAddr("10.9.1.2"),
		netip.MustParseAddr("fe80::1:102"), netip.MustParseAddr("fe80::2:102"), netip.MustParseAddr("::"), {},
		netip.MustParseAddr("fe80::1:102%eth0"),
	}
	var addrs []Addr
	for _, ip := range ips {
		addrs = append(addrs, Addr{IP: ip})
		addrs = append(addrs, Addr{IP: ip, LID: 3, IsLID: true})
	}
	addrs = append(addrs, Addr{LID: 3, IsLID: true}, Addr{LID: 0x300, IsLID: true}, Addr{LID: 3})
	type mk struct {
		h  hostsKey
		qp uint32
	}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		maxFlows := 1 + rng.IntN(400)
		a := New(Options{MaxFlows: maxFlows})
		model := map[mk]int32{}
		for range 20000 {
			s, d := addrs[rng.IntN(len(addrs))], addrs[rng.IntN(len(addrs))]
			qp := uint32(rng.IntN(40))
			if rng.IntN(4) == 0 {
				qp ^= 1 << 16
			}
			k := mk{hostsOf(s, d), qp}
			want, ok := model[k]
			if !ok && len(model) < maxFlows {
				want, ok = int32(len(model)), true
				model[k] = want
			}
			f := a.flowFor(&Packet{Src: s, Dst: d, BTH: &layers.BTH{DestQP: qp}})
			if !ok {
				require.Nil(t, f, "seed %d: %v %v %d refused", seed, s, d, qp)
				continue
			}
			require.NotNil(t, f)
			require.Equal(t, want, f.index, "seed %d: %v -> %v qp %d", seed, s, d, qp)
		}
	}
}
