package nccl_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// TestCollectorLast: the mark of each packet of a connection A → B
// (B's CTS to A, tag 0; A's data to B), and of B → A once B's rank is
// known from A's CTS to B (tag 1).
func TestCollectorLast(t *testing.T) {
	none := nccl.Mark{Rank: -1, ReceiverRank: -1}
	c := nccl.NewCollector()
	ctsBA := write(layers.OpcodeRCRDMAWriteOnly, hostA, hostB, 0x21, 0x8000+nccl.Slot(1)*512, 0x98, 64, -1, ctsEntry(0xb000, 1<<20, 0x56, 1, 1, 1))
	for _, tc := range []struct {
		name string
		p    *analyze.Packet
		want nccl.Mark
	}{
		{"not RDMA", &analyze.Packet{}, none},
		{"ACK", &analyze.Packet{IsRDMA: true, BTH: &layers.BTH{Opcode: layers.OpcodeRCAcknowledge}}, none},
		{"CTS idx 1", cts(1, 0xa000), nccl.Mark{Kind: nccl.MarkCTS, Rank: 0, ReceiverRank: -1, Idx: 1}},
		{"not a CTS: nreqs 2 in one entry", write(layers.OpcodeRCRDMAWriteOnly, hostB, hostA, 0x20, 0x7000, 0x99, 64, -1, ctsEntry(0xa000, 1<<20, 0x55, 2, 0, 1)), none},
		{"data to an unposted buffer", write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xc000, 0x55, 100, 100, nil), none},
		{"first packet of a data write", write(layers.OpcodeRCRDMAWriteFirst, hostA, hostB, 0x30, 0xa000, 0x55, 5000, -1, nil), none},
		{"last packet: the message", write(layers.OpcodeRCRDMAWriteLastWithImm, hostA, hostB, 0x30, 0, 0, 0, 5000, nil), nccl.Mark{Kind: nccl.MarkData, Rank: 0, ReceiverRank: -1, Idx: 1, Length: 5000}},
		{"CTS B → A, tag 1", ctsBA, nccl.Mark{Kind: nccl.MarkCTS, Rank: 1, ReceiverRank: 0, Idx: 1}},
		{"CTS idx 2, B's rank now known", cts(2, 0xa100), nccl.Mark{Kind: nccl.MarkCTS, Rank: 0, ReceiverRank: 1, Idx: 2}},
		{"one-packet data", write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa100, 0x55, 100, 100, nil), nccl.Mark{Kind: nccl.MarkData, Rank: 0, ReceiverRank: 1, Idx: 2, Length: 100}},
		{"the same data again: its entry is retired", write(layers.OpcodeRCRDMAWriteOnlyWithImm, hostA, hostB, 0x30, 0xa100, 0x55, 100, 100, nil), none},
	} {
		c.Add(tc.p)
		assert.Equal(t, tc.want, c.Last(), tc.name)
	}
}
