package capture

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// errGzipTrailing is what gzipStream fails with when bytes follow the
// last gzip member that do not start another one.
var errGzipTrailing = errors.New("trailing garbage after the compressed stream")

// gzipStream reads the members of a gzip file one after the other, like
// gzip.Reader in multistream mode, but tells what follows the compressed
// data apart: nothing (the end), another member (read on), or anything
// else (errGzipTrailing). A multistream gzip.Reader reads the next
// member's 10-byte header from whatever follows, so that 8 bytes of
// garbage were "a gzip stream cut short".
type gzipStream struct {
	in  *bufio.Reader // the compressed input, read by gz byte by byte
	gz  *gzip.Reader
	err error
}

func newGzipStream(in *bufio.Reader, gz *gzip.Reader) *gzipStream {
	gz.Multistream(false)
	return &gzipStream{in: in, gz: gz}
}

func (g *gzipStream) Read(p []byte) (int, error) {
	for g.err == nil {
		n, err := g.gz.Read(p)
		if err == io.EOF {
			g.nextMember()
			if n > 0 {
				return n, nil
			}
			continue
		}
		if err != nil {
			g.err = err
		}
		return n, err
	}
	return 0, g.err
}

// nextMember looks past the end of a member: the end of the input, the
// next member (read on) or trailing garbage.
func (g *gzipStream) nextMember() {
	next, err := g.in.Peek(9)
	switch {
	case len(next) == 0 && err == io.EOF:
		g.err = io.EOF
	case len(next) == 0:
		g.err = err // an I/O error
	case len(next) >= 2 && next[0] == magicGzip1 && next[1] == magicGzip2:
		if err := g.gz.Reset(g.in); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF // a member cut in its header
			}
			g.err = err
			return
		}
		g.gz.Multistream(false)
	default:
		more := ""
		if len(next) == 9 {
			next, more = next[:8], " …"
		}
		g.err = fmt.Errorf("%w (% x%s)", errGzipTrailing, next, more)
	}
}
