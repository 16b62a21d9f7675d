package cli

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"

	"github.com/roce-dissect/roce-dissect/capture"
)

// readMerged reads the files of src merged by time into one stream, as
// mergecap merges them: each next frame is the earliest of the files'
// next frames (on a tie, the file given later's, as mergecap takes it),
// numbered in the stream one after another (analyze.Pieces names it by
// its file and its number there). Each file is read as readSource reads one (eachFrom, on a
// coroutine that waits while the others' frames are given); start, when
// not nil, is called with each file once it is open and the function it
// returns once the file's last frame is given. A file that cannot be
// read to its end is named in the error, and the others are read all the
// same.
func (r *runner) readMerged(ctx context.Context, src *source, start func(i int, cr *capture.Reader) (end func()), fn func(*frame)) error {
	clear(src.read)
	errs := make([]error, len(src.files))
	var next mergeHeads
	defer func() {
		for _, h := range next { // -c, or the context: the files left
			h.close()
		}
	}()
	// The files share maxOpenFiles descriptors, however many they are,
	// and each holds a small buffer (all of them are read at once while
	// their times overlap).
	pool := &filePool{max: maxOpenFiles}
	for i, name := range src.files {
		var file io.Closer
		cr, size, err := r.openWith(name, func(name string) (*capture.Reader, error) {
			pf, err := pool.openPooled(name)
			if err != nil {
				return nil, fmt.Errorf("capture: %w", err)
			}
			cr, err := capture.NewReaderSize(pf, smallBufSize)
			if err != nil {
				pf.Close()
				return nil, err
			}
			file = pf
			return cr, nil
		})
		if err != nil {
			errs[i] = fmt.Errorf("%s: %v", displayName(name), err)
			continue
		}
		h := &mergeHead{file: i}
		if start != nil {
			h.end = start(i, cr)
		}
		fctx, cancel := context.WithCancel(ctx)
		h.pull, h.stop = iter.Pull(func(yield func(*frame) bool) {
			defer file.Close()
			defer cr.Close()
			err := r.eachFrom(fctx, cr, size, 0, func(f *frame) {
				if !yield(f) {
					cancel() // stopped: eachFrom returns at its next look at the context
				}
			})
			if err != nil && (fctx.Err() == nil || ctx.Err() != nil) { // not stopped by readMerged
				errs[i] = fmt.Errorf("%s: %w", displayName(name), err) // %w: an interruption is told (markInterrupted)
			}
		})
		h.cancel = cancel
		if h.advance() {
			next = append(next, h)
		} else {
			h.close()
		}
	}
	heap.Init(&next)
	var num uint64 // the frames of the stream so far
	last := -1
	for len(next) > 0 {
		if r.cfg.count > 0 && num >= r.cfg.count { // -c counts the frames of the stream
			break
		}
		h := next[0]
		num++
		if h.file != last {
			src.pieces.Begin(h.file, num)
			last = h.file
		}
		st := &src.read[h.file]
		st.add(h.f.ci.Timestamp)
		h.f.file, h.f.num = h.file, st.frames
		fn(h.f)
		if h.advance() {
			heap.Fix(&next, 0)
		} else {
			heap.Pop(&next)
			h.close()
		}
	}
	return errors.Join(errs...)
}

// mergeHead is a file of readMerged: its next frame, valid until the
// file is read on (advance).
type mergeHead struct {
	file int
	f    *frame
	// f's time, as seconds and nanoseconds since the Unix epoch: the heap
	// compares it often, and a time.Time's comparison costs more (a
	// pcapng time may lie past the year 2262: no UnixNano).
	sec    int64
	nsec   int
	pull   func() (*frame, bool)
	stop   func()
	cancel context.CancelFunc
	end    func() // start's, when not nil
}

// advance reads the file's next frame, and reports whether there was one.
func (h *mergeHead) advance() bool {
	f, ok := h.pull()
	h.f = f
	if ok {
		h.sec, h.nsec = f.ci.Timestamp.Unix(), f.ci.Timestamp.Nanosecond()
	}
	return ok
}

// close stops reading the file (its coroutine ends) and calls its end.
func (h *mergeHead) close() {
	h.stop()
	h.cancel()
	if h.end != nil {
		h.end()
		h.end = nil
	}
}

// mergeHeads orders the files by their next frame's time, the file given
// later first on a tie (as mergecap: TestMergedByTime): a heap.
type mergeHeads []*mergeHead

func (m mergeHeads) Len() int { return len(m) }
func (m mergeHeads) Less(i, j int) bool {
	if a, b := m[i], m[j]; a.sec != b.sec || a.nsec != b.nsec {
		return a.sec < b.sec || a.sec == b.sec && a.nsec < b.nsec
	}
	return m[i].file > m[j].file
}
func (m mergeHeads) Swap(i, j int) { m[i], m[j] = m[j], m[i] }
func (m *mergeHeads) Push(x any)   { *m = append(*m, x.(*mergeHead)) }
func (m *mergeHeads) Pop() any {
	old := *m
	h := old[len(old)-1]
	*m = old[:len(old)-1]
	return h
}
