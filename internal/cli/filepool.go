package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/roce-dissect/roce-dissect/capture"
)

// maxOpenFiles is the most files readMerged holds open at once, well
// under the usual limit of 1,024 descriptors (and 256 on some systems),
// whatever the number of files merged.
const maxOpenFiles = 64

// smallBufSize is the buffer a capture starts with (which grows for a
// record it cannot hold: capture.NewReaderSize) when it is read in part
// (its first frames: headSample, headHash), only to be sampled, or is
// one of many read at once (readMerged): many files cost a few kilobytes
// each, not the quarter of a megabyte of a capture read on its own.
const smallBufSize = 8 << 10

// openSmall opens a capture with a buffer of smallBufSize.
func openSmall(name string) (*capture.Reader, error) { return capture.OpenSize(name, smallBufSize) }

// filePool lends descriptors to the files of a merge, no more than max
// open at once: a file whose turn to read comes while max are open
// closes the one read least recently, which opens again where it was
// when its own turn comes. The capture readers above keep their state
// (the buffer, a gzip stream's window) in memory: only the descriptor
// goes.
type filePool struct {
	mu   sync.Mutex
	max  int
	open []*pooledFile // least recently read first
}

// pooledFile is a file of a filePool: an io.ReadCloser that opens the
// file again, at its offset, when the pool closed it.
type pooledFile struct {
	pool *filePool
	name string
	info os.FileInfo // the file first opened: opened again, it must be the same
	f    *os.File
	off  int64
	done bool
}

// openPooled opens the file name in the pool.
func (p *filePool) openPooled(name string) (*pooledFile, error) {
	pf := &pooledFile{pool: p, name: name}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := pf.reopen(); err != nil {
		return nil, err
	}
	return pf, nil
}

// reopen opens the file at its offset, closing the pool's least recently
// read file when max are open; the pool's lock is held.
func (pf *pooledFile) reopen() error {
	p := pf.pool
	if len(p.open) >= p.max {
		old := p.open[0]
		p.open = p.open[1:]
		old.f.Close()
		old.f = nil
	}
	f, err := os.Open(pf.name)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && pf.info != nil && !os.SameFile(st, pf.info) {
		err = errors.New("the file was replaced while it was read")
	}
	if err == nil && pf.off > 0 {
		_, err = f.Seek(pf.off, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return fmt.Errorf("opening it again at byte %d: %w", pf.off, err)
	}
	pf.info = st
	pf.f = f
	p.open = append(p.open, pf)
	return nil
}

// Read reads the file on from its offset, opening it again when the pool
// closed it.
func (pf *pooledFile) Read(b []byte) (int, error) {
	p := pf.pool
	p.mu.Lock()
	if pf.done {
		p.mu.Unlock()
		return 0, os.ErrClosed
	}
	var err error
	if pf.f == nil {
		err = pf.reopen()
	} else {
		pf.touch()
	}
	f := pf.f
	p.mu.Unlock()
	if err != nil {
		return 0, err
	}
	// One file is read by one goroutine at a time (its merge head), and
	// the pool closes only files it does not read at the moment: the
	// least recently read, of max open.
	n, err := f.Read(b)
	p.mu.Lock()
	pf.off += int64(n)
	p.mu.Unlock()
	return n, err
}

// touch makes pf the most recently read; the pool's lock is held.
func (pf *pooledFile) touch() {
	p := pf.pool
	for k, o := range p.open {
		if o == pf {
			copy(p.open[k:], p.open[k+1:])
			p.open[len(p.open)-1] = pf
			return
		}
	}
}

// Close closes the file for good.
func (pf *pooledFile) Close() error {
	p := pf.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	pf.done = true
	if pf.f == nil {
		return nil
	}
	for k, o := range p.open {
		if o == pf {
			p.open = append(p.open[:k], p.open[k+1:]...)
			break
		}
	}
	err := pf.f.Close()
	pf.f = nil
	return err
}
