package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/points"
)

// source is what one analysis reads as one stream of frames: one file,
// or the pieces of one capture (files whose time ranges follow one
// another: tcpdump -C/-G, editcap -c), read one after another in time
// order whatever their order on the command line, so that their report
// is the whole file's. The frames of the stream are numbered one after
// another; the report names each frame by its file and its number there
// (analyze.Pieces).
type source struct {
	files  []string
	pieces *analyze.Pieces // nil for one file
	starts []time.Time     // pieces: each file's first frame's time
	read   []pieceRead     // several files: what reading found in each
	// merged: the files are merged by time (readMerged), not read one
	// after another.
	merged bool
}

// pieceRead is what reading found in one piece.
type pieceRead struct {
	frames      uint64
	first, last time.Time // the earliest and the latest timestamps
}

// add counts a frame of time t: a frame without one (a pcapng simple
// packet block before any timed frame) leaves the span alone.
func (p *pieceRead) add(t time.Time) {
	p.frames++
	if t.IsZero() {
		return
	}
	if p.first.IsZero() || t.Before(p.first) {
		p.first = t
	}
	if t.After(p.last) {
		p.last = t
	}
}

// oneFile is the source of one file.
func oneFile(name string) *source { return &source{files: []string{name}} }

// name is how the report's title names the source.
func (s *source) name() string {
	switch {
	case s.pieces == nil:
		return displayName(s.files[0])
	case s.merged:
		return fmt.Sprintf("%d files merged by time", len(s.files))
	}
	return fmt.Sprintf("%d files read as one", len(s.files))
}

// mergedOf returns the files as one capture merged by time, or nil when
// they cannot be: fewer than two, or standard input or a pipe among them
// (which cannot be sampled for capture points first).
func mergedOf(files []string) *source {
	if len(files) < 2 || slices.ContainsFunc(files, readOnce) {
		return nil
	}
	return &source{files: files, pieces: newPieces(files), read: make([]pieceRead, len(files)), merged: true}
}

// notPiecesError says the files turned out not to follow one another in
// time: a file began before the one read before it had ended, or began
// long after it (pieceGap).
type notPiecesError struct {
	file, prev  string
	start, last time.Time
	span        time.Duration // of the files read before it
}

func (e *notPiecesError) Error() string {
	if e.last.After(e.start) {
		return fmt.Sprintf("%s begins at %s, before %s ends at %s: the files are not pieces of one capture",
			e.file, e.start.UTC().Format(time.RFC3339Nano), e.prev, e.last.UTC().Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%s begins at %s, %s after %s ends at %s, a longer pause than the %s the files before it cover: the files are not pieces of one capture",
		e.file, e.start.UTC().Format(time.RFC3339Nano), humanSpan(e.start.Sub(e.last)), e.prev, e.last.UTC().Format(time.RFC3339Nano), humanSpan(e.span))
}

// humanSpan writes a long time as people count it: "513 days", "5.0
// hours", "2m30s".
func humanSpan(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%.0f days", d.Hours()/24)
	case d >= time.Hour:
		return fmt.Sprintf("%.1f hours", d.Hours())
	}
	return d.Round(time.Millisecond).String()
}

// minPieceGap is the pause between two pieces that is never too long:
// a rotation by time (tcpdump -G) opens its next file with the first
// packet after the period, so the pause between pieces is one between
// packets.
const minPieceGap = time.Minute

// pieceGap says whether a file beginning at start, after the files
// before it covered first to last, begins too long after them to be
// their next piece: its pause is longer than both minPieceGap and the
// time they cover (two captures of a day apart, or of different years,
// are not one). Files that are not pieces are merged by time instead:
// the same frames in the same order, with a note saying why.
func pieceGap(first, last, start time.Time) bool {
	gap := start.Sub(last)
	return gap > minPieceGap && gap > last.Sub(first)
}

