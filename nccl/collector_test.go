package nccl_test

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/nccl"
)

var (
	hostA = analyze.Addr{IP: netip.MustParseAddr("10.0.0.1")}
	hostB = analyze.Addr{IP: netip.MustParseAddr("10.0.0.2")}
)

// ctsEntry writes a 2.20 FIFO entry (NCCL.md's table): addr @0, size @8,
// rkeys @12, nreqs @20, tag @24, idx @32.
func ctsEntry(addr uint64, size, rkey uint32, nreqs, tag int32, idx uint64) []byte {
	b := make([]byte, 64)
	binary.LittleEndian.PutUint64(b[0:], addr)
	binary.LittleEndian.PutUint32(b[8:], size)
	binary.LittleEndian.PutUint32(b[12:], rkey)
	binary.LittleEndian.PutUint32(b[20:], uint32(nreqs))
	binary.LittleEndian.PutUint32(b[24:], uint32(tag))
	binary.LittleEndian.PutUint64(b[32:], idx)
	return b
}

// write is an RC RDMA WRITE packet as the analyzer decodes it: with a
// RETH when va or rkey is set, an immediate when imm ≥ 0.
func write(op layers.Opcode, src, dst analyze.Addr, qp uint32, va uint64, rkey, length uint32, imm int64, payload []byte) *analyze.Packet {
	p := &analyze.Packet{IsRDMA: true, Src: src, Dst: dst, BTH: &layers.BTH{Opcode: op, DestQP: qp}, Payload: payload}
	if op != layers.OpcodeRCRDMAWriteLastWithImm {
		p.RETH = &layers.RETH{VA: va, RKey: rkey, DMALength: length}
	}
	if imm >= 0 {
		p.ImmDt = &layers.ImmDt{Immediate: uint32(imm)}
	}
	return p
}

// cts is the receiver B's CTS of idx to sender A (tag 0), posting a 1 MiB
// buffer at buf, FIFO at 0x7000 rkey 0x99, on A's QP 0x20.
func cts(idx, buf uint64) *analyze.Packet {
	return write(layers.OpcodeRCRDMAWriteOnly, hostB, hostA, 0x20, 0x7000+nccl.Slot(idx)*512, 0x99, 64, -1, ctsEntry(buf, 1<<20, 0x55, 1, 0, idx))
}

