//go:build unix

package export

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on the open file f without waiting: it
// fails while another open file (of this process or another) holds it,
// and the kernel releases it when its holder exits, however it ends.
func lockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
