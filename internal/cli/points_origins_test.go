package cli

import (
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// everyPSN returns the relative PSNs +0 … +n-1.
func everyPSN(n int) []synth.PSNRef {
	refs := make([]synth.PSNRef, n)
	for i := range refs {
		refs[i] = synth.PSNRef{Value: uint32(i), Relative: true}
	}
	return refs
}

// TestFindingOriginsBounded: a combined analyzer that lists at most 10
// findings is fed 800 frames that each have one (every request marked
// ECN CE, each answered by a CNP; some NAKed: warnings that push info
// findings out). The origins keep an entry for each frame whose findings
// were listed as it was fed, which the findings cap bounds (findingList:
// at most 4 entries a listed finding), and for the latest frames whose
// findings were all left out (at most twice recent), not one per frame
// with a finding as the map of every such frame did. Every finding
// listed in the end about a frame that had findings when fed finds its
// origin (the CNPs the sender did not slow down after: warnings decided
// later, about frames whose own finding the full list left out) while
// recent keeps them all; with recent 16, the latest 16 frames left out
// still do.
func TestFindingOriginsBounded(t *testing.T) {
	const maxFindings = 10
	cases := []struct {
		name   string
		nak    []synth.PSNRef
		recent int
	}{
		{"info findings only", nil, 0},
		{"warnings replace info findings", []synth.PSNRef{{Value: 100, Relative: true}, {Value: 300, Relative: true}, {Value: 500, Relative: true}}, 0},
		{"the latest 16 left out", nil, 16},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := generate(t, t.TempDir(), "ecn.pcap", synth.Config{Scenario: "write-bw", Messages: 200,
				Impairments: synth.Impairments{ECN: everyPSN(800), NAK: tc.nak}})
			cr, err := capture.Open(path)
			require.NoError(t, err)
			defer cr.Close()
			a := analyze.New(analyze.Options{MaxFindings: maxFindings})
			o := findingOrigins{recent: tc.recent}
			var withFindings []uint64
			for {
				ci, data, lt, err := cr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				p := a.Feed(ci, lt, data)
				if p.Findings > 0 {
					withFindings = append(withFindings, p.Frame)
					// The origin the test gives each frame: file 1, frame ×10.
					o.note(a, p.Frame, 1, 10*p.Frame)
				}
			}
			require.Greater(t, len(withFindings), 800, "every request has a finding")
			assert.LessOrEqual(t, len(o.listed.combined), 4*maxFindings, "listed frames bounded by the cap")
			if tc.recent > 0 {
				assert.LessOrEqual(t, len(o.unlisted.combined), 2*tc.recent)
				for _, f := range withFindings[len(withFindings)-tc.recent:] {
					got, ok := o.of(f)
					require.True(t, ok, "frame %d", f)
					assert.Equal(t, origin{1, 10 * f}, got)
				}
				return
			}
			rep := a.Finish()
			require.Len(t, rep.Findings, maxFindings)
			for _, f := range rep.Findings {
				if _, had := slices.BinarySearch(withFindings, f.Frame); !had {
					continue
				}
				got, ok := o.of(f.Frame)
				require.True(t, ok, "frame %d of a listed %s finding", f.Frame, f.Kind)
				assert.Equal(t, origin{1, 10 * f.Frame}, got)
			}
			_, ok := o.of(1 << 40)
			assert.False(t, ok)
		})
	}
}

// TestCapturePointsFindingFiles: the combined report's findings name the
// file and frame where the transmission was first seen: the ECN CE marks
// of a write stream seen at two points are the upstream file's, at the
// frames its own report gives them.
func TestCapturePointsFindingFiles(t *testing.T) {
	dir := t.TempDir()
	a := generate(t, dir, "a.pcap", synth.Config{Scenario: "write-bw", Messages: 20, Nanos: true,
		Impairments: synth.Impairments{ECN: everyPSN(40)}})
	b := filepath.Join(dir, "b.pcap")
	shiftCapture(t, a, b, 2*time.Microsecond)
	type report struct {
		Findings []struct {
			Frame uint64 `json:"frame"`
			Kind  string `json:"kind"`
			File  string `json:"file"`
		} `json:"findings"`
		Points *struct{} `json:"points"`
	}
	read := func(files ...string) report {
		code, out, errs := runCLI(append([]string{"-o", "json"}, files...)...)
		require.Equal(t, 0, code, errs)
		var r report
		require.NoError(t, json.Unmarshal([]byte(out), &r))
		return r
	}
	want := map[uint64]bool{}
	for _, f := range read(a).Findings {
		if f.Kind == string(analyze.KindECNCE) {
			want[f.Frame] = true
		}
	}
	require.Len(t, want, 40)
	both := read(a, b)
	require.NotNil(t, both.Points)
	got := map[uint64]bool{}
	for _, f := range both.Findings {
		if f.Kind == string(analyze.KindECNCE) {
			assert.Equal(t, a, f.File)
			got[f.Frame] = true
		}
	}
	assert.Equal(t, want, got)
}
