package cli

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestCapturePointsHalfCopy: a file that holds every other packet of
// another lacks half of it within the PSNs both saw: it is not a capture
// point of its traffic (matched, it made half the packets "lost" between
// the points), the two are analyzed each on its own, and the text report
// says why. A point that captured later (the second half of the frames)
// or dropped one packet in ten still meets.
func TestCapturePointsHalfCopy(t *testing.T) {
	dir := t.TempDir()
	whole := generate(t, dir, "whole.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 6000, QPs: 8, Seed: 5})
	for _, tc := range []struct {
		name   string
		keep   func(n int) bool // frame n (from 0) of the 6,000
		points bool
	}{
		{"every other frame", func(n int) bool { return n%2 == 1 }, false},
		{"the second half", func(n int) bool { return n >= 3000 }, true},
		{"one frame in ten dropped", func(n int) bool { return n%10 != 3 }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			part := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".pcap")
			rewriteCapture(t, whole, part, func(n int, _ *gopacket.CaptureInfo) bool { return tc.keep(n) })
			code, js, errs := runCLI("-o", "json", whole, part)
			require.Equal(t, ExitOK, code, errs)
			assert.Equal(t, tc.points, strings.Contains(js, `"points"`), "matched as capture points")
			code, text, errs := runCLI("--color", "never", whole, part)
			require.Equal(t, ExitOK, code, errs)
			if tc.points {
				assert.Contains(t, text, "matched as capture points of one traffic")
				return
			}
			assert.NotContains(t, text, "Capture points")
			assert.Regexp(t, `not capture points of one traffic: `+regexp.QuoteMeta(part)+` lacks \d+ of the \d+ sampled transmissions of `+regexp.QuoteMeta(whole)+` within the PSNs both saw of their flows, more than 1 in 4`, text)
		})
	}
}

// TestApartNotPieces: a file of every other packet of another, its clock
// an hour ahead, follows it in time, but the two share transmissions:
// they are not the pieces of one capture (read as one, every packet of
// the second counted as a resend), nor capture points; each is analyzed
// on its own (found by review).
func TestApartNotPieces(t *testing.T) {
	dir := t.TempDir()
	whole := generate(t, dir, "whole.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 6000, QPs: 8, Seed: 5})
	later := filepath.Join(dir, "half_later_clock.pcap")
	rewriteCapture(t, whole, later, func(n int, ci *gopacket.CaptureInfo) bool {
		ci.Timestamp = ci.Timestamp.Add(time.Hour)
		return n%2 == 1
	})
	code, text, errs := runCLI("--color", "never", whole, later)
	require.Equal(t, ExitOK, code, errs)
	assert.NotContains(t, text, "read as one")
	assert.NotContains(t, text, "Capture points")
	assert.Contains(t, text, "analyzed each on its own, not as the pieces of one capture: "+whyApart)
	assert.Contains(t, text, "not capture points of one traffic: "+later+" lacks ")
}
