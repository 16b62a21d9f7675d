package analyze

import (
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/roce-dissect/roce-dissect/internal/filename"
)

// Pieces are the files of one capture read as one stream of frames: the
// pieces of a rotation (tcpdump -C or -G, editcap -c) read one after
// another in time order, or files whose times overlap merged by time (as
// mergecap merges them). The Analyzer numbers the frames of the stream one
// after another, as it would those of one file, so that its report is
// that file's; Pieces turn each frame number into the file it is in and
// its number there, for the reader of the report, who opens that file in
// Wireshark.
//
// The reader of the files calls Begin before it feeds a frame of another
// file than the frame before it. Analyzers that share Pieces (the shards
// of one capture) may call Ref and FrameName on their own goroutines
// while it does: they only ask about frames fed.
//
// A run of frames of one file costs Pieces a few bytes, whatever the
// number of files: the pieces of a rotation are a run each, and files
// merged by time a run each time the stream goes from one to another
// (frame by frame at worst, when the files' frames alternate).
type Pieces struct {
	names []string
	mu    sync.Mutex
	// blocks are the runs, in the stream's order, a block of up to
	// p.every() runs a mark; each run is its first frame's number less
	// the run before's first, then its file, as uvarints (the first run
	// of a block: the file alone, its first frame being the mark's).
	blocks [][]byte
	marks  []pieceMark // one for each block
	n      int         // runs in the last block
	read   []uint64    // the frames of each file in the runs before the last
	last   uint64      // the stream's number of the last run's first frame
	file   int         // the last run's file
}

// pieceMark is where a block of runs begins (its first frame's number in
// the stream) and the frames of each file before it.
type pieceMark struct {
	at   uint64
	read []uint64
}

// markEvery is the fewest runs a mark of Pieces stands for: a frame's
// file and number are found by reading at most this many runs, or four
// times as many as there are files (a mark holds a count of each file, 8
// bytes, which that many runs share: 2 bytes a run).
const markEvery = 256

// every is how many runs a mark stands for.
func (p *Pieces) every() int { return max(markEvery, 4*len(p.names)) }

// NewPieces returns the Pieces of the files named, in the order given.
func NewPieces(names []string) *Pieces {
	return &Pieces{names: append([]string(nil), names...), read: make([]uint64, len(names))}
}

// Names returns the files' names, in the order given.
func (p *Pieces) Names() []string { return append([]string(nil), p.names...) }

// Begin says that frame (of the stream, larger than every frame before)
// is file i's next frame, after frames of another file (or none). A frame
// no larger than the last Begin's starts the stream afresh: the files are
// read again (by one Analyzer, after shards whose reports did not combine).
func (p *Pieces) Begin(i int, frame uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.blocks) > 0 && frame <= p.last {
		p.blocks, p.marks, p.last, p.n = p.blocks[:0], p.marks[:0], 0, 0
		clear(p.read)
	}
	if len(p.blocks) > 0 {
		p.read[p.file] += frame - p.last
	}
	if len(p.blocks) == 0 || p.n == p.every() {
		if k := len(p.blocks); k > 0 {
			p.blocks[k-1] = slices.Clone(p.blocks[k-1]) // without the room append left
		}
		p.marks = append(p.marks, pieceMark{at: frame, read: slices.Clone(p.read)})
		p.blocks = append(p.blocks, binary.AppendUvarint(nil, uint64(i)))
		p.n = 1
	} else {
		k := len(p.blocks) - 1
		p.blocks[k] = binary.AppendUvarint(binary.AppendUvarint(p.blocks[k], frame-p.last), uint64(i))
		p.n++
	}
	p.last, p.file = frame, i
}

// multi says whether frame references name their file: when the capture
// is more than one file.
func (p *Pieces) multi() bool { return p != nil && len(p.names) > 1 }

// Ref returns the file frame (of the stream) is in and its number there;
// for one file, or none, "" and frame.
func (p *Pieces) Ref(frame uint64) (file string, n uint64) {
	if !p.multi() || frame == 0 {
		return "", frame
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.blocks) == 0 {
		return "", frame
	}
	// The mark, then the run, at or before frame.
	m := sort.Search(len(p.marks), func(m int) bool { return p.marks[m].at > frame }) - 1
	if m < 0 {
		return "", frame
	}
	var at uint64 // the run's first frame
	f, i := -1, 0 // its file and index in the block
	p.walk(m, func(k int, start uint64, file int) bool {
		if start > frame {
			return false
		}
		at, f, i = start, file, k
		return true
	})
	// The frames of its file before it: at the mark, and in the runs since.
	n = p.marks[m].read[f]
	prev, prevFile := uint64(0), -1
	p.walk(m, func(k int, start uint64, file int) bool {
		if prevFile == f {
			n += start - prev
		}
		prev, prevFile = start, file
		return k < i
	})
	return p.names[f], n + frame - at + 1
}

// walk calls fn with each run of block m in order (its index in the
// block, its first frame and its file) until fn returns false.
func (p *Pieces) walk(m int, fn func(k int, start uint64, file int) bool) {
	b, at := p.blocks[m], p.marks[m].at
	for k := 0; len(b) > 0; k++ {
		if k > 0 {
			gap, w := binary.Uvarint(b)
			at, b = at+gap, b[w:]
		}
		file, w := binary.Uvarint(b)
		b = b[w:]
		if !fn(k, at, int(file)) {
			return
		}
	}
}

// FrameName is how a finding's detail names frame: "frame 17", or
// "frame 17 of b.pcap" when the capture is more than one file, the name
// quoted (filename.Text): a detail is text for people, in every output.
func (p *Pieces) FrameName(frame uint64) string {
	file, n := p.Ref(frame)
	if file == "" {
		return fmt.Sprintf("frame %d", n)
	}
	return fmt.Sprintf("frame %d of %s", n, filename.Text(file))
}

// Localize turns the frame references of r (its malformed frames,
// connections, flows and findings) from the stream's numbers into their
// files', each with its file. It does nothing for one file, and leaves a
// reference that names its file as it is, so that a report may be
// localized again as it grows (a ReportStream's head, then its findings).
// A localized report cannot be merged. The Analyzer, Sharded and
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
