package cli

import (
	"testing"

	"github.com/stretchr/testify/assert"
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
			assert.Equal(t, tc.want, earliest(tc.hs))
		})
	}
}
