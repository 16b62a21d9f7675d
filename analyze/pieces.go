package analyze

import (
	"fmt"
	"sort"
	"sync/atomic"
)

// Pieces are the files of one capture read one after another as one
// stream of frames: the pieces of a rotation (tcpdump -C or -G, editcap
// -c), in time order. The Analyzer numbers the frames of the stream one
// after another, as it would the whole file, so that its report is the
// whole file's; Pieces turn each frame number into the file it is in and
// its number there, for the reader of the report, who opens that file in
// Wireshark.
//
// The reader of the files calls Begin before it feeds the first frame of
// each file. Analyzers that share Pieces (the shards of one capture) may
// call Ref and FrameName on their own goroutines while it does: they only
// ask about frames fed, whose file has begun.
type Pieces struct {
	names []string
	first []atomic.Uint64 // the stream's number of each file's first frame (0: not begun)
}

// NewPieces returns the Pieces of the files named, in the order they are
// read.
func NewPieces(names []string) *Pieces {
	return &Pieces{names: append([]string(nil), names...), first: make([]atomic.Uint64, len(names))}
}

// Names returns the files' names, in the order read.
func (p *Pieces) Names() []string { return append([]string(nil), p.names...) }

// Begin says that frame (of the stream) is the first of file i. Files
// begin in order, each with a larger frame than the one before; an empty
// file begins at the frame the next one begins at, and has none.
func (p *Pieces) Begin(i int, frame uint64) { p.first[i].Store(frame) }

// multi says whether frame references name their file: when the capture
// is more than one file.
func (p *Pieces) multi() bool { return p != nil && len(p.names) > 1 }

// Ref returns the file frame (of the stream) is in and its number there;
// for one file, or none, "" and frame.
func (p *Pieces) Ref(frame uint64) (file string, n uint64) {
	if !p.multi() || frame == 0 {
		return "", frame
	}
	// The last file begun at or before frame.
	i := sort.Search(len(p.first), func(i int) bool {
		f := p.first[i].Load()
		return f == 0 || f > frame
	}) - 1
	if i < 0 {
		return "", frame
	}
	return p.names[i], frame - p.first[i].Load() + 1
}

// FrameName is how a finding's detail names frame: "frame 17", or
// "frame 17 of b.pcap" when the capture is more than one file.
func (p *Pieces) FrameName(frame uint64) string {
	file, n := p.Ref(frame)
	if file == "" {
		return fmt.Sprintf("frame %d", n)
	}
	return fmt.Sprintf("frame %d of %s", n, file)
}

// Localize turns the frame references of r (its malformed frames,
// connections, flows and findings) from the stream's numbers into their
// files', each with its file. It does nothing for one file, and leaves a
// reference that names its file as it is, so that a report may be
// localized again as it grows (a ReportStream's head, then its findings).
// A localized report cannot be merged. The Analyzer, CombineShards and
// ReportStream localize the reports they return when Options.Pieces is
// set.
func (p *Pieces) Localize(r *Report) {
	if !p.multi() {
		return
	}
	r.merge = false
	for i := range r.Findings {
		fd := &r.Findings[i]
		if fd.File == "" {
			fd.File, fd.Frame = p.Ref(fd.Frame)
		}
	}
	for i := range r.Capture.MalformedFrames {
		if m := &r.Capture.MalformedFrames[i]; m.File == "" {
			m.File, m.Frame = p.Ref(m.Frame)
		}
	}
	for i := range r.Connections {
		p.localizeConn(&r.Connections[i].Frames)
	}
	for i := range r.Flows {
		p.LocalizeFlow(&r.Flows[i])
	}
}

// localizeConn localizes a connection's CM message frames.
func (p *Pieces) localizeConn(f *ConnFrames) {
	if f.Files != nil {
		return
	}
	files := &ConnFrameFiles{}
	for _, x := range []struct {
		frame *uint64
		file  *string
	}{{&f.REQ, &files.REQ}, {&f.REP, &files.REP}, {&f.RTU, &files.RTU}, {&f.REJ, &files.REJ}, {&f.DREQ, &files.DREQ}, {&f.DREP, &files.DREP}} {
		if *x.frame != 0 {
			*x.file, *x.frame = p.Ref(*x.frame)
		}
	}
	f.Files = files
}

// LocalizeFlow is Localize of a flow's frame references (its gaps).
func (p *Pieces) LocalizeFlow(f *Flow) {
	if !p.multi() {
		return
	}
	for i := range f.Requests.Gaps {
		if g := &f.Requests.Gaps[i]; g.File == "" {
			g.File, g.Frame = p.Ref(g.Frame)
		}
	}
}