// piecesOf returns the files as the pieces of one capture in time order,
// or nil and why when they cannot be, which leaves them to be analyzed
// each on its own (capture points of the same traffic, or unrelated captures):
// fewer than two files; standard input among them (it cannot be read
// again should they turn out not to be pieces); --clock-offset given
// (which says they are capture points); a file that cannot be opened as a capture, or whose first
// frame has no time; two files that begin at the same instant (a file
// with no frame is a piece with none, read last); or files whose first packets share
// transmissions (the same packets seen at two capture points, whatever
// their clocks say: headSample). Whether each file ends before the next
// begins is known only once it is read: readSource checks it.
func (r *runner) piecesOf(files []string) (src *source, why string) {
	switch {
	case len(files) < 2:
		return nil, ""
	case slices.ContainsFunc(files, readOnce):
		return nil, "standard input or a pipe is among them, and cannot be read again should they not be"
	case len(r.cfg.clockOffsets) > 0:
		return nil, "--clock-offset says they are capture points"
	}
	type piece struct {
		name  string
		start time.Time
	}
	for _, name := range files {
		// A file given twice never gets here: checkInputs refused it.
		if _, err := os.Stat(name); err != nil {
			return nil, fmt.Sprintf("%s cannot be read", displayName(name))
		}
	}
	ps := make([]piece, len(files))
	errs := make([]error, len(files))
	// One Analyzer decodes the heads of all files, one after another:
	// the samplers read each packet's own fields, not the flows it
	// builds (sampleOptions).
	a := analyze.New(r.sampleOptions())
	frames := headFramesOf(len(files))
	est := estimateFiles(len(files), 1, heldHeads, func(i int, smp *points.Sampler) {
		start, err := headSample(a, files[i], frames, smp)
		ps[i], errs[i] = piece{files[i], start}, err
	}, make([]*time.Duration, len(files)))
	for i, err := range errs {
		switch {
		case errors.Is(err, errUntimedHead):
			return nil, fmt.Sprintf("%s %v", displayName(files[i]), err)
		case err != nil:
			return nil, fmt.Sprintf("%s cannot be read as a capture: %v", displayName(files[i]), err)
		}
	}
	if len(est.Groups) > 0 {
		return nil, whyPoints
	}
	if r.noteApart(est, files) {
		// The pieces of one capture share no more than a resend across
		// their seam, whatever their clocks say.
		return nil, whyApart
	}
	// The samples are garbage now, a few megabytes that would otherwise
	// set the heap's size for the run (GOGC doubles the live heap).
	a = nil
	runtime.GC()
	// By their first frames' times; files without a frame (a rotation's
	// last, cut before its first record) last.
	slices.SortStableFunc(ps, func(a, b piece) int {
		if a.start.IsZero() != b.start.IsZero() {
			return cmp.Compare(b2i(a.start.IsZero()), b2i(b.start.IsZero()))
		}
		return a.start.Compare(b.start)
	})
	src = &source{read: make([]pieceRead, len(ps))}
	for i, p := range ps {
		if i > 0 && !p.start.IsZero() && !p.start.After(ps[i-1].start) {
			return nil, fmt.Sprintf("%s and %s begin at the same instant (%s)", displayName(ps[i-1].name), displayName(p.name), p.start.UTC().Format(time.RFC3339Nano))
		}
		src.files = append(src.files, p.name)
		src.starts = append(src.starts, p.start)
	}
	src.pieces = newPieces(src.files)
	return src, ""
}

// newPieces returns the Pieces of files, named as the report names them.
func newPieces(files []string) *analyze.Pieces {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = fileName(f)
	}
	return analyze.NewPieces(names)
}

// noteApart notes in r.apart why each pair of the files that share
// transmissions is not capture points of one traffic (est.Apart), and
// reports whether a pair shares most of the smaller file's.
func (r *runner) noteApart(est points.Estimate, files []string) (mostly bool) {
	r.apart = r.apart[:0]
	for _, p := range est.Apart {
		r.apart = append(r.apart, p.Why(displayName(files[p.A]), displayName(files[p.B])))
		mostly = mostly || p.Mostly()
	}
	return mostly
}

// whyPoints is piecesOf's reason when files are capture points of one
// traffic.
const whyPoints = "their first packets share transmissions"

// whyApart is piecesOf's reason when files share transmissions but are
// not capture points of one traffic (the notes say why, r.apart).
const whyApart = "their first packets share transmissions, but they are not capture points of one traffic"

// headFrames is how many frames of each file headSample samples, of up
// to headFiles files. More files share headFrames*headFiles frames, at
// least minHeadFrames each (headFramesOf): 2,000 pieces of 500 frames
// would otherwise all be decoded twice.
const (
	headFrames    = 1024
	headFiles     = 256
	minHeadFrames = 64
)

// errUntimedHead is why a file whose first frame has no time cannot be
// ordered among pieces by its start: it was read, and is no less a
// capture.
var errUntimedHead = errors.New("has no time on its first frame (a pcapng simple packet block, which has no timestamp): it cannot be put in time order with the others")

// headFramesOf is how many frames of each of n files headSample samples.
func headFramesOf(n int) int {
	return min(headFrames, max(minHeadFrames, headFrames*headFiles/max(n, 1)))
}

