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

// TestRotationResendAcrossSeam: a capture rotated after its 600th frame
// whose next piece begins with a resend of the last 20 frames of the
// first (a timeout's go-back-N, byte for byte) is still read as one: the
// two heads share 20 transmissions, a few, not the most of the smaller
// that keeps files apart as neither points nor pieces (found by review:
// any shared transmissions kept them apart, with a bogus "message never
// completed").
func TestRotationResendAcrossSeam(t *testing.T) {
	dir := t.TempDir()
	whole := generate(t, dir, "whole.pcap", synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 200, Seed: 5})
	const cut, resend = 600, 20
	first := filepath.Join(dir, "rot_0.pcap")
	rewriteCapture(t, whole, first, func(n int, _ *gopacket.CaptureInfo) bool { return n < cut })
	resent := filepath.Join(dir, "resent.pcap")
	rewriteCapture(t, whole, resent, func(n int, ci *gopacket.CaptureInfo) bool {
		ci.Timestamp = ci.Timestamp.Add(2 * time.Second)
		return n >= cut-resend && n < cut
	})
	rest := filepath.Join(dir, "rest.pcap")
	rewriteCapture(t, whole, rest, func(n int, ci *gopacket.CaptureInfo) bool {
		ci.Timestamp = ci.Timestamp.Add(3 * time.Second)
		return n >= cut
	})
	second := filepath.Join(dir, "rot_1.pcap")
	concatCaptures(t, second, resent, rest)
	code, text, errs := runCLI("--color", "never", first, second)
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, text, "2 files read as one")
	assert.NotContains(t, text, "not capture points")
}

// concatCaptures writes the frames of the captures ins, one after
// another, to out (pcap, ns).
func concatCaptures(t *testing.T, out string, ins ...string) {
	t.Helper()
	copyCaptures(t, out, nil, ins...)
}

// TestApartFromAGroup: beside two capture points of one traffic (one of
// them dropping a frame in ten), a file of every other frame is in no
// group, and the text report says why, of each point (found by the
// second review: a file apart from a group got no note).
func TestApartFromAGroup(t *testing.T) {
	dir := t.TempDir()
	whole := generate(t, dir, "whole.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 6000, QPs: 8, Seed: 5})
	point := filepath.Join(dir, "point.pcap")
	rewriteCapture(t, whole, point, func(n int, _ *gopacket.CaptureInfo) bool { return n%10 != 3 })
	half := filepath.Join(dir, "half.pcap")
	rewriteCapture(t, whole, half, func(n int, _ *gopacket.CaptureInfo) bool { return n%2 == 1 })
	code, text, errs := runCLI("--color", "never", whole, point, half)
	require.Equal(t, ExitOK, code, errs)
	assert.Contains(t, text, "matched as capture points of one traffic")
	assert.Contains(t, text, "Capture points")
	for _, other := range []string{whole, point} {
		assert.Regexp(t, `not capture points of one traffic: `+regexp.QuoteMeta(half)+` lacks \d+ of the \d+ sampled transmissions of `+regexp.QuoteMeta(other), text)
	}
	assert.NotContains(t, text, "not capture points of one traffic: "+point)
}
