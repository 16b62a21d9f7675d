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
	total atomic.Int64
	done  atomic.Int64
	quit  chan struct{}
	wg    sync.WaitGroup
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
				bar = progressbar.NewOptions64(max(p.total.Load(), 1),
					progressbar.OptionSetWriter(w),
					progressbar.OptionShowBytes(true),
					progressbar.OptionSetDescription("reading"),
					progressbar.OptionThrottle(200*time.Millisecond),
					progressbar.OptionSetPredictTime(true))
			}
			if bar != nil {
				bar.ChangeMax64(max(p.total.Load(), 1))
				_ = bar.Set64(p.done.Load())
			}
		}
	}
}

func (p *progress) add(size int64) *progressFile {
	if p == nil {
		return nil
	}
	p.total.Add(size)
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