// headSample returns the time of a capture file's first frame, and
// samples into smp the transmissions of its first frames (as many as
// frames),
// decoded by a: capture points of the same traffic share them whatever their clocks, the
// pieces of a rotation do not (each continues where the one before
// ended).
func headSample(a *analyze.Analyzer, name string, frames int, smp *points.Sampler) (time.Time, error) {
	cr, err := openSmall(name)
	if err != nil {
		return time.Time{}, err
	}
	defer cr.Close()
	var start time.Time
	for n := 0; n < frames; n++ {
		ci, data, lt, err := cr.Next()
		if err != nil {
			break
		}
		if n == 0 {
			if ci.Timestamp.IsZero() {
				return time.Time{}, errUntimedHead
			}
			start = ci.Timestamp
		}
		smp.Add(a.Feed(ci, lt, data))
	}
	return start, nil
}

// captureFiles is the report's list of the pieces read (Capture.Files), nil for
// one file.
func (s *source) captureFiles() []analyze.CaptureFile {
	if s.pieces == nil {
		return nil
	}
	out := make([]analyze.CaptureFile, len(s.files))
	for i, name := range s.pieces.Names() {
		out[i] = analyze.CaptureFile{File: name, Frames: s.read[i].frames}
		if !s.read[i].first.IsZero() { // frames, and a time among them
			first, last := s.read[i].first, s.read[i].last
			out[i].FirstTime, out[i].LastTime = &first, &last
		}
	}
	return out
}

// readSource reads the files of src in order as one stream, calling
// start (when not nil) with each file once it is open, before its first
// frame, and the function start returns once its last frame is given;
// fn gets each frame. A file that cannot be read to its end is named in
// the error, and the next is read all the same; for pieces, a
// *notPiecesError stops the reading when a file begins before the one
// before it ended.
func (r *runner) readSource(ctx context.Context, src *source, start func(i int, cr *capture.Reader) (end func()), fn func(*frame)) error {
	if src.merged {
		return r.readMerged(ctx, src, start, fn)
	}
	if src.pieces == nil {
		cr, size, err := r.open(src.files[0])
		if err != nil {
			return &openError{err}
		}
		defer cr.Close()
		if start != nil {
			defer start(0, cr)()
		}
		return r.eachFrom(ctx, cr, size, r.cfg.count, fn)
	}
	var num uint64 // the frames of the stream so far
	var errs []error
	clear(src.read)     // a second reading (one Analyzer, after shards that do not combine) counts afresh
	prev := -1          // the last file read that had frames
	var first time.Time // the earliest time of the files read
	for i, name := range src.files {
		if r.cfg.count > 0 && num >= r.cfg.count { // -c counts the frames of the stream
			break
		}
		if prev >= 0 && !src.starts[i].IsZero() {
			if last := src.read[prev].last; last.After(src.starts[i]) || !first.IsZero() && pieceGap(first, last, src.starts[i]) {
				return &notPiecesError{file: displayName(name), prev: displayName(src.files[prev]), start: src.starts[i], last: last, span: last.Sub(first)}
			}
		}
		cr, size, err := r.open(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", displayName(name), err))
			continue
		}
		var end func()
		if start != nil {
			end = start(i, cr)
		}
		st := &src.read[i]
		var left uint64 // -c: what is left of the stream's count (0: no count)
		if r.cfg.count > 0 {
			left = r.cfg.count - num
		}
		err = r.eachFrom(ctx, cr, size, left, func(f *frame) {
			num++
			if f.num == 1 {
				src.pieces.Begin(i, num)
			}
			st.add(f.ci.Timestamp)
			f.file = i
			fn(f)
		})
		if end != nil {
			end()
		}
		cr.Close()
		if st.frames > 0 {
			prev = i
		}
		if !st.first.IsZero() && (first.IsZero() || st.first.Before(first)) {
			first = st.first
		}
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, fmt.Errorf("%s: %v", displayName(name), err))
		}
	}
	return errors.Join(errs...)
}

// readOnce says whether a file can be read only once: standard input, a
// named pipe, a device or a process substitution (/dev/fd/N), anything
// but a regular file, a directory or a file that does not exist (whose
// error its opening names). Several files with one such among them are
// analyzed each on its own, each read once in its turn.
func readOnce(name string) bool {
	if name == "-" {
		return true
	}
	st, err := os.Stat(name)
	return err == nil && !st.Mode().IsRegular() && !st.IsDir()
}
