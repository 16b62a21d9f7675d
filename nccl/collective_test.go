package nccl_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// ringJob is a handmade ring AllReduce of NCCL's Simple protocol (NCCL
// 2.20 FIFO entries), the truth its packets are made from: n ranks,
// rank r at 10.0.1.(r+1) sending to r+1 mod n; each rank's host
// enqueues the collective host[r] after the start (its receives are
// posted then), its GPU starts gpu[r] after that; a ring step takes dt;
// each data slice is a write of perSlice packets, its packets dt/16
// apart, slow times longer on the link out of rank slowFrom (-1: none),
// where each data write also sends its first packet again and marks it
// ECN-CE.
type ringJob struct {
	n         int
	size      uint64 // S: the per-rank buffer
	host, gpu map[int]time.Duration
	dt        time.Duration
	perSlice  int
	slowFrom  int
	slow      int
	rkey      uint32 // the buffers' rkey (0: 0x55)
}

// event is a packet at its time from the job's start.
type event struct {
	t time.Duration
	p *analyze.Packet
}

var jobStart = time.Date(2026, 6, 25, 7, 0, 0, 0, time.UTC)

func rankAddr(r int) analyze.Addr {
	return analyze.Addr{IP: netip.AddrFrom4([4]byte{10, 0, byte(1 + r/250), byte(1 + r%250)})}
}

// packets returns the job's packets in time order.
func (j ringJob) packets() []*analyze.Packet {
	var evs []event
	steps := 2 * (j.n - 1) // ring steps of an AllReduce loop
	chunk := j.size / uint64(j.n)
	rkey := cmp.Or(j.rkey, 0x55)
	ready := func(r int) time.Duration { return j.host[r] + j.gpu[r] }
	// done[r][a]: when link r's (r → r+1) ring step a was written.
	done := make([][]time.Duration, j.n)
	for r := range done {
		done[r] = make([]time.Duration, steps)
	}
	psn := make([]uint32, j.n)
	for a := range steps {
		for r := range j.n {
			to := (r + 1) % j.n
			send, recv := rankAddr(r), rankAddr(to)
			t := max(ready(r), j.host[to]) + time.Microsecond
			if a > 0 {
				from := (r + j.n - 1) % j.n
				t = max(t, done[from][a-1], done[r][a-1])
			}
			per := j.dt / 16
			if r == j.slowFrom {
				per *= time.Duration(j.slow)
			}
			for slice := range 2 {
				idx := uint64(2*a + slice + 1)
				buf := 0x10_0000_0000 + uint64(r)<<24 + idx<<12
				// The receiver's CTS, posted when its host enqueued.
				evs = append(evs, event{j.host[to] + time.Duration(idx)*time.Nanosecond,
					write(layers.OpcodeRCRDMAWriteOnly, recv, send, 0x20, 0x7000+nccl.Slot(idx)*512, 0x99, 64, -1,
						ctsEntry(buf, 1<<20, rkey, 1, int32(r), idx))})
				length := uint32(0)
				if slice == 0 {
					length = uint32(chunk)
				}
				at := t + time.Duration(slice)*per*time.Duration(j.perSlice)
				evs = append(evs, j.slice(send, recv, buf, rkey, length, at, per, r == j.slowFrom, &psn[r])...)
			}
			// A QP writes in order: the next step after this one's packets.
			done[r][a] = max(t+j.dt, t+2*per*time.Duration(j.perSlice))
		}
	}
	slices.SortStableFunc(evs, func(a, b event) int { return cmp.Compare(a.t, b.t) })
	out := make([]*analyze.Packet, len(evs))
	for i, e := range evs {
		e.p.Time = jobStart.Add(e.t)
		out[i] = e.p
	}
	return out
}

// slice is one data write of length bytes to buf: j.perSlice packets
// (one for 0 bytes) from at, per apart; slow sends the first again and
// marks it ECN-CE.
func (j ringJob) slice(send, recv analyze.Addr, buf uint64, rkey, length uint32, at, per time.Duration, slow bool, psn *uint32) []event {
	next := func(p *analyze.Packet) *analyze.Packet {
		p.BTH.PSN = *psn
		*psn++
		return p
	}
	if j.perSlice <= 1 || length == 0 {
		return []event{{at, next(write(layers.OpcodeRCRDMAWriteOnlyWithImm, send, recv, 0x30, buf, rkey, length, int64(length), nil))}}
	}
	first := write(layers.OpcodeRCRDMAWriteFirst, send, recv, 0x30, buf, rkey, length, -1, nil)
	out := []event{{at, next(first)}}
	if slow {
		again := write(layers.OpcodeRCRDMAWriteFirst, send, recv, 0x30, buf, rkey, length, -1, nil)
		again.BTH.PSN, again.ECN = first.BTH.PSN, 3
		out = append(out, event{at + per/2, again})
	}
	for k := 1; k < j.perSlice-1; k++ {
		out = append(out, event{at + time.Duration(k)*per, next(write(layers.OpcodeRCRDMAWriteMiddle, send, recv, 0x30, 0, 0, 0, -1, nil))})
	}
	return append(out, event{at + time.Duration(j.perSlice-1)*per, next(write(layers.OpcodeRCRDMAWriteLastWithImm, send, recv, 0x30, 0, 0, 0, int64(length), nil))})
}

