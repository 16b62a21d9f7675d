package analyze

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestOpClassOfEveryOpcode: every one of the 256 opcodes falls in the
// class its IBTA name says (layers' table of names, not opClassOf's
// switch), on every transport: RDMA WRITE with immediate apart from
// RDMA WRITE, READ requests apart from their responses, atomics apart
// from their ACKs, and unknown opcodes in other.
func TestOpClassOfEveryOpcode(t *testing.T) {
	byName := []struct {
		has   []string
		class opClass
	}{
		{[]string{"RDMA_WRITE", "WITH_IMMEDIATE"}, opWriteImm},
		{[]string{"RDMA_WRITE"}, opWrite},
		{[]string{"SEND_"}, opSend},
		{[]string{"RDMA_READ_REQUEST"}, opReadRequest},
		{[]string{"RDMA_READ_RESPONSE"}, opReadResponse},
		{[]string{"COMPARE_SWAP"}, opAtomic},
		{[]string{"FETCH_ADD"}, opAtomic},
		{[]string{"ATOMIC_ACKNOWLEDGE"}, opAtomicACK},
		{[]string{"ACKNOWLEDGE"}, opACK},
		{[]string{"CNP"}, opCNP},
	}
	counts := map[opClass]int{}
	for code := range 256 {
		op := layers.Opcode(code)
		name := op.String()
		want := opOther
	match:
		for _, c := range byName {
			for _, s := range c.has {
				if !strings.Contains(name, s) {
					continue match
				}
			}
			want = c.class
			break
		}
		assert.Equal(t, want, opClassOf(op), "%s (0x%02x)", name, code)
		counts[want]++
	}
	// RC, UC, XRC and RD (DC) each have two WRITE-with-immediate opcodes.
	assert.Equal(t, 8, counts[opWriteImm])
	assert.Equal(t, 2, counts[opCNP])
}
