package points

import (
	"encoding/binary"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

var (
	hostA = analyze.Addr{IP: netip.MustParseAddr("10.0.0.1")}
	hostB = analyze.Addr{IP: netip.MustParseAddr("10.0.0.2")}
	t0    = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
)

// packet builds the decoded view of an RC packet; icrc is its ICRC on the
// wire (the test's stand-in for the packet's invariant bytes).
func packet(src, dst analyze.Addr, qp, psn uint32, op layers.Opcode, at time.Duration, frame uint64, icrc uint32, status layers.ICRCStatus) *analyze.Packet {
	tr := make([]byte, 4)
	binary.LittleEndian.PutUint32(tr, icrc)
	p := &analyze.Packet{Frame: frame, Time: t0.Add(at), Src: src, Dst: dst, IsRDMA: true, PayloadLen: 1024,
		BTH: &layers.BTH{Opcode: op, DestQP: qp, PSN: psn}, ICRC: layers.ICRCResult{Status: status, Value: icrc}}
	p.BTH.Trailer = tr
	if op == layers.OpcodeRCAcknowledge {
		p.AETH = &layers.AETH{Syndrome: 0x1F}
		p.PayloadLen = 0
	}
	return p
}

func write(psn uint32, at time.Duration, frame uint64) *analyze.Packet {
	return packet(hostA, hostB, 0x11, psn, layers.OpcodeRCRDMAWriteMiddle, at, frame, 0xC0DE0000+psn, layers.ICRCOK)
}

func ack(psn uint32, at time.Duration, frame uint64) *analyze.Packet {
	return packet(hostB, hostA, 0x22, psn, layers.OpcodeRCAcknowledge, at, frame, 0xACC00000+psn, layers.ICRCOK)
}

// TestEstimateOffsets: the bound of the minimum delays of both directions
// holds the true offset; its middle is exact for symmetric delays.
func TestEstimateOffsets(t *testing.T) {
	const off = 1234567 * time.Nanosecond
	cases := []struct {
		name       string
		fwd, back  time.Duration // minimum one-way delays A→B, B→A
		wantOff    time.Duration
		wantErr    time.Duration
		wantMethod string
	}{
		{"symmetric", 3 * time.Microsecond, 3 * time.Microsecond, off, 3 * time.Microsecond, MethodTwoWay},
		{"asymmetric", 5 * time.Microsecond, 1 * time.Microsecond, off + 2*time.Microsecond, 3 * time.Microsecond, MethodTwoWay},
		{"one direction", 4 * time.Microsecond, -1, off + 4*time.Microsecond, -1, MethodOneWay},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, b := NewSampler(0), NewSampler(0)
			for i := range uint32(200) {
				at := time.Duration(i) * 10 * time.Microsecond
				extra := time.Duration(i%7) * 100 * time.Nanosecond // jitter above the minimum
				a.Add(write(i, at, uint64(i)))
				b.Add(write(i, at+tc.fwd+extra+off, uint64(i)))
				if tc.back >= 0 {
					b.Add(ack(i, at+5*time.Microsecond+off, uint64(i)))
					a.Add(ack(i, at+5*time.Microsecond+tc.back+extra, uint64(i)))
				}
			}
			got, meet := EstimateOffsets([]*Sampler{a, b}, nil)
			require.True(t, meet)
			assert.Equal(t, Offset{Method: MethodReference}, got[0])
			assert.Equal(t, tc.wantMethod, got[1].Method)
			assert.Equal(t, tc.wantOff, got[1].Offset)
			assert.Equal(t, tc.wantErr, got[1].Error)
			if tc.wantErr >= 0 {
				assert.LessOrEqual(t, (got[1].Offset - off).Abs(), got[1].Error, "the bound holds the true offset")
			}
		})
	}

	t.Run("never meet", func(t *testing.T) {
		a, b := NewSampler(0), NewSampler(0)
		for i := range uint32(50) {
			a.Add(write(i, time.Duration(i)*time.Microsecond, uint64(i)))
			b.Add(write(i+1000, time.Duration(i+1000)*time.Microsecond, uint64(i)))
		}
		got, meet := EstimateOffsets([]*Sampler{a, b}, nil)
		assert.False(t, meet)
		assert.Equal(t, MethodNone, got[1].Method)
	})
	t.Run("override", func(t *testing.T) {
		d := 5 * time.Millisecond
		got, _ := EstimateOffsets([]*Sampler{NewSampler(0), NewSampler(0)}, []*time.Duration{nil, &d})
		assert.Equal(t, Offset{Offset: d, Method: MethodOverride}, got[1])
	})
}

