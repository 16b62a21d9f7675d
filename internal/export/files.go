package export

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/roce-dissect/roce-dissect/internal/filename"
	"github.com/roce-dissect/roce-dissect/internal/outfile"
)

// outFile is a table's file while it is written (outfile.File: under a
// temporary name, renamed to the table's name when whole), and the
// writer the table writes to.
type outFile struct {
	*outfile.File
	w io.Writer // the File, or what wrapWriter made of it
}

// wrapWriter, when set (by tests), wraps every table file's writer: an
// injected write error (a full disk).
var wrapWriter func(io.Writer) io.Writer

// createOut creates path's directory and the temporary file of the table
// at path.
func createOut(path string) (*outFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := outfile.Create(path)
	if err != nil {
		return nil, err
	}
	o := &outFile{File: f, w: io.Writer(f)}
	if wrapWriter != nil {
		o.w = wrapWriter(f)
	}
	return o, nil
}

// packetsName matches the names PacketsFile makes.
var packetsName = regexp.MustCompile(`^packets-[0-9]{5}-[0-9]{3}\.parquet$`)

// isOutputName says whether name is one an export writes.
func isOutputName(name string) bool {
	switch name {
	case FlowsFile, ConnectionsFile, FindingsFile, PauseFile, CollectivesFile, CollectiveLinksFile, CollectiveArrivalsFile:
		return true
	}
	return packetsName.MatchString(name)
}

// Export is an export under way into a directory: its tables are written
// into a staging directory of its own inside it (Dir), and Commit puts
// them in place of the last export's tables in one step that either
// completes or leaves the last export as it was. Until then the last
// export stays whole: a run that fails (an input that cannot be read, a
// full disk, an output that cannot be replaced) never leaves a directory
// of some new tables and some old, or of some tables and not others.
type Export struct {
	dir   string   // the user's directory
	stage string   // where the tables are written, inside dir
	lock  *os.File // stage's lock file, held until stage is removed
	// rename is os.Rename; tests make it fail on a name.
	rename func(from, to string) error
}

// stagePrefix starts the names of the staging directories an Export makes
// in the user's directory (hidden, so that a glob of the tables, as the
// fleet's SQL reads them, never sees a table being written).
const stagePrefix = ".roce-dissect-export-"

// stageNewPrefix names a staging directory before its lock is held, and
// asidePrefix the directory Commit moves the last export's tables into.
const (
	stageNewPrefix = ".roce-dissect-new-"
	asidePrefix    = stagePrefix + "old-"
)

// Begin readies dir for an export of the capture files inputs: it creates
// dir, refuses it when an entry of an output's name is one of the inputs
// (os.SameFile: a commit would remove it) or is a directory, and creates
// the staging directory the tables are written to (Dir). It first removes
// the staging directories of runs that were killed (sweepStages).
func Begin(dir string, inputs []string) (*Export, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := oldOutputs(dir, inputs); err != nil {
		return nil, err
	}
	sweepStages(dir)
	stage, lock, err := newStage(dir)
	if err != nil {
		return nil, err
	}
	return &Export{dir: dir, stage: stage, lock: lock, rename: os.Rename}, nil
}

// Dir is the directory to write the export's tables to.
func (e *Export) Dir() string { return e.stage }

// Abort removes the tables written, and leaves the last export as it was.
func (e *Export) Abort() { e.removeStage() }

// removeStage removes the staging directory, then lets go of its lock.
func (e *Export) removeStage() {
	os.RemoveAll(e.stage)
	e.lock.Close()
}

// Commit puts the tables written in place of the last export's: the last
// export's tables are moved aside, this one's moved in, and the last
// export's removed, so that none of them outlives this run (a run of
// fewer files writes fewer packets files; symlinks are moved, not
// followed). When a move fails, the moves made are undone, the tables
// written removed, and the last export is left as it was.
func (e *Export) Commit() error {
	defer e.removeStage()
	old, err := oldOutputs(e.dir, nil)
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(e.stage)
	if err != nil {
		return err
	}
	aside, err := os.MkdirTemp(e.dir, asidePrefix+"*")
	if err != nil {
		return err
	}
	keepAside := false
	defer func() {
		if !keepAside {
			os.RemoveAll(aside)
		}
	}()
	var undo []func() error
	rollback := func(err error) error {
		var failed []error
		for i := len(undo) - 1; i >= 0; i-- {
			if uerr := undo[i](); uerr != nil {
				failed = append(failed, uerr)
			}
		}
		if len(failed) > 0 {
			// The last export's tables that could not be moved back stay
			// where they were moved: named, never removed.
			keepAside = true
			return fmt.Errorf("%w; and moving the last export back failed (%w): its tables are in %s", err, errors.Join(failed...), filename.Text(aside))
		}
		return fmt.Errorf("%w: the last export is left as it was", err)
	}
	move := func(dir1, dir2, name string) error {
		from, to := filepath.Join(dir1, name), filepath.Join(dir2, name)
		if err := e.rename(from, to); err != nil {
			return err
		}
		undo = append(undo, func() error { return e.rename(to, from) })
		return nil
	}
	for _, name := range old {
		if err := move(e.dir, aside, name); err != nil {
			return rollback(err)
		}
	}
	for _, en := range entries {
		if !isOutputName(en.Name()) {
			continue // a table's temporary file left by a failed write
		}
		if err := move(e.stage, e.dir, en.Name()); err != nil {
			return rollback(err)
		}
	}
	return nil
}

// oldOutputs returns the names of the entries of dir that an export
// writes, and refuses one that is one of the inputs or a directory.
func oldOutputs(dir string, inputs []string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
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
			return nil, err
		}
		for i, in := range ins {
			if os.SameFile(fi, in) {
				return nil, fmt.Errorf("%s is an input (%s): an export would overwrite it", filename.Text(path), filename.Text(inputs[i]))
			}
		}
		if fi.IsDir() {
			return nil, fmt.Errorf("%s is a directory", filename.Text(path))
		}
		old = append(old, e.Name())
	}
	return old, nil
}
