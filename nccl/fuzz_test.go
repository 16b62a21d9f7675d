package nccl_test

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// FuzzRecognizer feeds the Collector CTS writes of arbitrary bytes and
// data writes whose address, key, length and immediate come from the
// input: no panic, state bounded by the CTS it was given, and a result
// that is nil or consistent with itself.
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
		for i := range 3 {
			c.Add(write(layers.OpcodeRCRDMAWriteOnly, hostB, hostA, 0x20, fifo+uint64(i)*512, 0x99, uint32(len(payload)), -1, payload))
			switch mode % 3 {
			case 0:
				c.Add(write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, va, rkey, length, int64(imm), nil))
			case 1:
				c.Add(write(layers.OpcodeRCRDMAWriteFirst, hostA, hostB, 0x30, va, rkey, length, -1, nil))
				c.Add(write(layers.OpcodeRCRDMAWriteLastWithImm, hostA, hostB, 0x30, 0, 0, 0, int64(imm), nil))
			default:
				c.Add(write(layers.OpcodeRCRDMAWriteLast, hostA, hostB, 0x30, 0, 0, 0, -1, nil))
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
		require.Equal(t, r, nccl.Combine(c, c), "a collector combined with itself is itself")
	})
}
