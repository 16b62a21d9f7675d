//go:build !unix

package export

import (
	"errors"
	"os"
)

// lockFile fails: without flock(2) no staging directory is known to be
// abandoned, so none is removed but by its own run.
func lockFile(*os.File) error { return errors.ErrUnsupported }
