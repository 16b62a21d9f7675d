package cli

import (
	"bufio"
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// outputBufSize is the buffer in front of standard output: every view
// writes through it, so a frame's header tree (dozens of small writes) or
// a report costs a write(2) per 64 KiB rather than per line or field.
const outputBufSize = 64 << 10

// output buffers what the command writes to standard output. Its first
// write error is kept: the views stop formatting once it is set, and Run
// reports it (exit status 1).
type output struct {
	*bufio.Writer
	dst *errWriter
	// perFrame flushes after each frame of -P/-V output: a person
	// watching a terminal, or a live capture on standard input, sees each
	// packet as it comes, one write per frame.
	perFrame bool
	reported bool // the write error was reported
}

func newOutput(w io.Writer) *output {
	dst := &errWriter{w: w}
	return &output{Writer: bufio.NewWriterSize(dst, outputBufSize), dst: dst}
}

// err returns the first error writing to the destination.
func (o *output) err() error { return o.dst.err }

// frameDone ends the output of one frame.
func (o *output) frameDone() {
	if o.perFrame {
		_ = o.Flush()
	}
}

// errWriter passes writes on and keeps the first error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// isLive reports whether r, the standard input a "-" file reads, may be a
// live capture: anything but a regular file.
func isLive(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && !st.Mode().IsRegular()
}
