package analyze_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// TestFindingsHaveTimes: every finding of every testdata capture, read at
// once, in shards or as two halves merged, has the time of a frame of the
// capture: never the zero time, never outside the capture's first and
// last frames (issue 23: the incomplete messages found at the end had
// none, shown as 0001-01-01 in JSON and 1970 in Parquet).
func TestFindingsHaveTimes(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.pcap")
	require.NoError(t, err)
	for _, file := range files {
		frames, cis, lt, err := loadFrames(file)
		if err != nil {
			continue // not pcap (pcapng, ERF records): read by the other tests
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			seq := analyzeFrames(frames, cis, lt)
			s := analyze.NewSharded(analyze.Options{}, 3)
			for i, f := range frames {
				s.Feed(cis[i], lt, f)
			}
			sharded, err := s.Finish()
			require.NoError(t, err)
			half := len(frames) / 2
			merged := analyzeFrames(frames[:half], cis[:half], lt)
			require.NoError(t, merged.Merge(analyzeFrames(frames[half:], cis[half:], lt)))
			first, last := cis[0].Timestamp, cis[0].Timestamp
			for _, ci := range cis {
				if ci.Timestamp.Before(first) {
					first = ci.Timestamp
				}
				if ci.Timestamp.After(last) {
					last = ci.Timestamp
				}
			}
			for name, rep := range map[string]*analyze.Report{"sequential": seq, "sharded": sharded, "merged halves": merged} {
				for _, f := range rep.Findings {
					assert.False(t, f.Time.Before(first) || f.Time.After(last), "%s: frame %d %s at %s, outside %s to %s", name, f.Frame, f.Kind, f.Time, first, last)
					if f.Frame > 0 && int(f.Frame) <= len(cis) && name == "sequential" {
						assert.True(t, f.Time.Equal(frameTime(cis, f.Frame)), "%s: frame %d %s at %s, its frame at %s", name, f.Frame, f.Kind, f.Time, frameTime(cis, f.Frame))
					}
				}
			}
		})
	}
}

// frameTime is the time of frame n (from 1).
func frameTime(cis []gopacket.CaptureInfo, n uint64) time.Time { return cis[n-1].Timestamp }

// TestUntimedFrames: a frame without a time (the zero time: a pcapng
// simple packet block before any timed frame) counts, but leaves the
// capture's time span to the timed frames.
func TestUntimedFrames(t *testing.T) {
	frames, cis, lt, err := loadFrames("../testdata/write_bw_ipv4.pcap")
	require.NoError(t, err)
	untimed := append([]gopacket.CaptureInfo{}, cis...)
	untimed[0].Timestamp = time.Time{}
	rep := analyzeFrames(frames, untimed, lt)
	want := analyzeFrames(frames, cis, lt)
	assert.Equal(t, want.Capture.Frames, rep.Capture.Frames)
	require.NotNil(t, rep.Capture.FirstTime)
	assert.Equal(t, cis[1].Timestamp, *rep.Capture.FirstTime, "the first timed frame's")
	assert.Equal(t, *want.Capture.LastTime, *rep.Capture.LastTime)
	none := make([]gopacket.CaptureInfo, len(cis))
	for i := range none {
		none[i] = cis[i]
		none[i].Timestamp = time.Time{}
	}
	rep = analyzeFrames(frames, none, lt)
	assert.Nil(t, rep.Capture.FirstTime, "no frame had a time")
}
