package export

import "testing"

// TestPacketColumnFills checks that every column of the packets table
// has a fill in packetColumnFills.
func TestPacketColumnFills(t *testing.T) {
	for col, c := range packetColumnFills {
		if c.fill == nil {
			t.Errorf("column %d (%s) has no fill", col, packetColumns[col])
		}
	}
}
