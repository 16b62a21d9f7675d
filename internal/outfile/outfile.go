package outfile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
)

// File is an output file while it is written: an *os.File under a
// temporary name in the directory of the path it will have, or the path
// itself when it names a character device or a FIFO (direct).
type File struct {
	f      *os.File
	path   string
	direct bool
}

// maxTempBase bounds the part of the path's name the temporary name
// repeats, so that a long name still has a temporary one.
const maxTempBase = 200

// Create creates the temporary file of path in path's directory, which
// must exist, with the mode a new file gets (0666 less the umask) or that
// of the file it will replace. A path naming a character device or a FIFO
// (/dev/stdout, /dev/null, a named pipe) is opened and written in place:
// there is no file to keep, and no rename could write to it. A block
// device, a socket or a directory is refused.
func Create(path string) (*File, error) {
	mode := os.FileMode(0o666)
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&os.ModeSymlink != 0 {
		// A link is replaced, as a new file, unless it leads to a device
		// or FIFO (/dev/stdout is a link), which is written through it.
		to, serr := os.Stat(path)
		if serr == nil && to.Mode()&(os.ModeCharDevice|os.ModeNamedPipe) != 0 {
			fi = to
		} else {
			fi, err = nil, fs.ErrNotExist
		}
	}
	if err == nil {
		switch m := fi.Mode(); {
		case m&(os.ModeCharDevice|os.ModeNamedPipe) != 0:
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return nil, err
			}
			return &File{f: f, path: path, direct: true}, nil
		case m.IsRegular():
			mode = m.Perm()
		default:
			return nil, fmt.Errorf("%s is a %s, not a file", path, kind(m))
		}
	}
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if len(name) > maxTempBase {
		name = name[:maxTempBase]
	}
	for {
		tmp := filepath.Join(dir, fmt.Sprintf(".%s.%08x.tmp", name, rand.Uint32()))
		f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &File{f: f, path: path}, nil
	}
}

// kind names what a file mode says a path is, for Create's refusal.
func kind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// Write writes p to the temporary file.
func (o *File) Write(p []byte) (int, error) { return o.f.Write(p) }

// Commit closes the file and, when err (the writing's) is nil and the
// close succeeds, renames it to its path; otherwise it removes it. It
// returns the first error.
func (o *File) Commit(err error) error {
	if cerr := o.f.Close(); err == nil {
		err = cerr
	}
	if o.direct {
		return err
	}
	if err == nil {
		err = os.Rename(o.f.Name(), o.path)
	}
	if err != nil {
		os.Remove(o.f.Name())
	}
	return err
}

// Abort closes and removes the file, not written whole.
func (o *File) Abort() {
	o.f.Close()
	if !o.direct {
		os.Remove(o.f.Name())
	}
}

// Write writes the file at path with write, through a buffer, and puts
// it in place only when write and the flush succeed.
func Write(path string, write func(io.Writer) error) error {
	o, err := Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(o)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	return o.Commit(err)
}
