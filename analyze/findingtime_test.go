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