func TestCollector(t *testing.T) {
	le := func(n uint32) int64 {
		b := binary.LittleEndian.AppendUint32(nil, n)
		return int64(binary.BigEndian.Uint32(b))
	}
	for _, tc := range []struct {
		name     string
		packets  []*analyze.Packet
		messages uint64 // 0: not NCCL (nil)
		bytes    uint64
	}{
		{"one-packet message, host-order immediate", []*analyze.Packet{
			cts(1, 0xa000),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x55, 100, le(100), nil),
		}, 1, 100},
		{"big-endian immediate, and a 0-byte message", []*analyze.Packet{
			cts(1, 0xa000), cts(2, 0xb000),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x55, 100, 100, nil),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xb000, 0x55, 0, 0, nil),
		}, 2, 100},
		{"multi-packet message", []*analyze.Packet{
			cts(1, 0xa000),
			write(layers.OpcodeRCRDMAWriteFirst, hostA, hostB, 0x30, 0xa000, 0x55, 5000, -1, nil),
			write(layers.OpcodeRCRDMAWriteMiddle, hostA, hostB, 0x30, 0, 0, 0, -1, nil),
			write(layers.OpcodeRCRDMAWriteLastWithImm, hostA, hostB, 0x30, 0, 0, 0, le(5000), nil),
		}, 1, 5000},
		{"look-alike: 64-byte reverse writes never written to", []*analyze.Packet{
			cts(1, 0xa000), cts(2, 0xb000),
			write(layers.OpcodeRCRDMAWriteOnly, hostA, hostB, 0x30, 0xa000, 0x55, 64, -1, make([]byte, 64)),
		}, 0, 0},
		{"look-alike: data to the address, another key", []*analyze.Packet{
			cts(1, 0xa000),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x56, 100, 100, nil),
		}, 0, 0},
		{"look-alike: immediate not the length", []*analyze.Packet{
			cts(1, 0xa000),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x55, 100, 7, nil),
		}, 0, 0},
		{"look-alike: more than the buffer offered", []*analyze.Packet{
			cts(1, 0xa000),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x55, 1<<20+1, 1<<20+1, nil),
		}, 0, 0},
		{"look-alike: 64-byte reverse writes that do not parse", []*analyze.Packet{
			write(layers.OpcodeRCRDMAWriteOnly, hostB, hostA, 0x20, 0x7000, 0x99, 64, -1, make([]byte, 64)),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x55, 0, 0, nil),
		}, 0, 0},
		{"look-alike: data from the wrong host", []*analyze.Packet{
			cts(1, 0xa000),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostB, hostA, 0x30, 0xa000, 0x55, 100, 100, nil),
		}, 0, 0},
		{"a multi-packet write without immediate is no message", []*analyze.Packet{
			cts(1, 0xa000),
			write(layers.OpcodeRCRDMAWriteFirst, hostA, hostB, 0x30, 0xa000, 0x55, 5000, -1, nil),
			write(layers.OpcodeRCRDMAWriteLast, hostA, hostB, 0x30, 0, 0, 0, -1, nil),
			write(layers.OpcodeRCRDMAWriteLastWithImm, hostA, hostB, 0x30, 0, 0, 0, le(5000), nil),
		}, 0, 0},
		{"a write to another buffer ends the one before", []*analyze.Packet{
			cts(1, 0xa000),
			write(layers.OpcodeRCRDMAWriteFirst, hostA, hostB, 0x30, 0xa000, 0x55, 5000, -1, nil),
			write(layers.OpcodeRCRDMAWriteFirst, hostA, hostB, 0x30, 0xf000, 0x55, 5000, -1, nil),
			write(layers.OpcodeRCRDMAWriteLastWithImm, hostA, hostB, 0x30, 0, 0, 0, le(5000), nil),
		}, 0, 0},
		{"a buffer filled once: the second write to it is not a message", []*analyze.Packet{
			cts(1, 0xa000),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x55, 100, 100, nil),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x55, 100, 100, nil),
		}, 1, 100},
		{"a slot reused retires its buffer", []*analyze.Packet{
			cts(1, 0xa000), cts(257, 0xb000), // slot 0 twice
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x55, 100, 100, nil),
			write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xb000, 0x55, 100, 100, nil),
		}, 1, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := nccl.NewCollector()
			for _, p := range tc.packets {
				c.Add(p)
			}
			r := c.Result()
			if tc.messages == 0 {
				require.Nil(t, r)
				return
			}
			require.NotNil(t, r)
			assert.Equal(t, "2.20", r.FIFOLayout)
			assert.Equal(t, []nccl.Rank{{Rank: 0, Addr: "10.0.0.1"}}, r.Ranks)
			require.Len(t, r.Connections, 1)
			cn := r.Connections[0]
			assert.Equal(t, "10.0.0.1", cn.Sender)
			assert.Equal(t, "10.0.0.2", cn.Receiver)
			assert.Equal(t, new(0), cn.SenderRank)
			assert.Nil(t, cn.ReceiverRank, "no CTS was written to B: its rank is unknown")
			assert.Equal(t, []uint32{0x30}, cn.DataQPs)
			assert.Equal(t, uint32(0x20), cn.CTSQP)
			assert.Equal(t, uint32(0x99), cn.FIFORkey)
			assert.Equal(t, "0x7000", cn.FIFOAddr)
			assert.Equal(t, tc.messages, cn.Messages)
			assert.Equal(t, tc.bytes, cn.Bytes)
			assert.True(t, cn.Active)
			assert.Nil(t, r.Rings)
		})
	}
}

