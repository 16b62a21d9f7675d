//go:build !unix

package capture

import "os"

// mapping is a file mapped into memory; never made without unix mmap.
type mapping []byte

// mapFile returns nil: the file is read.
func mapFile(*os.File) mapping { return nil }

// Close does nothing.
func (mapping) Close() error { return nil }
