package export

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/roce-dissect/roce-dissect/internal/filename"
)

// outFile is a table's file while it is written: under a temporary name
// of its own in the table's directory (created exclusively, so that no
// symlink planted there is followed), renamed to the table's name when
// whole. A rename replaces a symlink of that name, never its target.
type outFile struct {
	f    *os.File
	w    io.Writer // f, or what wrapWriter made of it
	path string    // the table's name
}

// wrapWriter, when set (by tests), wraps every table file's writer: an
// injected write error (a full disk).
var wrapWriter func(io.Writer) io.Writer

// createOut creates path's directory and its temporary file.
func createOut(path string) (*outFile, error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
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
	o := &outFile{f: f, w: io.Writer(f), path: path}
	if wrapWriter != nil {
		o.w = wrapWriter(f)
	}
	return o, nil
}

// finish closes the file and, when err (the writing's) is nil and the
// close succeeds, renames it to its name; otherwise it removes it, so
// that no file without its footer is left. It returns the first error.
func (o *outFile) finish(err error) error {
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

// packetsName matches the names PacketsFile makes.
var packetsName = regexp.MustCompile(`^packets-[0-9]{5}-[0-9]{3}\.parquet$`)

// isOutputName says whether name is one an export writes.
func isOutputName(name string) bool {
	switch name {
	case FlowsFile, ConnectionsFile, FindingsFile, PauseFile:
		return true
	}
	return packetsName.MatchString(name)
}

// PrepareDir readies dir for an export of the capture files inputs: it
// creates dir, refuses it when an entry of an output's name is one of
// the inputs (os.SameFile: it would be overwritten), and removes the
// entries of the outputs' names an earlier export left (symlinks are
// removed, not followed), so that none of them outlives this run (a run
// of fewer files writes fewer packets files). Other files are left.
func PrepareDir(dir string, inputs []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var ins []os.FileInfo
	for _, in := range inputs {
		if fi, err := os.Stat(in); err == nil {
			ins = append(ins, fi)
		}
	}
	var old []string
	for _, e := range entries {
		if !isOutputName(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		for i, in := range ins {
			if os.SameFile(fi, in) {
				return fmt.Errorf("%s is an input (%s): an export would overwrite it", filename.Text(path), filename.Text(inputs[i]))
			}
		}
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", filename.Text(path))
		}
		old = append(old, path)
	}
	var errs []error
	for _, path := range old {
		errs = append(errs, os.Remove(path))
	}
	return errors.Join(errs...)
}
