package nccl_test

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// FuzzRecognizer feeds the Collector CTS writes of arbitrary bytes and
// data writes whose address, key, length, immediate and times come from
// the input: no panic, state bounded by the CTS it was given, and a
// result that is nil or consistent with itself, its collectives holding
// every message once.
func FuzzRecognizer(f *testing.F) {
	f.Add(ctsEntry(0xa000, 1<<20, 0x55, 1, 0, 1), uint64(0xa000), uint32(0x55), uint32(100), uint32(100), uint8(0))
	f.Add(append(ctsEntry(0xa000, 1<<20, 0x55, 2, 3, 9), ctsEntry(0xb000, 1<<20, 0x55, 2, 3, 9)...), uint64(0xb000), uint32(0x55), uint32(0), uint32(0), uint8(1))
	f.Add(goldenEntries["2.19"], uint64(0x00007f1234560000), uint32(0x1a2b), uint32(7), uint32(7<<24), uint8(2))
	f.Add(goldenEntries["2.30"], uint64(0x00007f1234560000), uint32(0x3c4d), uint32(7), uint32(7), uint8(3))
	f.Fuzz(func(t *testing.T, payload []byte, va uint64, rkey, length, imm uint32, mode uint8) {
		c := nccl.NewCollector()
		var fifo uint64 = 0x7000
		if len(payload) >= 8 {
			fifo = binary.LittleEndian.Uint64(payload[len(payload)-8:]) &^ 0xfff
		}
		// The packets' times, from the input: steps apart, the data gap
		// after each CTS (collectives are cut by times).
		at, step, gap := time.Unix(0, int64(va>>40)), time.Duration(imm>>8)%time.Second, time.Duration(length)%time.Millisecond
		add := func(p *analyze.Packet) {
			p.Time = at
			c.Add(p)
		}
		for i := range 3 {
			at = at.Add(step)
			add(write(layers.OpcodeRCRDMAWriteOnly, hostB, hostA, 0x20, fifo+uint64(i)*512, 0x99, uint32(len(payload)), -1, payload))
			at = at.Add(gap)
			switch mode % 3 {
			case 0:
				add(write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, va, rkey, length, int64(imm), nil))
			case 1:
				add(write(layers.OpcodeRCRDMAWriteFirst, hostA, hostB, 0x30, va, rkey, length, -1, nil))
				add(write(layers.OpcodeRCRDMAWriteLastWithImm, hostA, hostB, 0x30, 0, 0, 0, int64(imm), nil))
			default:
				add(write(layers.OpcodeRCRDMAWriteLast, hostA, hostB, 0x30, 0, 0, 0, -1, nil))
			}
		}
		r := c.Result()
		if r == nil {
			return
		}
		var messages, bytes uint64
		for _, cn := range r.Connections {
			require.LessOrEqual(t, cn.Messages, cn.CTS*8, "at most one message per entry posted")
			require.Equal(t, cn.Messages > 0, cn.Active)
			messages += cn.Messages
			bytes += cn.Bytes
		}
		require.NotZero(t, messages)
		require.LessOrEqual(t, messages, uint64(3))
		require.LessOrEqual(t, bytes, 3*uint64(length))
		// The collectives: each of the messages in one, in time order,
		// their times and figures consistent.
		var inColls, collBytes uint64
		for i, col := range r.Collectives {
			require.Equal(t, i+1, col.Index)
			require.Equal(t, col.End.Sub(col.Start).Nanoseconds(), col.DurationNs)
			require.GreaterOrEqual(t, col.DurationNs, int64(0))
			if i > 0 {
				require.True(t, col.Start.After(r.Collectives[i-1].End), "collectives do not overlap")
			}
			if col.BusyNs != nil {
				require.GreaterOrEqual(t, *col.BusyNs, int64(0))
				require.LessOrEqual(t, *col.BusyNs, col.DurationNs)
			}
			require.Equal(t, col.SizeBytes != nil, col.Kind != nccl.KindUnknown)
			for _, l := range col.Links {
				inColls += l.Messages
				collBytes += l.Bytes
				require.LessOrEqual(t, l.Messages, l.Steps*8)
			}
			for k, a := range col.Arrivals {
				require.True(t, k == 0 || col.Arrivals[k-1].Rank < a.Rank)
				require.True(t, a.FirstCTS != nil || a.FirstData != nil)
			}
		}
		require.Equal(t, messages, inColls)
		require.Equal(t, bytes, collBytes)
		require.Equal(t, r, nccl.Combine(c, c), "a collector combined with itself is itself")
	})
}
