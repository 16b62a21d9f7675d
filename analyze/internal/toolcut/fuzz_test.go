package toolcut_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/toolcut"
)

// frame is one RDMA frame of a fuzzed capture.
type frame struct {
	shard                      int
	capLen, recorded, declared int
	packet                     int
}

// fuzzFrames reads 3 bytes a frame: its shard (of 3), whether it is
// shorter than its length fields, recorded as cut, or declares a packet
// past MaxPacketLen; its captured length (one of a few, so that cut
// lengths repeat); and how much longer its length fields say it is.
func fuzzFrames(data []byte) []frame {
	lens := [...]int{64, 128, 243, 243, 256, 300, 1024, 4000}
	var out []frame
	for i := 0; i+3 <= len(data); i += 3 {
		b := data[i : i+3]
		f := frame{shard: int(b[0] % 3), capLen: lens[b[1]&7]}
		f.recorded, f.declared = f.capLen, f.capLen-int(b[2]%4) // whole
		if b[0]>>2&1 == 1 {                                     // short
			f.declared = f.capLen + 1 + int(b[2])
			if b[0]>>3&1 == 1 {
				f.recorded = f.declared // the record says it was cut
			}
			if b[0]>>4&1 == 1 {
				f.declared = toolcut.MaxPacketLen + 14 + int(b[2])
			}
		}
		f.packet = f.declared - 14
		out = append(out, f)
	}
	return out
}

// FuzzCombine: a capture's frames fed to one stage (the oracle: the rule
// applied in capture order) and, by shard, to three shards' stages.
// Combine agrees exactly when every frame was judged alike by its shard
// and by the capture, and then its facts are the capture's.
func FuzzCombine(f *testing.F) {
	f.Add([]byte{4, 2, 9, 5, 2, 9, 6, 2, 9, 0, 5, 0, 4, 2, 9})
	f.Add([]byte{0, 7, 0, 5, 2, 9, 6, 2, 9, 4, 1, 3})
	f.Add([]byte{4, 2, 9, 1, 5, 0, 5, 2, 9, 20, 2, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		frames := fuzzFrames(data)
		seq := toolcut.New(toolcut.Config{})
		shards := []*toolcut.Stage{toolcut.New(toolcut.Config{Shard: true}), toolcut.New(toolcut.Config{Shard: true}), toolcut.New(toolcut.Config{Shard: true})}
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		alike := true
		for i, fr := range frames {
			at := t0.Add(time.Duration(i) * time.Microsecond)
			want := seq.Frame(uint64(i+1), at, fr.capLen, fr.recorded, fr.declared, fr.packet)
			got := shards[fr.shard].Frame(uint64(i+1), at, fr.capLen, fr.recorded, fr.declared, fr.packet)
			alike = alike && got == want
		}
		c, disagree := toolcut.Combine(shards)
		require.Equal(t, alike, disagree == 0, "Combine disagrees at %d", disagree)
		if alike {
			require.Equal(t, seq.Facts(), c.Facts())
		}
	})
}
