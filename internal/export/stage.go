package export

import (
	"os"
	"path/filepath"
	"strings"
)

// stageLockName is the file in a staging directory that its run holds
// locked (lockFile) until it removes the directory: a staging directory
// whose lock can be taken was left by a run that was killed.
const stageLockName = ".lock"

// newStage creates a staging directory in dir that the calling run holds
// locked, and returns it with the open lock file. The directory is made
// and locked under a name no sweep looks at, then renamed to its staging
// name, so that another run's sweep never finds it unlocked.
func newStage(dir string) (string, *os.File, error) {
	tmp, err := os.MkdirTemp(dir, stageNewPrefix+"*")
	if err != nil {
		return "", nil, err
	}
	lock, err := os.OpenFile(filepath.Join(tmp, stageLockName), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		err = lockFile(lock)
	}
	stage := filepath.Join(dir, stagePrefix+strings.TrimPrefix(filepath.Base(tmp), stageNewPrefix))
	if err == nil {
		err = os.Rename(tmp, stage)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		os.RemoveAll(tmp)
		return "", nil, err
	}
	return stage, lock, nil
}

// sweepStages removes the staging directories in dir that runs killed
// before they could remove them left behind: those whose lock file this
// run can lock. A live run's staging directory (its lock held), a
// directory of moved-aside tables (a run killed while it committed, whose
// tables are the last export's) and anything else are left alone.
func sweepStages(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, en := range entries {
		name := en.Name()
		if !en.IsDir() || !strings.HasPrefix(name, stagePrefix) || strings.HasPrefix(name, asidePrefix) {
			continue
		}
		stage := filepath.Join(dir, name)
		lock, err := os.Open(filepath.Join(stage, stageLockName))
		if err != nil {
			continue
		}
		if lockFile(lock) == nil {
			os.RemoveAll(stage)
		}
		lock.Close()
	}
}
