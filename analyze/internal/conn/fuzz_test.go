package conn

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzLog adds the messages the input spells (each 9 bytes: a frame
// step, a time in ns, and a byte whose low bit marks a REQ with a new
// CommID and whose second bit puts the time in another zone) to a Log
// split among three parts, and checks the Log gives each back exactly
// and FirstFlood finds the flood a plain count over them finds.
func FuzzLog(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 1})
	f.Add(make([]byte, 9*40))
	f.Fuzz(func(t *testing.T, in []byte) {
		var logs [3]Log
		var all [3][]Event
		frame := uint64(0)
		for i := 0; i+9 <= len(in); i += 9 {
			frame += 1 + uint64(in[i]&0x7)
			e := Event{Frame: frame, Time: time.Unix(0, int64(binary.BigEndian.Uint64(in[i:])>>8)).UTC(), Grew: in[i+8]&1 != 0}
			if in[i+8]&2 != 0 {
				e.Time = e.Time.In(time.FixedZone("X", 60))
			}
			s := int(in[i+8]>>2) % 3
			logs[s].Add(e.Frame, e.Time)
			if e.Grew {
				logs[s].MarkGrew()
			}
			all[s] = append(all[s], e)
		}
		for s := range logs {
			it := logs[s].Iter()
			for _, w := range all[s] {
				got, ok := it.Next()
				require.True(t, ok)
				require.True(t, w == got, "%v against %v", got, w)
			}
			_, ok := it.Next()
			require.False(t, ok)
		}
		// Floods need 1,025 messages: start the count near the edge.
		from := Counts{Msgs: 1020}
		wantF, _ := firstFloodSorted(all[:], from)
		got, ok := FirstFlood(from, []*Log{&logs[0], &logs[1], &logs[2]})
		require.Equal(t, wantF, got.Frame)
		require.Equal(t, wantF != 0, ok)
	})
}