// feed gives a new Collector the packets.
func feed(packets []*analyze.Packet) *nccl.Collector {
	c := nccl.NewCollector()
	for _, p := range packets {
		c.Add(p)
	}
	return c
}

func TestCollectiveStraggler(t *testing.T) {
	const ms = time.Millisecond
	base := ringJob{n: 4, size: 4 << 10, dt: 10 * time.Microsecond, perSlice: 4, slowFrom: -1}
	with := func(f func(*ringJob)) ringJob {
		j := base
		j.host, j.gpu = map[int]time.Duration{}, map[int]time.Duration{}
		f(&j)
		return j
	}
	for _, tc := range []struct {
		name string
		job  ringJob
		want *nccl.Straggler // LateNs within 5 %
	}{
		{"on time", with(func(*ringJob) {}), nil},
		{"a rank's host late", with(func(j *ringJob) { j.host[2] = 5 * ms }), &nccl.Straggler{Rank: 2, Kind: "host", LateNs: int64(5 * ms)}},
		{"a rank's GPU late", with(func(j *ringJob) { j.gpu[1] = 5 * ms }), &nccl.Straggler{Rank: 1, Kind: "gpu", LateNs: int64(5 * ms)}},
		{"hosts a little late: nothing stands out", with(func(j *ringJob) { j.host[3] = 20 * time.Microsecond }), nil},
		{"a host late by less than the busy time: its data waits, as a GPU's", with(func(j *ringJob) { j.host[2] = 40 * time.Microsecond }),
			&nccl.Straggler{Rank: 2, Kind: "gpu", LateNs: int64(40 * time.Microsecond)}},
		{"a slow link", with(func(j *ringJob) { j.slowFrom, j.slow = 1, 40 }), &nccl.Straggler{Rank: 1, ReceiverRank: new(2), Kind: "link",
			Why: "6 data packets sent again, 6 marked ECN-CE"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := feed(tc.job.packets()).Result()
			require.NotNil(t, r)
			require.Len(t, r.Collectives, 1)
			c := r.Collectives[0]
			assert.Equal(t, nccl.KindAllReduce, c.Kind)
			assert.Equal(t, nccl.AlgorithmRing, c.Algorithm)
			require.NotNil(t, c.SizeBytes)
			assert.Equal(t, tc.job.size, *c.SizeBytes)
			var bytes uint64
			for _, l := range c.Links {
				bytes += l.Bytes
				assert.Equal(t, uint64(4*(tc.job.n-1)), l.Steps)
			}
			assert.Equal(t, 2*uint64(tc.job.n-1)*tc.job.size, bytes)
			if tc.want == nil {
				assert.Nil(t, c.Straggler)
				return
			}
			require.NotNil(t, c.Straggler)
			got := *c.Straggler
			if tc.want.LateNs != 0 {
				assert.InEpsilon(t, tc.want.LateNs, got.LateNs, 0.05)
			}
			got.LateNs = tc.want.LateNs
			assert.Equal(t, *tc.want, got)
		})
	}
}

// TestCollectiveLookAlike: traffic that looks like NCCL's but is not (CTS
// whose buffers are written with another key) gives no view at all, so
// no collectives.
func TestCollectiveLookAlike(t *testing.T) {
	job := ringJob{n: 4, size: 4 << 10, dt: 10 * time.Microsecond, perSlice: 2, slowFrom: -1}
	packets := job.packets()
	for _, p := range packets {
		if p.ImmDt != nil || p.BTH.Opcode == layers.OpcodeRCRDMAWriteFirst {
			if p.RETH != nil {
				p.RETH.RKey++
			}
		}
	}
	assert.Nil(t, feed(packets).Result())
}

