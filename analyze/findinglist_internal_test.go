package analyze

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFindingListEvictsLeastSevere: a full list makes room for a finding
// by replacing the latest one of the least severe severity below it; a
// storm of infos never pushes out an error or a warning.
func TestFindingListEvictsLeastSevere(t *testing.T) {
	const e, w, i = SeverityError, SeverityWarning, SeverityInfo
	tests := []struct {
		name    string
		max     int
		in      string // severities in order: e, w, i
		want    string // the frames listed (1-based positions in in), in order
		dropped uint64
	}{
		{"under the cap", 3, "iwe", "1 2 3", 0},
		{"info storm after an error", 2, "eiiii", "1 2", 3},
		{"error after an info storm", 2, "iiiie", "1 5", 3},
		{"latest info goes first", 3, "iiwe", "1 3 4", 1},
		{"warning replaces info, not error", 2, "eiw", "1 3", 1},
		{"error replaces info before warning", 2, "wie", "1 3", 1},
		{"nothing below: dropped", 2, "eew", "1 2", 1},
		{"errors beyond the cap are dropped", 2, "eee", "1 2", 1},
		{"warning after errors and infos", 3, "eiiew", "1 4 5", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := findingList{max: tt.max}
			for n, c := range tt.in {
				sev := map[rune]Severity{'e': e, 'w': w, 'i': i}[c]
				if fd := l.add(sev); fd != nil {
					fd.Frame = uint64(n + 1)
				}
			}
			var got []string
			for _, f := range l.listed() {
				got = append(got, string(rune('0'+f.Frame)))
			}
			assert.Equal(t, tt.want, strings.Join(got, " "))
			assert.Equal(t, tt.dropped, l.dropped)
			assert.Equal(t, uint64(len(tt.in)), uint64(len(l.listed()))+l.dropped)
		})
	}
}

// TestFindingListSetSeverity: a finding whose severity changed is evicted
// as its new severity, never as its old one.
func TestFindingListSetSeverity(t *testing.T) {
	l := findingList{max: 2}
	l.add(SeverityError).Frame = 1
	l.add(SeverityWarning).Frame = 2
	l.setSeverity(1, SeverityInfo)
	fd := l.add(SeverityWarning)
	fd.Frame = 3
	got := l.listed()
	assert.Equal(t, []uint64{1, 3}, []uint64{got[0].Frame, got[1].Frame})
	assert.Nil(t, l.add(SeverityWarning), "nothing below warning left")
	assert.Equal(t, uint64(2), l.dropped)
}
