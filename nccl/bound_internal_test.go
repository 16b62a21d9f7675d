package nccl

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// TestCollectorBounded: the Collector's state grows with connections and
// outstanding receives, never with packets: a connection holds at most
// the 256 slots × 8 entries of its FIFO however many CTS it gets (and,
// no data written to it, twice 256 steps), and candidate connections
// stop at MaxConnections.
func TestCollectorBounded(t *testing.T) {
	src, dst := analyze.Addr{IP: netip.MustParseAddr("10.0.0.2")}, analyze.Addr{IP: netip.MustParseAddr("10.0.0.1")}
	// cts is a 2.20 CTS of 8 entries (tag 0, idx), each to its own buffer.
	cts := func(rkey uint32, idx uint64, buf uint64) *analyze.Packet {
		b := make([]byte, 8*64)
		for i := range 8 {
			e := b[i*64:]
			binary.LittleEndian.PutUint64(e[0:], buf+uint64(i)*0x1000)
			binary.LittleEndian.PutUint32(e[8:], 1<<20)
			binary.LittleEndian.PutUint32(e[12:], 0x55)
			binary.LittleEndian.PutUint32(e[20:], 8)
			binary.LittleEndian.PutUint64(e[32:], idx)
		}
		return &analyze.Packet{IsRDMA: true, Src: src, Dst: dst, Payload: b,
			BTH:  &layers.BTH{Opcode: layers.OpcodeRCRDMAWriteOnly, DestQP: 0x20},
			RETH: &layers.RETH{VA: 0x100000 + Slot(idx)*512, RKey: rkey, DMALength: uint32(len(b))}}
	}
	c := NewCollector()
	for idx := uint64(1); idx <= 10*fifoSlots; idx++ { // every slot ten times over, new buffers each time
		c.Add(cts(0x99, idx, idx<<24))
	}
	require.Len(t, c.conns, 1)
	assert.Equal(t, uint64(10*fifoSlots), c.conns[0].cts)
	assert.LessOrEqual(t, len(c.conns[0].steps), 2*fifoSlots, "the steps of a connection no data was written to")
	assert.Len(t, c.posted, fifoSlots*maxRecvs, "the last CTS of each slot")
	assert.Len(t, c.conns[0].slots, fifoSlots)

	c = NewCollector()
	for k := range MaxConnections + 100 {
		c.Add(cts(uint32(k+1), 1, 0x1000000))
	}
	assert.Len(t, c.conns, MaxConnections)
	assert.Len(t, c.byKey, MaxConnections)
}
