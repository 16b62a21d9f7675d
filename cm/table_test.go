package cm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMessageTable checks the message table against the IBTA: each CM
// attribute ID (12.6, Table 85) with its name and the private data room
// of its message (the rest of the 232 bytes is the fixed part), and that
// the entry's constructor builds the message of that attribute.
func TestMessageTable(t *testing.T) {
	spec := []struct {
		id      uint16
		name    string
		private int // private data bytes, IBTA 12.6.5–12.8.2
	}{
		{0x0010, "REQ", 92}, {0x0011, "MRA", 222}, {0x0012, "REJ", 148}, {0x0013, "REP", 196},
		{0x0014, "RTU", 224}, {0x0015, "DREQ", 220}, {0x0016, "DREP", 224}, {0x0017, "SIDR_REQ", 216},
		{0x0018, "SIDR_REP", 136}, {0x0019, "LAP", 168}, {0x001A, "APR", 148},
	}
	entries := 0
	for i, e := range messageTypes {
		if e.new != nil {
			entries++
			assert.Equal(t, AttributeID(i), e.id, "entry %d is keyed by its own ID", i)
		}
	}
	assert.Equal(t, len(spec), entries, "one table entry per CM message")
	for _, s := range spec {
		t.Run(s.name, func(t *testing.T) {
			id := AttributeID(s.id)
			e := lookupMessage(id)
			require.NotNil(t, e)
			assert.Equal(t, s.name, e.name)
			assert.Equal(t, DataLen-s.private, e.fixed)
			m := e.new()
			assert.Equal(t, id, m.AttributeID())
			assert.NotSame(t, m, e.new(), "a new message each call")
			assert.Equal(t, s.name, AttributeName(ClassCM, id))
			assert.Equal(t, s.name, messageName(id))
		})
	}
	for _, id := range []AttributeID{0, AttrClassPortInfo, 0x000F, 0x001B, AttributeID(len(messageTypes)), 0xFFFF} {
		assert.Nil(t, lookupMessage(id), "%s", id)
		assert.Nil(t, NewMessage(id), "%s", id)
		assert.Equal(t, DataLen, fixedLen(id))
		assert.Equal(t, id.String(), messageName(id))
	}
}
