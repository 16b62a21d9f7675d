package analyze

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPiecesRef: Pieces name each frame of the stream by its file and its
// number there, as a list of every frame's file (the oracle) does: for the
// pieces of a rotation (a run each), for files merged by time in runs of
// every length (frame by frame at worst), across many marks, and while the
// stream goes on (a frame's name does not change once it is fed).
func TestPiecesRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		name   string
		files  int
		frames int
		runLen func() int // frames of the next run
		from   uint64     // the stream's first frame number
	}{
		{"one file", 1, 50, func() int { return 50 }, 1},
		{"a rotation", 4, 400, func() int { return 100 }, 1},
		{"merged, frame by frame", 2, 3000, func() int { return 1 }, 1},
		{"merged, runs of 1 to 9", 3, 5000, func() int { return 1 + rng.IntN(9) }, 1},
		{"merged, 5 files, long and short runs", 5, 20000, func() int { return 1 + rng.IntN(1+rng.IntN(200)) }, 1},
		{"merged, first frame 17", 2, 1000, func() int { return 1 + rng.IntN(3) }, 17},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names := make([]string, tc.files)
			for i := range names {
				names[i] = fmt.Sprintf("f%d.pcap", i)
			}
			p := NewPieces(names)
			type ref struct {
				file string
				n    uint64
			}
			var want []ref
			counts := make([]uint64, tc.files)
			last := -1
			frame := tc.from
			for len(want) < tc.frames {
				f := rng.IntN(tc.files)
				if tc.files > 1 && f == last {
					f = (f + 1) % tc.files
				}
				if tc.name == "a rotation" {
					f = last + 1
				}
				p.Begin(f, frame)
				for range tc.runLen() {
					counts[f]++
					want = append(want, ref{names[f], counts[f]})
					frame++
					// The frame just fed is named while the stream goes on.
					if tc.files > 1 {
						gf, gn := p.Ref(frame - 1)
						require.Equal(t, want[len(want)-1], ref{gf, gn}, "frame %d", frame-1)
					}
				}
				last = f
			}
			for i, w := range want {
				f, n := p.Ref(tc.from + uint64(i))
				if tc.files == 1 { // one file: frames are the stream's
					assert.Equal(t, tc.from+uint64(i), n)
					continue
				}
				require.Equal(t, w, ref{f, n}, "frame %d", tc.from+uint64(i))
			}
		})
	}
}

// TestPiecesLongRun: a run longer than a run's 32-bit gap holds (4 G
// frames) is continued, and the frames of its file before later runs
// count all of it (found by review: the marks after it lacked 2^32-1
// frames of the file).
func TestPiecesLongRun(t *testing.T) {
	p := NewPieces([]string{"a", "b"})
	p.Begin(0, 1)
	long := uint64(1)<<32 + 10 // file a's first run: frames 1 … 2^32+10
	frame := long + 1
	p.Begin(1, frame)
	a, b := long, uint64(1)
	for i := range 600 { // runs of one frame, alternating, over a few marks
		frame++
		if i%2 == 0 {
			p.Begin(0, frame)
			a++
			f, n := p.Ref(frame)
			require.Equal(t, "a", f)
			require.Equal(t, a, n, "frame %d", frame)
		} else {
			p.Begin(1, frame)
			b++
			f, n := p.Ref(frame)
			require.Equal(t, "b", f)
			require.Equal(t, b, n, "frame %d", frame)
		}
	}
	f, n := p.Ref(long)
	assert.Equal(t, "a", f)
	assert.Equal(t, long, n)
}

// TestPiecesBytesPerSwitch: the stream going from one file to another
// costs Pieces a bounded number of bytes, whatever the number of files:
// frames dealt to 2 or to 2,000 files in turn (a switch every frame), the
// heap Pieces hold after 400,000 switches is at most 16 bytes a switch
// (it was 8 + files/32 bytes: 70 with 2,000 files), and every frame is
// still named by its file and number there.
func TestPiecesBytesPerSwitch(t *testing.T) {
	const switches = 400_000
	for _, files := range []int{2, 2000} {
		t.Run(fmt.Sprintf("files=%d", files), func(t *testing.T) {
			names := make([]string, files)
			for i := range names {
				names[i] = fmt.Sprintf("f%05d.pcap", i)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			p := NewPieces(names)
			for k := range uint64(switches) {
				p.Begin(int(k%uint64(files)), k+1)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			t.Logf("%.1f bytes a switch", held/switches)
			assert.LessOrEqual(t, held/switches, 16.0, "bytes a switch")
			for _, k := range []uint64{0, 1, uint64(files), switches / 2, switches - 1} {
				f, n := p.Ref(k + 1)
				assert.Equal(t, names[k%uint64(files)], f, "frame %d", k+1)
				assert.Equal(t, k/uint64(files)+1, n, "frame %d", k+1)
			}
		})
	}
}
