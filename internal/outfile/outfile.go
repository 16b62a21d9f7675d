package outfile

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// File is an output file while it is written: an *os.File under a
// temporary name in the directory of the path it will have.
type File struct {
	f    *os.File
	path string
}

// Create creates the temporary file of path in path's directory, which
// must exist, with mode 0644 (as a file created under the usual umask).
func Create(path string) (*File, error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{f: f, path: path}, nil
}

// Write writes p to the temporary file.
func (o *File) Write(p []byte) (int, error) { return o.f.Write(p) }

// Path is the name the file gets when committed.
func (o *File) Path() string { return o.path }

// Commit closes the file and, when err (the writing's) is nil and the
// close succeeds, renames it to its path; otherwise it removes it. It
// returns the first error.
func (o *File) Commit(err error) error {
	if cerr := o.f.Close(); err == nil {
		err = cerr
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
	os.Remove(o.f.Name())
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
