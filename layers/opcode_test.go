package layers

import (
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
)

func TestOpcodeTable(t *testing.T) {
	reth, imm, aeth := LayerTypeRETH, LayerTypeImmDt, LayerTypeAETH
	rd, deth, xrc := LayerTypeRDETH, LayerTypeDETH, LayerTypeXRCETH
	tests := []struct {
		op        Opcode
		name      string
		transport Transport
		headers   []gopacket.LayerType
		request   bool
		position  Position
		payload   bool
	}{
		{0x00, "RC_SEND_FIRST", TransportRC, nil, true, PositionFirst, true},
		{0x03, "RC_SEND_LAST_WITH_IMMEDIATE", TransportRC, []gopacket.LayerType{imm}, true, PositionLast, true},
		{0x06, "RC_RDMA_WRITE_FIRST", TransportRC, []gopacket.LayerType{reth}, true, PositionFirst, true},
		{0x0B, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", TransportRC, []gopacket.LayerType{reth, imm}, true, PositionOnly, true},
		{0x0C, "RC_RDMA_READ_REQUEST", TransportRC, []gopacket.LayerType{reth}, true, PositionNone, false},
		{0x0D, "RC_RDMA_READ_RESPONSE_FIRST", TransportRC, []gopacket.LayerType{aeth}, false, PositionFirst, true},
		{0x0E, "RC_RDMA_READ_RESPONSE_MIDDLE", TransportRC, nil, false, PositionMiddle, true},
		{0x11, "RC_ACKNOWLEDGE", TransportRC, []gopacket.LayerType{aeth}, false, PositionNone, false},
		{0x12, "RC_ATOMIC_ACKNOWLEDGE", TransportRC, []gopacket.LayerType{aeth, LayerTypeAtomicAckETH}, false, PositionNone, false},
		{0x13, "RC_COMPARE_SWAP", TransportRC, []gopacket.LayerType{LayerTypeAtomicETH}, true, PositionNone, false},
		{0x14, "RC_FETCH_ADD", TransportRC, []gopacket.LayerType{LayerTypeAtomicETH}, true, PositionNone, false},
		{0x17, "RC_SEND_ONLY_WITH_INVALIDATE", TransportRC, []gopacket.LayerType{LayerTypeIETH}, true, PositionOnly, true},
		{0x1C, "RC_FLUSH", TransportRC, []gopacket.LayerType{LayerTypeFETH, reth}, true, PositionNone, false},
		{0x1D, "RC_ATOMIC_WRITE", TransportRC, []gopacket.LayerType{reth}, true, PositionNone, true},
		{0x24, "UC_SEND_ONLY", TransportUC, nil, true, PositionOnly, true},
		{0x2B, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", TransportUC, []gopacket.LayerType{reth, imm}, true, PositionOnly, true},
		{0x44, "RD_SEND_ONLY", TransportRD, []gopacket.LayerType{rd, deth}, true, PositionOnly, true},
		{0x4B, "RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE", TransportRD, []gopacket.LayerType{rd, deth, reth, imm}, true, PositionOnly, true},
		{0x51, "RD_ACKNOWLEDGE", TransportRD, []gopacket.LayerType{rd, aeth}, false, PositionNone, false},
		{0x55, "RD_RESYNC", TransportRD, []gopacket.LayerType{rd, deth}, true, PositionNone, false},
		{0x64, "UD_SEND_ONLY", TransportUD, []gopacket.LayerType{deth}, true, PositionOnly, true},
		{0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", TransportUD, []gopacket.LayerType{deth, imm}, true, PositionOnly, true},
		{0x80, "CNP", TransportCNP, []gopacket.LayerType{LayerTypeCNP}, false, PositionNone, false},
		{0x81, "ROCE_CNP", TransportCNP, []gopacket.LayerType{LayerTypeCNP}, false, PositionNone, false},
		{0xA4, "XRC_SEND_ONLY", TransportXRC, []gopacket.LayerType{xrc}, true, PositionOnly, true},
		{0xAC, "XRC_RDMA_READ_REQUEST", TransportXRC, []gopacket.LayerType{xrc, reth}, true, PositionNone, false},
		{0xB1, "XRC_ACKNOWLEDGE", TransportXRC, []gopacket.LayerType{aeth}, false, PositionNone, false},
		{0xB7, "XRC_SEND_ONLY_WITH_INVALIDATE", TransportXRC, []gopacket.LayerType{xrc, LayerTypeIETH}, true, PositionOnly, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.True(t, tt.op.Known())
			assert.Equal(t, tt.name, tt.op.String())
			assert.Equal(t, tt.transport, tt.op.Transport())
			if tt.headers == nil {
				tt.headers = []gopacket.LayerType{}
			}
			assert.Equal(t, tt.headers, tt.op.Headers())
			n := 0
			for _, h := range tt.headers {
				n += extHeaderLen(h)
			}
			assert.Equal(t, n, tt.op.HeaderLen())
			assert.Equal(t, tt.request, tt.op.IsRequest())
			assert.Equal(t, !tt.request && !tt.op.IsCNP(), tt.op.IsResponse())
			assert.Equal(t, tt.position, tt.op.Position())
			assert.Equal(t, tt.payload, tt.op.HasPayload())
		})
	}
}

// TestOpcodeKnownSet checks which of the 256 opcodes are in the table.
func TestOpcodeKnownSet(t *testing.T) {
	known := 0
	for i := range 256 {
		op := Opcode(i)
		want := false
		switch op.Transport() {
		case TransportRC:
			want = op <= 0x14 || op == 0x16 || op == 0x17 || op == 0x1C || op == 0x1D
		case TransportUC:
			want = op <= 0x2B
		case TransportRD:
			want = op <= 0x55
		case TransportUD:
			want = op == 0x64 || op == 0x65
		case TransportCNP:
			want = op == 0x80 || op == 0x81
		case TransportXRC:
			want = op <= 0xB7 && op != 0xB5
		}
		assert.Equal(t, want, op.Known(), "0x%02X %s", i, op)
		assert.LessOrEqual(t, len(op.Headers()), maxExtHeaders)
		if op.Known() {
			known++
		} else {
			assert.Equal(t, "UNKNOWN_0x"+hex2(i), op.String())
			assert.Empty(t, op.Headers())
			assert.False(t, op.IsRequest() || op.IsResponse() || op.HasPayload())
		}
	}
	assert.Equal(t, 25+12+22+2+2+23, known)
	assert.Equal(t, "VENDOR", Opcode(0xC5).Transport().String())
	assert.Equal(t, OperationSendOnly, OpcodeUDSendOnly.Operation())
	assert.Equal(t, "only", PositionOnly.String())
}

func hex2(i int) string {
	const digits = "0123456789ABCDEF"
	return string([]byte{digits[i>>4], digits[i&15]})
}
