package points

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// permutations returns every order of fs.
func permutations(fs []flowDelta) [][]flowDelta {
	if len(fs) <= 1 {
		return [][]flowDelta{append([]flowDelta(nil), fs...)}
	}
	var out [][]flowDelta
	for i := range fs {
		rest := append(append([]flowDelta(nil), fs[:i]...), fs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]flowDelta{fs[i]}, p...))
		}
	}
	return out
}

// TestSplitOffsetOrderFree: the flows' delta ranges come from a map; the
// estimate must be the same in every order. The first case is the one
// of issue 13's testdata run: two CM flows tied on their smallest delta
// (0) with different largest ones gave a two_way offset of 0 in one order
// and of 4000 ns in another.
func TestSplitOffsetOrderFree(t *testing.T) {
	cases := []struct {
		name string
		fs   []flowDelta
		want pairEstimate
	}{
		{"tied lo, different hi", []flowDelta{{0, 4000}, {0, 0}, {4000, 4000}},
			pairEstimate{off: 0, err: 0, method: MethodTwoWay, shared: 9}},
		{"two directions", []flowDelta{{-3000, -1000}, {5000, 9000}, {-2000, -1500}},
			pairEstimate{off: 2000, err: 3000, method: MethodTwoWay, shared: 9}},
		{"overlap: one way", []flowDelta{{100, 900}, {100, 300}, {200, 950}},
			pairEstimate{off: 100, err: -1, method: MethodOneWay, shared: 9}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range permutations(tc.fs) {
				got := splitOffset(p, 9)
				require.NotNil(t, got)
				assert.Equal(t, tc.want, *got, "order %v", p)
			}
		})
	}
}

// TestEstimateClocksRepeatable: the same samplers give the same offsets
// and groups on every call (map iteration order differs between calls).
func TestEstimateClocksRepeatable(t *testing.T) {
	a, b := NewSampler(0), NewSampler(0)
	const off = 7 * time.Microsecond
	for i := range uint32(300) {
		at := time.Duration(i) * time.Microsecond
		a.Add(write(i, at, uint64(i)))
		b.Add(write(i, at+off+2*time.Microsecond, uint64(i)))
		b.Add(ack(i, at+off+3*time.Microsecond, uint64(i)))
		a.Add(ack(i, at+5*time.Microsecond, uint64(i)))
		// A second flow pair tied with the first on its smallest delta.
		a.Add(packet(hostA, hostB, 0x33, i, layers.OpcodeRCSendOnly, at, uint64(i), 0x5E000000+i, layers.ICRCOK))
		b.Add(packet(hostA, hostB, 0x33, i, layers.OpcodeRCSendOnly, at+off+2*time.Microsecond+time.Duration(i%3)*time.Microsecond, uint64(i), 0x5E000000+i, layers.ICRCOK))
	}
	first := EstimateClocks([]*Sampler{a, b}, nil)
	require.Equal(t, [][]int{{0, 1}}, first.Groups)
	for range 50 {
		assert.Equal(t, first, EstimateClocks([]*Sampler{a, b}, nil))
	}
}

// TestSamplerSetOrderFree: a sampler's kept set depends on the
// transmissions it was given, not on the order of a map walk when the
// level rises; and it keeps every transmission of one PSN or none (the
// hash covers flow and PSN only), so two files' samples show the PSNs
// they disagree on.
func TestSamplerSetOrderFree(t *testing.T) {
	fill := func() *Sampler {
		s := NewSampler(500)
		for i := range uint32(20_000) {
			s.Add(write(i, time.Duration(i)*time.Microsecond, uint64(i)))
			s.Add(packet(hostA, hostB, 0x11, i, layers.OpcodeRCRDMAWriteLast, time.Duration(i)*time.Microsecond, uint64(i), 0xD0000000+i, layers.ICRCOK))
		}
		return s
	}
	ref := fill()
	for range 5 {
		s := fill()
		assert.Equal(t, ref.level, s.level)
		assert.Equal(t, ref.keys, s.keys)
	}
	perPSN := map[uint32]int{}
	for k := range ref.keys {
		perPSN[k.psn]++
	}
	for psn, n := range perPSN {
		assert.Equal(t, 2, n, "both packets of PSN %d are kept", psn)
	}
}