// TestSamplerBounded: the sample stays under its cap and is the same
// subset of transmissions in every file.
func TestSamplerBounded(t *testing.T) {
	a, b := NewSampler(1000), NewSampler(1000)
	for i := range uint32(100_000) {
		a.Add(write(i&0xFFFFFF, time.Duration(i)*time.Microsecond, uint64(i)))
		if i%2 == 0 {
			b.Add(write(i&0xFFFFFF, time.Duration(i)*time.Microsecond+time.Millisecond, uint64(i)))
		}
	}
	assert.LessOrEqual(t, len(a.keys), 1000)
	assert.LessOrEqual(t, len(b.keys), 1000)
	level := max(a.level, b.level)
	shared := 0
	for k, s := range b.keys {
		if s.hash&(1<<level-1) != 0 {
			continue
		}
		_, ok := a.keys[k]
		assert.True(t, ok, "b's sample is in a's")
		shared++
	}
	assert.Greater(t, shared, 100)
}

// feed gives the sightings to m in time order, each as (file, packet).
type sight struct {
	file int
	p    *analyze.Packet
}

func feed(m *Matcher, ss []sight) []bool {
	var first []bool
	for _, s := range ss {
		first = append(first, m.Add(s.file, s.p))
	}
	return first
}

// TestMatcherResendByTime: a lost packet and its byte-identical resend
// are two transmissions; the resend's sighting downstream goes to the
// resend (closest to the flow's delay), the first is lost.
func TestMatcherResendByTime(t *testing.T) {
	m := New(Options{Files: []string{"a", "b"}})
	const d = 3 * time.Microsecond
	us := time.Microsecond
	first := feed(m, []sight{
		{0, write(1, 0, 1)}, {1, write(1, d, 1)},
		{0, write(2, 1*us, 2)}, // lost after a
		{0, write(3, 2*us, 3)}, {1, write(3, 2*us+d, 2)},
		{1, ack(1, 6*us, 3)}, {0, ack(1, 6*us+d, 4)}, // NAK would say 2; an ACK of 1 is enough
		{0, write(2, 10*us, 5)}, {1, write(2, 10*us+d, 4)}, // resend, same bytes
		{0, write(3, 11*us, 6)}, {1, write(3, 11*us+d, 5)},
		{1, ack(3, 16*us, 6)}, {0, ack(3, 16*us+d, 7)},
	})
	assert.Equal(t, []bool{true, false, true, true, false, true, false, true, false, true, false, true, false}, first)
	rep := m.Finish()
	require.Len(t, rep.Links, 2)
	w := rep.Links[0]
	assert.Equal(t, "10.0.0.1", w.Src)
	assert.Equal(t, "a", w.From)
	assert.Equal(t, "b", w.To)
	assert.Equal(t, uint64(4), w.Matched)
	assert.Equal(t, uint64(1), w.Lost)
	assert.Equal(t, []uint32{2}, w.LostPSNs)
	assert.Equal(t, []uint64{3 - 1}, w.LostFrames)
	assert.Equal(t, uint64(0), w.NotCaptured)
	assert.Equal(t, Delay{Min: int64(d), Median: int64(d), P99: int64(d), Max: int64(d), Samples: 4}, w.OneWayDelayNs)
	r := rep.Links[1]
	assert.Equal(t, "b", r.From, "the ACKs go upstream from b")
	assert.Equal(t, uint64(2), r.Matched)
}

// TestMatcherNotCapturedCorruptedReordered: a request b's tap missed but
// the receiver acknowledged is not captured; a bad ICRC at b only is
// corruption; a swap on the way is one reordering.
func TestMatcherNotCapturedCorruptedReordered(t *testing.T) {
	m := New(Options{Files: []string{"a", "b"}})
	us := time.Microsecond
	bad := write(3, 2*us+3*us, 3)
	bad.ICRC.Status = layers.ICRCBad
	feed(m, []sight{
		{0, write(1, 0, 1)}, {1, write(1, 3*us, 1)},
		{0, write(2, 1*us, 2)}, // b's tap misses it
		{0, write(3, 2*us, 3)}, {0, write(4, 2500*time.Nanosecond, 4)},
		{1, write(4, 4*us, 2)}, {1, bad}, // 3 and 4 swapped; 3 corrupted
		{1, ack(4, 9*us, 4)}, {0, ack(4, 12*us, 5)},
	})
	rep := m.Finish()
	require.NotEmpty(t, rep.Links)
	w := rep.Links[0]
	assert.Equal(t, uint64(3), w.Matched)
	assert.Equal(t, uint64(0), w.Lost)
	assert.Equal(t, uint64(1), w.NotCaptured)
	assert.Equal(t, uint64(1), w.Corrupted)
	assert.Equal(t, []uint32{3}, w.CorruptedPSNs)
	assert.Equal(t, []uint64{3}, w.CorruptedFrames)
	assert.Equal(t, uint64(1), w.Reordered)
}

