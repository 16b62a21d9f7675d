package cli

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEarliest: the second pass's merge takes the earliest packet on the
// reference clock; a tie goes to the copy with more captured bytes (a
// full capture over a header-only one, whatever the order of the files),
// then to the file given first.
func TestEarliest(t *testing.T) {
	cases := []struct {
		name string
		hs   []head
		want int
	}{
		{"none left", []head{{t: 1}, {t: 2}}, -1},
		{"earliest", []head{{t: 5, capLen: 100, ok: true}, {t: 3, capLen: 60, ok: true}, {t: 4, capLen: 100, ok: true}}, 1},
		{"done files skipped", []head{{t: 1, capLen: 100}, {t: 3, capLen: 60, ok: true}}, 1},
		{"tie: the fuller copy, given first", []head{{t: 7, capLen: 128, ok: true}, {t: 7, capLen: 1090, ok: true}}, 1},
		{"tie: the fuller copy, given second", []head{{t: 7, capLen: 1090, ok: true}, {t: 7, capLen: 128, ok: true}}, 0},
		{"tie of equal copies: the file given first", []head{{t: 9, capLen: 64, ok: true}, {t: 7, capLen: 300, ok: true}, {t: 7, capLen: 300, ok: true}}, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, newMerge(tc.hs).earliest())
		})
	}
}

// TestMergeOrder: the heap gives the files' packets in the order a scan
// of every file's next packet gives them (the merge before the heap), on
// files with few distinct times and lengths, so that ties abound.
func TestMergeOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 25))
	for _, files := range []int{1, 2, 3, 16, 64} {
		packets := make([][]head, files)
		for i := range packets {
			t0 := int64(0)
			for range rng.IntN(200) {
				t0 += rng.Int64N(3)
				packets[i] = append(packets[i], head{t: t0, capLen: 64 << rng.IntN(3), ok: true})
			}
		}
		// The oracle: scan every file's next packet.
		next := make([]int, files)
		headOf := func(i int) head {
			if next[i] < len(packets[i]) {
				return packets[i][next[i]]
			}
			return head{}
		}
		var want []int
		for {
			bi := -1
			for i := range files {
				if h := headOf(i); h.ok && (bi < 0 || before(h, i, headOf(bi), bi)) {
					bi = i
				}
			}
			if bi < 0 {
				break
			}
			want = append(want, bi)
			next[bi]++
		}
		clear(next)
		heads := make([]head, files)
		for i := range heads {
			heads[i] = headOf(i)
		}
		m := newMerge(heads)
		var got []int
		for bi := m.earliest(); bi >= 0; bi = m.earliest() {
			got = append(got, bi)
			next[bi]++
			m.advance(headOf(bi))
		}
		require.Equal(t, want, got, "%d files", files)
	}
}
