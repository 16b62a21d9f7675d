package cli

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/roce-dissect/roce-dissect/capture"
)

// maxClockOffset bounds --clock-offset: a year either way, far beyond any
// clock error, and far from where a timestamp minus the offset wraps.
const maxClockOffset = 365 * 24 * time.Hour

// checkInputs refuses what the inputs say of themselves that cannot be:
// a file named twice (the same path, or os.SameFile), and a
// --clock-offset out of range or naming no input.
func checkInputs(cfg *config, files []string) error {
	infos := make([]os.FileInfo, len(files))
	for i, f := range files {
		if f == "-" {
			continue
		}
		for j := range i {
			if files[j] != "-" && filepath.Clean(files[j]) == filepath.Clean(f) {
				return fmt.Errorf("%w: %s is given twice: give each capture once", errUsage, f)
			}
		}
		info, err := os.Stat(f)
		if err != nil {
			continue // its open error says why
		}
		for j := range i {
			if infos[j] != nil && os.SameFile(infos[j], info) {
				return fmt.Errorf("%w: %s and %s are the same file: give each capture once", errUsage, files[j], f)
			}
		}
		infos[i] = info
	}
	for name, d := range cfg.clockOffsets {
		if d > maxClockOffset || d < -maxClockOffset {
			return fmt.Errorf("%w: --clock-offset %s=%v: beyond a year either way", errUsage, name, d)
		}
		named := false
		for _, f := range files {
			named = named || filepath.Clean(name) == filepath.Clean(f)
		}
		if !named {
			return fmt.Errorf("%w: --clock-offset names %s, which is not one of the captures given", errUsage, name)
		}
	}
	return nil
}

// twinFrames is how many frames of each file sameCapture compares.
const twinFrames = 64

// sameCapture returns two of the files that hold the same capture (the
// same first frames, timestamps and bytes: a copy, or a file and its .gz),
// and ok false when none do. Standard input and files that cannot be read
// are left out.
func sameCapture(files []string) (a, b string, ok bool) {
	seen := map[uint64]string{}
	for _, f := range files {
		if f == "-" {
			continue
		}
		h, err := headHash(f)
		if err != nil {
			continue
		}
		if g, dup := seen[h]; dup {
			return g, f, true
		}
		seen[h] = f
	}
	return "", "", false
}

// headHash hashes the timestamps, lengths and bytes of a capture's first
// twinFrames frames.
func headHash(name string) (uint64, error) {
	cr, err := capture.Open(name)
	if err != nil {
		return 0, err
	}
	defer cr.Close()
	h := fnv.New64a()
	var hdr [20]byte
	n := 0
	for ; n < twinFrames; n++ {
		ci, data, lt, err := cr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		t := ci.Timestamp.UnixNano()
		for i := range 8 {
			hdr[i] = byte(t >> (8 * i))
		}
		l := uint64(ci.Length)<<16 | uint64(lt)
		for i := range 8 {
			hdr[8+i] = byte(l >> (8 * i))
		}
		h.Write(hdr[:16])
		h.Write(data)
	}
	if n == 0 {
		return 0, io.EOF
	}
	return h.Sum64(), nil
}