// TestMeets: the rule deciding that two files are capture points of one
// traffic, on samplers built from packets whose truth is known.
func TestMeets(t *testing.T) {
	cm := func(psn uint32, at time.Duration) *analyze.Packet {
		p := packet(hostA, hostB, 1, psn, layers.OpcodeUDSendOnly, at, 0, 0xCC000000+psn, layers.ICRCOK)
		return p
	}
	hostC := analyze.Addr{IP: netip.MustParseAddr("10.0.0.3")}
	cases := []struct {
		name string
		fill func(a, b *Sampler)
		want bool
	}{
		{"same traffic, some tap drops", func(a, b *Sampler) {
			for i := range uint32(100) {
				a.Add(write(i, time.Duration(i)*time.Microsecond, 0))
				if i%10 != 3 {
					b.Add(write(i, time.Duration(i)*time.Microsecond+time.Microsecond, 0))
				}
			}
		}, true},
		{"only byte-identical CM datagrams", func(a, b *Sampler) {
			for i := range uint32(3) {
				a.Add(cm(i, 0))
				b.Add(cm(i, 5*time.Microsecond))
			}
			for i := range uint32(20) {
				a.Add(write(1000+i, time.Microsecond, 0))
				b.Add(write(5000+i, time.Microsecond, 0))
			}
		}, false},
		{"same first PSNs, then other bytes", func(a, b *Sampler) {
			for i := range uint32(100) {
				a.Add(write(i, time.Duration(i)*time.Microsecond, 0))
				if i < 20 {
					b.Add(write(i, time.Duration(i)*time.Microsecond, 0))
				} else {
					b.Add(packet(hostA, hostB, 0x11, i, layers.OpcodeRCSendMiddle, time.Duration(i)*time.Microsecond, 0, 0xBB000000+i, layers.ICRCOK))
				}
			}
		}, false},
		{"too few shared", func(a, b *Sampler) {
			for i := range uint32(MinShared - 1) {
				a.Add(write(i, 0, 0))
				b.Add(write(i, time.Microsecond, 0))
			}
		}, false},
		{"a small part of the smaller file", func(a, b *Sampler) {
			for i := range uint32(100) {
				a.Add(write(i, 0, 0))
				b.Add(packet(hostC, hostB, 0x77, i, layers.OpcodeRCSendOnly, 0, 0, 0x77000000+i, layers.ICRCOK))
				if i < 10 {
					b.Add(write(i, time.Microsecond, 0))
				}
			}
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := NewSampler(0), NewSampler(0)
			tc.fill(a, b)
			lists, flows := sampledLists([]*Sampler{a, b}, 0)
			e, _ := estimatePair(lists[0], lists[1], newPairScratch(flows))
			got := e != nil
			assert.Equal(t, tc.want, got, fmt.Sprint(tc.name))
			_, meet := EstimateOffsets([]*Sampler{a, b}, nil)
			assert.Equal(t, tc.want, meet)
		})
	}
}

// TestEstimateClocksGroups: files meeting in two separate groups; the
// group without the reference keeps its first file's clock (none) and
// its other file gets its offset from that one.
func TestEstimateClocksGroups(t *testing.T) {
	hostC := analyze.Addr{IP: netip.MustParseAddr("10.0.0.3")}
	ss := []*Sampler{NewSampler(0), NewSampler(0), NewSampler(0), NewSampler(0), NewSampler(0)}
	for i := range uint32(100) {
		at := time.Duration(i) * time.Microsecond
		ss[0].Add(write(i, at, 0))
		ss[2].Add(write(i, at+time.Microsecond, 0))
		x := packet(hostC, hostB, 0x99, i, layers.OpcodeRCSendOnly, at, 0, 0x99000000+i, layers.ICRCOK)
		ss[1].Add(x)
		y := *x
		y.Time = x.Time.Add(3 * time.Microsecond)
		ss[3].Add(&y)
		ss[4].Add(packet(hostC, hostA, 0x55, i, layers.OpcodeRCSendOnly, at, 0, 0x55000000+i, layers.ICRCOK))
	}
	e := EstimateClocks(ss, nil)
	assert.Equal(t, [][]int{{0, 2}, {1, 3}}, e.Groups)
	assert.Equal(t, MethodReference, e.Offsets[0].Method)
	assert.Equal(t, MethodOneWay, e.Offsets[2].Method)
	assert.Equal(t, time.Microsecond, e.Offsets[2].Offset)
	assert.Equal(t, MethodNone, e.Offsets[1].Method)
	assert.Equal(t, MethodOneWay, e.Offsets[3].Method)
	assert.Equal(t, 3*time.Microsecond, e.Offsets[3].Offset)
	assert.Equal(t, Offset{Method: MethodNone}, e.Offsets[4])
}
