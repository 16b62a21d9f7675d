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
	p := &progress{quit: make(chan struct{})}
	p.wg.Add(1)
	go p.run(f)
	return p
}

func (p *progress) run(w io.Writer) {
	defer p.wg.Done()
	start := time.Now()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var bar *progressbar.ProgressBar
	for {
		select {
		case <-p.quit:
			if bar != nil {
				_ = bar.Finish()
				_, _ = io.WriteString(w, "\n")
			}
			return
		case <-tick.C:
			if bar == nil && time.Since(start) > time.Second {
				bar = progressbar.NewOptions64(p.max(),
					progressbar.OptionSetWriter(w),
					progressbar.OptionShowBytes(true),
					progressbar.OptionSetDescription("reading"),
					progressbar.OptionThrottle(200*time.Millisecond),
					progressbar.OptionSetPredictTime(true))
			}
			if bar != nil {
				bar.ChangeMax64(p.max())
				_ = bar.Set64(p.done.Load())
			}
		}
	}
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
