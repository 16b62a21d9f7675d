package cli

import (
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// findingOrigins maps the frames of a group's combined report that its
// findings name to the file and frame where each was first seen, in
// memory bounded by the findings cap, not by the frames: a frame gets an
// entry when the combined analyzer lists findings of it as it is fed
// (analyze.FrameFindings; the findings beyond the cap are counted, not
// listed), and the latest recent frames whose findings were all left out
// keep one too, for the findings decided later about an earlier frame (a
// CNP the sender did not slow down after, which may push out a less
// severe finding when the list is full).
type findingOrigins struct {
	listed, unlisted originList
	recent           int // how many unlisted frames to keep at least (0: defaultRecentOrigins)
}

// defaultRecentOrigins is how many of the latest frames with findings
// none of which was listed findingOrigins keeps at least (at most twice
// as many).
const defaultRecentOrigins = 1 << 16

// originList is combined frames, rising, and their origins.
type originList struct {
	combined []uint64
	origin   []origin
}

// origin is a frame of one of the group's files.
type origin struct {
	file  int
	frame uint64
}

// note records that the combined analyzer a's last frame, combined,
// which has findings, was file's frame.
func (o *findingOrigins) note(a *analyze.Analyzer, combined uint64, file int, frame uint64) {
	if len(a.FrameFindings()) > 0 {
		o.listed.add(combined, origin{file, frame})
		return
	}
	keep := o.recent
	if keep <= 0 {
		keep = defaultRecentOrigins
	}
	if len(o.unlisted.combined) >= 2*keep {
		o.unlisted.combined = append(o.unlisted.combined[:0], o.unlisted.combined[keep:]...)
		o.unlisted.origin = append(o.unlisted.origin[:0], o.unlisted.origin[keep:]...)
	}
	o.unlisted.add(combined, origin{file, frame})
}

// of returns where the combined frame was first seen.
func (o *findingOrigins) of(combined uint64) (origin, bool) {
	if at, ok := o.listed.of(combined); ok {
		return at, true
	}
	return o.unlisted.of(combined)
}

func (l *originList) add(combined uint64, at origin) {
	l.combined = append(l.combined, combined)
	l.origin = append(l.origin, at)
}

func (l *originList) of(combined uint64) (origin, bool) {
	if k, ok := slices.BinarySearch(l.combined, combined); ok {
		return l.origin[k], true
	}
	return origin{}, false
}
