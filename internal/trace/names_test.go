package trace

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/layers"
)

func TestMessageName(t *testing.T) {
	for _, tc := range []struct {
		op   layers.Opcode
		want string
	}{
		{layers.OpcodeRCSendLast, "SEND"},
		{layers.OpcodeRCSendOnlyWithImmediate, "SEND"},
		{layers.OpcodeRCRDMAWriteOnly, "WRITE"},
		{layers.OpcodeRCRDMAWriteLastWithImm, "WRITE"},
		{layers.OpcodeRCRDMAReadResponseLast, "READ response"},
		{layers.OpcodeRCFetchAdd, "atomic"},
		{layers.OpcodeRCAcknowledge, "message"},
	} {
		t.Run(tc.op.String(), func(t *testing.T) {
			assert.Equal(t, tc.want, messageName(tc.op))
		})
	}
}
