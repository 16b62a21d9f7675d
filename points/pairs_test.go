package points

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// psnKey is a flow and PSN.
type psnKey struct {
	flow flowKey
	psn  uint32
}

// estimatePairMaps is estimatePair as it was written first, with a map
// lookup per sampled transmission in the other file's sample: the oracle
// of the merge.
func estimatePairMaps(a, b *Sampler, level uint) *pairEstimate {
	mask := uint64(1)<<level - 1
	psns := func(s *Sampler) map[psnKey]struct{} {
		out := map[psnKey]struct{}{}
		for k, v := range s.keys {
			if v.hash&mask == 0 && !k.flow.management() {
				out[psnKey{k.flow, k.psn}] = struct{}{}
			}
		}
		return out
	}
	psnsA, psnsB := psns(a), psns(b)
	flows := map[flowKey]*flowDelta{}
	var c pairCounts
	for k, sb := range b.keys {
		if sb.hash&mask != 0 || k.flow.management() {
			continue
		}
		c.nb++
		if _, ok := a.keys[k]; !ok {
			if _, ok := psnsA[psnKey{k.flow, k.psn}]; ok {
				c.conflicts++
			}
		}
	}
	for k, sa := range a.keys {
		if sa.hash&mask != 0 || k.flow.management() {
			continue
		}
		c.na++
		sb, ok := b.keys[k]
		if ok && sa.hasICRC && sb.hasICRC && sa.icrc != sb.icrc {
			c.conflicts++
			continue
		}
		if !ok {
			if _, ok := psnsB[psnKey{k.flow, k.psn}]; ok {
				c.conflicts++
			}
			continue
		}
		if sa.count != 1 || sb.count != 1 {
			continue
		}
		c.shared++
		d := sb.t - sa.t
		if f := flows[k.flow]; f != nil {
			f.lo, f.hi = min(f.lo, d), max(f.hi, d)
		} else {
			flows[k.flow] = &flowDelta{lo: d, hi: d}
		}
	}
	countMissesMaps(&c, a, b, mask)
	if !c.meets() {
		return nil
	}
	fs := make([]flowDelta, 0, len(flows))
	for _, f := range flows {
		fs = append(fs, *f)
	}
	return splitOffset(fs, c.shared)
}

// countMissesMaps is pairScratch.countMisses with map lookups: each
// file's sampled data transmissions within the PSNs both files have keys
// of in their flow, and those of them the other file lacks.
func countMissesMaps(c *pairCounts, a, b *Sampler, mask uint64) {
	// Each flow's PSNs whose key both have, and the shortest arc of the
	// 24-bit circle that holds them all, found by trying each as its
	// start.
	type arc struct{ start, span uint32 }
	shared := map[flowKey][]uint32{}
	for k, sa := range a.keys {
		if _, ok := b.keys[k]; ok && sa.hash&mask == 0 && !k.flow.management() {
			shared[k.flow] = append(shared[k.flow], k.psn)
		}
	}
	both := map[flowKey]arc{}
	for f, psns := range shared {
		best := arc{span: 1 << 24}
		for _, s := range psns {
			var span uint32
			for _, p := range psns {
				span = max(span, (p-s)&0xFFFFFF)
			}
			if span < best.span {
				best = arc{s, span}
			}
		}
		both[f] = best
	}
	count := func(s, other *Sampler) (in, miss int) {
		for k, v := range s.keys {
			r, ok := both[k.flow]
			if v.hash&mask != 0 || k.flow.management() || !ok || (k.psn-r.start)&0xFFFFFF > r.span {
				continue
			}
			in++
			if _, ok := other.keys[k]; !ok {
				miss++
			}
		}
		return in, miss
	}
	c.inA, c.missA = count(a, b)
	c.inB, c.missB = count(b, a)
}

// TestEstimatePairMerge: the merge of two sorted samples gives the
// estimate (or none) that looking every sampled transmission up in the
// other file's sample gives, on random files: points of one traffic with
// tap drops, resends with and without a new IPv4 identification, other
// bytes at one PSN, ICRCs that differ or are missing, CM datagrams, flows
// in both directions, unrelated traffic, and samples that reached a level
// (small caps).
func TestEstimatePairMerge(t *testing.T) {
	hosts := []analyze.Addr{hostA, hostB, {IP: netip.MustParseAddr("10.0.0.3")}, {LID: 7, IsLID: true}}
	rng := rand.New(rand.NewPCG(25, 2))
	met, apart := 0, 0
	for run := range 60 {
		m, a := checkPairMerges(t, samplePairFiles(rng, hosts), run)
		met, apart = met+m, apart+a
	}
	t.Logf("%d pairs meet, %d do not", met, apart)
	assert.Greater(t, met, 20)
	assert.Greater(t, apart, 20)
}

