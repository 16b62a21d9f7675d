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
// however many flows a direction holds and across the index's growth,
// and that the direction of a flow and the reverse direction stay apart.
func TestFlowTable(t *testing.T) {
	x, y := Addr{IP: netip.MustParseAddr("10.0.0.1")}, Addr{IP: netip.MustParseAddr("10.0.0.2")}
	g := Addr{IP: netip.MustParseAddr("fe80::1")}
	lid := Addr{LID: 7, IsLID: true}
	for _, n := range []int{1, dirInline, dirInline + 1, flowIndexMin, 300} {
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
		assert.Equal(t, len(keys), a.index.used)
		assert.LessOrEqual(t, 8*a.index.used, 7*len(a.index.slots), "n=%d: the index is at most 7/8 full", n)
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
		assert.Len(t, a.dirFlows(y, x, flowTunnel{}), n)
	}
}

// TestFlowIndexSameHash gives every flow the same hash, as keys crafted
// against a known seed would: each is still found, by the key checked
// against the flow each slot names, and an unknown key is not.
func TestFlowIndexSameHash(t *testing.T) {
	a := New(Options{})
	x, y := Addr{IP: netip.MustParseAddr("10.0.0.1")}, Addr{IP: netip.MustParseAddr("10.0.0.2")}
	var keys []flowKey
	for qp := range uint32(100) {
		k := flowKey{src: x, dst: y, qp: qp}
		if qp%2 == 1 {
			k = flowKey{src: y, dst: x, qp: qp - 1}
		}
		keys = append(keys, k)
		require.NotNil(t, a.flowFor(&Packet{Src: k.src, Dst: k.dst, BTH: &layers.BTH{DestQP: k.qp}}))
	}
	const h = 0x5a5a_0007
	a.index.slots, a.index.used = nil, 0
	for i := range keys {
		a.index.add(h, int32(i))
	}
	for i, k := range keys {
		idx, ok := a.find(&k, h)
		require.True(t, ok, "key %d", i)
		require.Equal(t, int32(i), idx)
	}
	k := flowKey{src: x, dst: y, qp: 1000}
	_, ok := a.find(&k, h)
	assert.False(t, ok)
}

// TestFlowIndexLikeMaps feeds keys that differ only where a hash of
// their bytes might not tell them apart (same last bytes, IPv4 vs
// IPv4-mapped, LIDs with IP bytes, zero vs ::, an IPv6 zone) in random
// order under a flow cap, and checks flowFor against a model keyed by the
// hosts' key (hostsOf) and the QP in a Go map.
func TestFlowIndexLikeMaps(t *testing.T) {
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
			k := mk{hostsOf(s, d, flowTunnel{}), qp}
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
