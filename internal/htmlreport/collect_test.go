package htmlreport

import (
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

func pkt(frame uint64, psn uint32, op layers.Opcode, ecn uint8, findings int) *analyze.Packet {
	return &analyze.Packet{
		Frame: frame, Time: time.Unix(0, int64(frame)*1000), Length: 1100, PayloadLen: 1024, IsRDMA: true, ECN: ecn, Findings: findings,
		Src: analyze.Addr{IP: netip.MustParseAddr("10.0.0.1")}, Dst: analyze.Addr{IP: netip.MustParseAddr("10.0.0.2")},
		BTH: &layers.BTH{Opcode: op, PSN: psn, DestQP: 0x11},
	}
}

// TestCollectorBounds: ordinary packets beyond Limits.Plain are decimated
// evenly, marked ones kept up to Limits.Marked and counted beyond, flows
// beyond Limits.Flows counted; every packet's bytes are in the buckets.
func TestCollectorBounds(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		lim                   Limits
		n                     int
		markEvery             int
		wantPlain, wantMarked int
		wantStride            uint64
		wantDroppedMarked     uint64
	}{
		{"below the limits", Limits{Flows: 1, Plain: 100, Marked: 10}, 50, 0, 50, 0, 1, 0},
		{"decimated once", Limits{Flows: 1, Plain: 100, Marked: 10}, 150, 0, 75, 0, 2, 0},
		{"decimated thrice", Limits{Flows: 1, Plain: 100, Marked: 10}, 700, 0, 88, 0, 8, 0},
		{"marked kept, then counted", Limits{Flows: 1, Plain: 100, Marked: 10}, 100, 5, 80, 10, 1, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCollector(tc.lim)
			for i := range tc.n {
				f := 0
				if tc.markEvery > 0 && i%tc.markEvery == 0 {
					f = 1
				}
				c.Add(pkt(uint64(i+1), uint32(i), layers.OpcodeRCRDMAWriteMiddle, 0, f))
			}
			require.Len(t, c.order, 1)
			fp := c.order[0]
			assert.Len(t, fp.plain, tc.wantPlain)
			assert.Len(t, fp.marked, tc.wantMarked)
			assert.Equal(t, tc.wantStride, fp.stride)
			assert.Equal(t, tc.wantDroppedMarked, fp.markedDropped)
			assert.Equal(t, uint64(tc.n), fp.nPlain+uint64(len(fp.marked))+fp.markedDropped)
			// Evenly spread: consecutive kept ordinary packets are at most
			// one stride apart (in the order of ordinary packets).
			for i := 1; i < len(fp.plain); i++ {
				assert.Less(t, fp.plain[i-1].frame, fp.plain[i].frame)
			}
			var payload uint64
			for _, b := range fp.tput.list {
				payload += b.payload
			}
			assert.Equal(t, uint64(tc.n)*1024, payload)
		})
	}

	c := NewCollector(Limits{Flows: 1})
	c.Add(pkt(1, 1, layers.OpcodeRCSendOnly, 0, 0))
	p := pkt(2, 1, layers.OpcodeRCSendOnly, 0, 0)
	p.BTH = &layers.BTH{Opcode: layers.OpcodeRCSendOnly, DestQP: 0x12}
	c.Add(p)
	assert.Len(t, c.order, 1)
	assert.Equal(t, uint64(1), c.flowsOver)
	var nilC *Collector
	nilC.Add(p) // a nil Collector ignores packets
}

// TestPointKind classifies packets by opcode and AETH syndrome (bits 6:5
// of the syndrome: 0 ACK, 1 RNR NAK, 3 NAK).
func TestPointKind(t *testing.T) {
	for _, tc := range []struct {
		op       layers.Opcode
		syndrome uint8
		hasAETH  bool
		ecn      uint8
		want     uint8
		marked   bool
	}{
		{layers.OpcodeRCRDMAWriteFirst, 0, false, 0, kindRequest, false},
		{layers.OpcodeRCRDMAWriteFirst, 0, false, 3, kindRequest, true},
		{layers.OpcodeRCAcknowledge, 0x1F, true, 0, kindACK, false},
		{layers.OpcodeRCAcknowledge, 0x60, true, 0, kindNAK, true},
		{layers.OpcodeRCAcknowledge, 0x2E, true, 0, kindRNRNAK, true},
		{layers.OpcodeRCRDMAReadResponseOnly, 0x1F, true, 0, kindReadResp, false},
		{layers.OpcodeRCRDMAReadResponseMiddle, 0, false, 0, kindReadResp, false},
		{layers.OpcodeRoCEv2CNP, 0, false, 0, kindCNP, true},
	} {
		p := pkt(1, 5, tc.op, tc.ecn, 0)
		if tc.hasAETH {
			p.AETH = &layers.AETH{Syndrome: tc.syndrome}
		}
		c := NewCollector(Limits{})
		c.Add(p)
		require.Len(t, c.order, 1)
		fp := c.order[0]
		if tc.marked {
			require.Len(t, fp.marked, 1, tc.op)
			assert.Equal(t, tc.want, fp.marked[0].kind, tc.op)
		} else {
			require.Len(t, fp.plain, 1, tc.op)
			assert.Equal(t, tc.want, fp.plain[0].kind, tc.op)
		}
	}
}

// TestBuckets: coarsening keeps every byte, aligns starts to the
// interval, and merging lists of different intervals sums them.
func TestBuckets(t *testing.T) {
	var a buckets
	for i := range 10000 {
		a.add(int64(i)*100, 10, 20)
	}
	assert.LessOrEqual(t, len(a.list), maxBuckets)
	var sum uint64
	for i, x := range a.list {
		sum += x.payload
		assert.Zero(t, x.start%a.iv)
		if i > 0 {
			assert.Less(t, a.list[i-1].start, x.start)
		}
	}
	assert.Equal(t, uint64(100000), sum)
	var b buckets
	b.add(5, 7, 7)
	b.add(-5, 1, 1) // the clock went back
	require.Len(t, b.list, 2)
	assert.Equal(t, int64(-baseIntervalNs), b.list[0].start)
	m := mergeBuckets([]*buckets{&a, &b})
	sum = 0
	for _, x := range m.list {
		sum += x.payload
	}
	assert.Equal(t, uint64(100008), sum)
	assert.Equal(t, a.iv, m.iv)
}
