package analyze

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFrameFindingsOnlyTheFrames: a Feed that also records a finding
// about an earlier frame (cnp_no_slowdown, at its CNP) lists only the
// frame's own findings, in the order found.
func TestFrameFindingsOnlyTheFrames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frames []uint64 // frames of the findings recorded by the last Feed
		want   []string
	}{
		{"none", nil, []string{}},
		{"own only", []uint64{9, 9}, []string{"a", "b"}},
		{"earlier first", []uint64{3, 9, 9}, []string{"b", "c"}},
		{"interleaved", []uint64{9, 3, 9, 4}, []string{"a", "c"}},
		{"earlier only", []uint64{3}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Options{})
			a.findings = []Finding{{Frame: 1, Detail: "before"}}
			a.frameFindings = len(a.findings)
			for i, fr := range tc.frames {
				a.findings = append(a.findings, Finding{Frame: fr, Detail: string(rune('a' + i))})
			}
			a.pkt.Frame = 9
			got := []string{}
			for _, f := range a.FrameFindings() {
				got = append(got, f.Detail)
			}
			assert.Equal(t, tc.want, got)
			assert.Len(t, a.findings, 1+len(tc.frames), "nothing is dropped from the list")
		})
	}
}
