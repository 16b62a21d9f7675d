//go:build unix

package capture

import (
	"os"
	"syscall"
)

// mapping is a file mapped into memory read-only; Close unmaps it.
type mapping []byte

// mapFile maps a regular file of at least a pcap file header read-only,
// or returns nil when it cannot (the caller then reads the file).
func mapFile(f *os.File) mapping {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < pcapFileHeaderLen || int64(int(st.Size())) != st.Size() {
		return nil
	}
	m, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil
	}
	// Read ahead of the reader: the file is read once, in order.
	_ = syscall.Madvise(m, syscall.MADV_SEQUENTIAL)
	return m
}

// Close unmaps m.
func (m mapping) Close() error { return syscall.Munmap(m) }
