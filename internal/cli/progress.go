package cli

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/schollz/progressbar/v3"
)

// progress shows bytes read of the files' total size on stderr, once a
// read has taken more than a second, when stderr is a terminal.
type progress struct {
	total   atomic.Int64
	unknown atomic.Bool // a file of unknown size (stdin, gzip): no percentage
	done    atomic.Int64
	quit    chan struct{}
	wg      sync.WaitGroup
	// showAfter is how long a read runs before the bar shows (1 s).
	showAfter time.Duration
}

// progressFile tracks one file's share.
type progressFile struct {
	p    *progress
	last int64
}

func startProgress(mode string, w io.Writer) *progress {
	f, ok := w.(*os.File)
	if mode == "never" || !ok || !isatty.IsTerminal(f.Fd()) {
		return nil
	}
	p := &progress{quit: make(chan struct{}), showAfter: time.Second}
	p.wg.Add(1)
	go p.run(f)
	return p
}

func (p *progress) run(w io.Writer) {
	defer p.wg.Done()
	// The bar counts from the start, so that its first rate and time left
	// are over the whole read (created after a second, it saw a second's
	// bytes arrive at once: a rate five times too high, a time left too
	// short); it writes nothing until showAfter has passed.
	gate := &delayedWriter{w: w, from: time.Now().Add(p.showAfter)}
	bar := progressbar.NewOptions64(p.max(),
		progressbar.OptionSetWriter(gate),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription("reading"),
		progressbar.OptionThrottle(200*time.Millisecond),
		progressbar.OptionSetPredictTime(true))
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.quit:
			if gate.shown {
				_ = bar.Finish()
				_, _ = io.WriteString(w, "\n")
			}
			return
		case <-tick.C:
			bar.ChangeMax64(p.max())
			_ = bar.Set64(p.done.Load())
		}
	}
}

// delayedWriter drops what is written before from: a bar that shows only
// for reads longer than that.
type delayedWriter struct {
	w     io.Writer
	from  time.Time
	shown bool
}

func (d *delayedWriter) Write(b []byte) (int, error) {
	if time.Now().Before(d.from) {
		return len(b), nil
	}
	d.shown = true
	return d.w.Write(b)
}

// max is the bar's total: the files' sizes, or -1 (a spinner with bytes
// and rate) when one size is unknown.
func (p *progress) max() int64 {
	if p.unknown.Load() {
		return -1
	}
	return max(p.total.Load(), 1)
}

func (p *progress) add(size int64) *progressFile {
	if p == nil {
		return nil
	}
	if size < 0 {
		p.unknown.Store(true)
	} else {
		p.total.Add(size)
	}
	return &progressFile{p: p}
}

// set records the offset reached in the file.
func (f *progressFile) set(off int64) {
	if f == nil {
		return
	}
	f.p.done.Add(off - f.last)
	f.last = off
}

func (p *progress) stop() {
	if p == nil {
		return
	}
	close(p.quit)
	p.wg.Wait()
}