// stream feeds n writes seen at two points, delay d apart, one every gap.
func stream(m *Matcher, n int, gap, d time.Duration) {
	for i := range n {
		at := time.Duration(i) * gap
		psn := uint32(i) & 0xFFFFFF
		m.Add(0, write(psn, at, uint64(i+1)))
		m.Add(1, write(psn, at+d, uint64(i+1)))
	}
}

// TestMatcherMemoryBounded: a long stream holds one window of packets,
// however long it is.
func TestMatcherMemoryBounded(t *testing.T) {
	const n = 200_000
	gap, d, win := 100*time.Nanosecond, 2*time.Microsecond, 50*time.Microsecond
	m := New(Options{Files: []string{"a", "b"}, Window: win})
	stream(m, n, gap, d)
	st := m.Stats()
	assert.Equal(t, uint64(2*n), st.Sightings)
	assert.Equal(t, uint64(n), st.Transmissions)
	inWindow := int((win + d) / gap)
	assert.LessOrEqual(t, st.MaxLive, inWindow+2, "live transmissions bounded by the window")
	assert.LessOrEqual(t, len(m.ring), 2*(inWindow+2))
	rep := m.Finish()
	require.Len(t, rep.Links, 1)
	assert.Equal(t, uint64(n), rep.Links[0].Matched)
	assert.Equal(t, uint64(0), rep.Links[0].Lost)
	assert.Equal(t, int64(d), rep.Links[0].OneWayDelayNs.Median)
	assert.Equal(t, reservoirSize, rep.Links[0].OneWayDelayNs.Samples)
}

// BenchmarkMatcherAdd measures one sighting (half of them first
// sightings, half matches).
func BenchmarkMatcherAdd(b *testing.B) {
	const n = 1 << 16
	pa, pb := make([]*analyze.Packet, n), make([]*analyze.Packet, n)
	for i := range n {
		pa[i] = write(uint32(i), 0, uint64(i))
		pb[i] = write(uint32(i), 0, uint64(i))
	}
	m := New(Options{Files: []string{"a", "b"}, Window: 10 * time.Microsecond})
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := i / 2 % n
		at := t0.Add(time.Duration(i/2) * 100 * time.Nanosecond)
		if i%2 == 0 {
			pa[k].Time = at
			m.Add(0, pa[k])
		} else {
			pb[k].Time = at.Add(time.Microsecond)
			m.Add(1, pb[k])
		}
	}
}

// TestMatcherResendNewIPID: a resend with another IPv4 identification is
// another transmission by its key; the original, missing downstream and
// resent before any acknowledgement, is lost, and the ACK that follows
// the resend does not make it "not captured".
func TestMatcherResendNewIPID(t *testing.T) {
	m := New(Options{Files: []string{"a", "b"}})
	us := time.Microsecond
	w := func(psn uint32, id uint16, at time.Duration, frame uint64) *analyze.Packet {
		p := write(psn, at, frame)
		p.IPID = id
		return p
	}
	first := feed(m, []sight{
		{0, w(1, 10, 0, 1)}, {1, w(1, 10, 3*us, 1)},
		{0, w(2, 11, 1*us, 2)}, // lost after a
		{0, w(2, 12, 9*us, 3)}, {1, w(2, 12, 12*us, 2)},
		{1, ack(2, 14*us, 3)}, {0, ack(2, 17*us, 4)},
	})
	assert.Equal(t, []bool{true, false, true, true, false, true, false}, first)
	rep := m.Finish()
	require.NotEmpty(t, rep.Links)
	l := rep.Links[0]
	assert.Equal(t, uint64(2), l.Matched)
	assert.Equal(t, uint64(1), l.Lost)
	assert.Equal(t, []uint64{2}, l.LostFrames)
	assert.Equal(t, uint64(0), l.NotCaptured)
}
