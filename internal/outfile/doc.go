// Package outfile writes the command's output files so that a reader of
// their names only ever sees a whole file: the last run's, or this run's.
//
// Use Create for a file at a path, write to it, then Commit when it is
// whole, or Abort when it is not:
//
//	f, err := outfile.Create("report.html")
//	if err != nil {
//		return err
//	}
//	_, err = f.Write(page)
//	return f.Commit(err) // renamed into place, or removed
//
// Write does the same for a function that writes through a buffer.
//
// The file is written under a temporary name of its own in the path's
// directory, created exclusively (O_EXCL: a symlink planted at that name
// is never followed) with the mode os.Create would give it (or that of
// the file it replaces), and renamed to the path only when it was
// written whole and closed. A rename replaces the entry at the path, a
// symlink included, never the symlink's target; a write that fails (a
// full disk, a file-size limit) leaves the file that was there before as
// it was, and no temporary file behind. A path that is (or links to) a
// character device or a FIFO, such as /dev/stdout, is written in place;
// a block device, a socket or a directory is refused.
package outfile