// TestCombineDeduplicates: the same connection seen by two files (its
// two ends) is one connection, and a ring shows once every link is seen.
func TestCombineDeduplicates(t *testing.T) {
	one := func(c *nccl.Collector, src, dst analyze.Addr, tag int32, buf uint64) {
		c.Add(write(layers.OpcodeRCRDMAWriteOnly, dst, src, 0x20, 0x7000, 0x99, 64, -1, ctsEntry(buf, 1<<20, 0x55, 1, tag, 1)))
		c.Add(write(layers.OpcodeRCRDMAWriteOnlyWithImm, src, dst, 0x30, buf, 0x55, 10, 10, nil))
	}
	a, b := nccl.NewCollector(), nccl.NewCollector()
	one(a, hostA, hostB, 0, 0xa000) // A's file sees A→B and B→A
	one(a, hostB, hostA, 1, 0xb000)
	one(b, hostA, hostB, 0, 0xa000) // B's file too
	one(b, hostB, hostA, 1, 0xb000)
	r := nccl.Combine(a, b)
	require.NotNil(t, r)
	require.Len(t, r.Connections, 2)
	for _, c := range r.Connections {
		assert.Equal(t, uint64(1), c.CTS)
		assert.Equal(t, uint64(1), c.Messages)
	}
	assert.Equal(t, 1, r.Channels)
	assert.Equal(t, [][]int{{0, 1}}, r.Rings)
	assert.Equal(t, a.Result(), r)
}

// TestCollectorNoAllocs: a plain WRITE that is no CTS, and data writes
// to no posted buffer, cost no allocation (the Collector sees every
// packet of a run).
func TestCollectorNoAllocs(t *testing.T) {
	c := nccl.NewCollector()
	plain := write(layers.OpcodeRCRDMAWriteOnly, hostB, hostA, 0x20, 0x7000, 0x99, 64, -1, make([]byte, 64))
	data := write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa000, 0x55, 100, 100, nil)
	first := write(layers.OpcodeRCRDMAWriteFirst, hostA, hostB, 0x30, 0xa000, 0x55, 5000, -1, nil)
	allocs := testing.AllocsPerRun(100, func() {
		c.Add(plain)
		c.Add(data)
		c.Add(first)
		_ = c.Last()
	})
	assert.Zero(t, allocs)
	assert.Nil(t, c.Result())
}

// BenchmarkCollectorPlainRoCE: what the Collector costs per packet of
// RDMA traffic that is not NCCL's: a 64 KiB WRITE's first, middle and
// last packets; a 64-byte WRITE ONLY, which it decodes as a CTS in every
// layout before refusing.
func BenchmarkCollectorPlainRoCE(b *testing.B) {
	for _, bc := range []struct {
		name    string
		packets []*analyze.Packet
	}{
		{"write_64KiB", []*analyze.Packet{
			write(layers.OpcodeRCRDMAWriteFirst, hostA, hostB, 0x30, 0xa000, 0x55, 65536, -1, make([]byte, 58)),
			write(layers.OpcodeRCRDMAWriteMiddle, hostA, hostB, 0x30, 0, 0, 0, -1, make([]byte, 74)),
			write(layers.OpcodeRCRDMAWriteLast, hostA, hostB, 0x30, 0, 0, 0, -1, make([]byte, 74)),
		}},
		{"write_only_64B", []*analyze.Packet{
			write(layers.OpcodeRCRDMAWriteOnly, hostA, hostB, 0x30, 0xa000, 0x55, 64, -1, make([]byte, 64)),
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c := nccl.NewCollector()
			b.ReportAllocs()
			for b.Loop() {
				for _, p := range bc.packets {
					c.Add(p)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(bc.packets)), "ns/pkt")
		})
	}
}