// samplePairFiles draws the files of a run of TestEstimatePairMerge: 2
// to 5 files, each a Sampler of a random cap (none, 64 or 300) with a
// clock offset of its own, and 1 to 6 flows between hosts.
func samplePairFiles(rng *rand.Rand, hosts []analyze.Addr) []*Sampler {
	files := 2 + rng.IntN(4)
	ss := make([]*Sampler, files)
	for i := range ss {
		ss[i] = NewSampler([]int{0, 64, 300}[rng.IntN(3)])
	}
	off := make([]time.Duration, files)
	for i := range off {
		off[i] = time.Duration(rng.IntN(5000)-2500) * time.Nanosecond
	}
	for range 1 + rng.IntN(6) { // flows
		sampleRandomFlow(rng, hosts, ss, off)
	}
	return ss
}

// sampleRandomFlow adds a random flow (management QP or not, RC or UD)
// to the samples ss of the files it passes, at their clock offsets off:
// 50 to 349 packets with tap drops, resends with and without a new IPv4
// identification, other bytes at one PSN and ICRCs that differ or are
// missing.
func sampleRandomFlow(rng *rand.Rand, hosts []analyze.Addr, ss []*Sampler, off []time.Duration) {
	src, dst := hosts[rng.IntN(len(hosts))], hosts[rng.IntN(len(hosts))]
	qp := uint32(rng.IntN(4)) // 0, 1: management
	if rng.IntN(2) == 0 {
		qp = 0x100 + uint32(rng.IntN(8))
	}
	op := layers.OpcodeRCRDMAWriteMiddle
	if rng.IntN(4) == 0 {
		op = layers.OpcodeUDSendOnly
	}
	start := uint32(rng.IntN(1 << 24))
	at := map[int]bool{} // the files the flow passes
	for i := range ss {
		at[i] = rng.IntN(4) != 0
	}
	for k := range 50 + rng.IntN(300) {
		psn := (start + uint32(k)) & 0xFFFFFF
		t0 := time.Duration(k) * time.Microsecond
		icrc := rng.Uint32()
		for i := range ss {
			if !at[i] || rng.IntN(20) == 0 { // off the path, or a tap drop
				continue
			}
			p := packet(src, dst, qp, psn, op, t0+off[i]+time.Duration(i)*300*time.Nanosecond, uint64(k), icrc, layers.ICRCOK)
			switch rng.IntN(40) {
			case 0: // other bytes at this PSN
				p.PayloadLen = 512
			case 1: // another ICRC
				v := rng.Uint32()
				p.BTH.Trailer = []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}
			case 2: // no ICRC (header-only)
				p.BTH.Trailer = nil
			case 3: // a resend, same key
				ss[i].Add(p)
			case 4: // a resend with another IPv4 identification
				q := *p
				q.IPID = 9
				ss[i].Add(&q)
			}
			ss[i].Add(p)
		}
	}
}

// checkPairMerges checks, for every pair of the files of run whose
// samples are ss, that the merge of their sorted samples (estimatePair)
// gives the estimate, or none, that looking every sampled transmission up
// in the other's sample (estimatePairMaps) gives; it returns how many
// pairs meet and how many do not.
func checkPairMerges(t *testing.T, ss []*Sampler, run int) (met, apart int) {
	t.Helper()
	level := uint(0)
	for _, s := range ss {
		level = max(level, s.level)
	}
	lists, flows := sampledLists(ss, level)
	sc := newPairScratch(flows)
	for i := range ss {
		for j := i + 1; j < len(ss); j++ {
			want := estimatePairMaps(ss[i], ss[j], level)
			if want != nil {
				met++
			} else {
				apart++
			}
			got, _ := estimatePair(lists[i], lists[j], sc)
			name := fmt.Sprintf("run %d, files %d and %d", run, i, j)
			if want == nil {
				assert.Nil(t, got, name)
				continue
			}
			require.NotNil(t, got, name)
			assert.Equal(t, *want, *got, name)
		}
	}
	return met, apart
}