// TestCollectiveBoundaries: two collectives an idle time apart are two,
// the steps of each counted in their own, back to back too (every link
// seen), whether or not the capture missed a data message of the first,
// or a CTS that is no NCCL's comes between them.
func TestCollectiveBoundaries(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func([]*analyze.Packet) []*analyze.Packet
		kind   string // the first's: unknown when the capture missed its data
		gap    time.Duration
	}{
		{"as captured", func(p []*analyze.Packet) []*analyze.Packet { return p }, nccl.KindAllReduce, 0},
		{"back to back", func(p []*analyze.Packet) []*analyze.Packet { return p }, nccl.KindAllReduce, 5 * time.Microsecond},
		{"a data message missed", func(p []*analyze.Packet) []*analyze.Packet {
			i := slices.IndexFunc(p, func(p *analyze.Packet) bool {
				return p.BTH.Opcode == layers.OpcodeRCRDMAWriteOnlyWithImm && p.RETH.DMALength > 0
			})
			return slices.Delete(p, i, i+1)
		}, nccl.KindUnknown, 0},
		{"a stray CTS never written to", func(p []*analyze.Packet) []*analyze.Packet {
			stray := write(layers.OpcodeRCRDMAWriteOnly, rankAddr(1), rankAddr(0), 0x21, 0x9000+nccl.Slot(200)*512, 0x98, 64, -1,
				ctsEntry(0xdead000, 1<<20, 0x55, 1, 0, 200))
			stray.Time = p[len(p)-1].Time.Add(time.Second)
			return append(p, stray)
		}, nccl.KindAllReduce, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := ringJob{n: 3, size: 3 << 10, dt: 10 * time.Microsecond, perSlice: 1, slowFrom: -1}
			first := tc.change(job.packets())
			job.size = 6 << 10
			second := job.packets()
			// The second's receives run on after the first's, 10 s later
			// or gap after its last packet.
			shift := 10 * time.Second
			if tc.gap > 0 {
				shift = first[len(first)-1].Time.Sub(second[0].Time) + tc.gap
			}
			for _, p := range second {
				p.Time = p.Time.Add(shift)
			}
			r := feed(append(first, shiftIdx(second, uint64(4*(job.n-1)))...)).Result()
			require.NotNil(t, r)
			require.Len(t, r.Collectives, 2)
			for i, want := range []uint64{3 << 10, 6 << 10} {
				col := r.Collectives[i]
				assert.Equal(t, i+1, col.Index)
				if i == 0 && tc.kind == nccl.KindUnknown {
					assert.Equal(t, tc.kind, col.Kind)
					continue
				}
				require.NotNil(t, col.SizeBytes, fmt.Sprint(i))
				assert.Equal(t, want, *col.SizeBytes)
				assert.Equal(t, nccl.KindAllReduce, col.Kind)
			}
		})
	}
}

// shiftIdx renumbers the CTS of packets (and their buffers) as if
// after k receives of each connection.
func shiftIdx(packets []*analyze.Packet, k uint64) []*analyze.Packet {
	for _, p := range packets {
		if p.BTH.Opcode != layers.OpcodeRCRDMAWriteOnly {
			continue
		}
		idx := uint64(0)
		for b := range 8 {
			idx |= uint64(p.Payload[32+b]) << (8 * b)
		}
		idx += k
		for b := range 8 {
			p.Payload[32+b] = byte(idx >> (8 * b))
		}
		p.RETH.VA = 0x7000 + nccl.Slot(idx)*512
	}
	return packets
}

// TestCombineCapturePoints: the job captured on each host, each host's
// clock off the reference, combined with the offsets the capture points
// give, is the job as one capture saw it; each file alone is a part of
// it that names no collective's kind it cannot see whole.
func TestCombineCapturePoints(t *testing.T) {
	job := ringJob{n: 3, size: 3 << 10, dt: 10 * time.Microsecond, perSlice: 2, slowFrom: -1,
		host: map[int]time.Duration{1: 3 * time.Millisecond}}
	want := feed(job.packets()).Result()
	require.NotNil(t, want)
	require.Len(t, want.Collectives, 1)
	require.NotNil(t, want.Collectives[0].Straggler)
	offsets := []time.Duration{0, 1500 * time.Millisecond, -700 * time.Microsecond}
	var files []*nccl.Collector
	for h := range job.n {
		c := nccl.NewCollector()
		for _, p := range job.packets() {
			if p.Src == rankAddr(h) || p.Dst == rankAddr(h) {
				p.Time = p.Time.Add(offsets[h])
				c.Add(p)
			}
		}
		part := c.Result()
		require.NotNil(t, part)
		require.Len(t, part.Collectives, 1)
		assert.Equal(t, nccl.KindUnknown, part.Collectives[0].Kind, "host %d sees two of the three links", h)
		assert.Nil(t, part.Collectives[0].Straggler)
		files = append(files, c)
	}
	unset := nccl.Combine(files...)
	assert.NotEqual(t, mustJSON(t, want.Collectives), mustJSON(t, unset.Collectives), "the hosts' clocks as they were")
	for h, c := range files {
		c.SetClockOffset(offsets[h])
	}
	got := nccl.Combine(files...)
	assert.Equal(t, mustJSON(t, want), mustJSON(t, got))
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// BenchmarkCollectives64: a 64-rank ring AllReduce (4·63 receives on
// each of 64 links) fed to a Collector and combined, its data slices
// written in 1 to 16 packets: the bytes per op stay flat as the packets
// grow, since a Collector keeps steps, not packets.
func BenchmarkCollectives64(b *testing.B) {
	for _, per := range []int{1, 2, 4, 8, 16} {
		job := ringJob{n: 64, size: 64 << 20, dt: 10 * time.Microsecond, perSlice: per, slowFrom: -1}
		packets := job.packets()
		b.Run(fmt.Sprintf("packets_per_slice=%d", per), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := feed(packets).Result(); r == nil || len(r.Collectives) != 1 {
					b.Fatal("not one collective")
				}
			}
			b.ReportMetric(float64(len(packets)), "packets/op")
		})
	}
}
