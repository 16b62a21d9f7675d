package cli

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"time"

	gplayers "github.com/gopacket/gopacket/layers"
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
	names := make(map[string]bool, len(files)) // cleaned: each file's name is cleaned once
	for i, f := range files {
		if f == "-" {
			continue
		}
		clean := filepath.Clean(f)
		if names[clean] {
			return fmt.Errorf("%w: %s is given twice: give each capture once", errUsage, displayName(f))
		}
		names[clean] = true
		info, err := os.Stat(f)
		if err != nil {
			continue // its open error says why
		}
		for j := range i {
			if infos[j] != nil && os.SameFile(infos[j], info) {
				return fmt.Errorf("%w: %s and %s are the same file: give each capture once", errUsage, displayName(files[j]), displayName(f))
			}
		}
		infos[i] = info
	}
	if err := checkOutputs(cfg, files); err != nil {
		return err
	}
	for name, d := range cfg.clockOffsets {
		if d > maxClockOffset || d < -maxClockOffset {
			return fmt.Errorf("%w: --clock-offset %s=%v: beyond a year either way", errUsage, displayName(name), d)
		}
		named := false
		for _, f := range files {
			named = named || sameInput(name, f)
		}
		if !named {
			return fmt.Errorf("%w: --clock-offset names %s, which is not one of the captures given", errUsage, displayName(name))
		}
	}
	return nil
}

// checkOutputs refuses an output of the report (--html, --plot, --trace,
// --export) asked for with the per-packet views (-P, -V, -x), which
// write no report, and an output file that is one of the inputs, by path
// or os.SameFile (a hard link): no output is ever written over an input.
// (--export DIR: export.Begin.)
func checkOutputs(cfg *config, files []string) error {
	perPacket := cfg.packets || cfg.verbose || cfg.hex
	for _, out := range []struct{ flag, name, what string }{
		{"--html", cfg.html, "page"}, {"--plot", cfg.plot, "plot"}, {"--trace", cfg.trace, "timeline"}, {"--export", cfg.export, "tables"},
	} {
		if out.name == "" {
			continue
		}
		if perPacket {
			return fmt.Errorf("%w: %s writes the report's %s: give it without -P, -V or -x", errUsage, out.flag, out.what)
		}
		if out.flag == "--export" {
			continue
		}
		for _, f := range files {
			if f != "-" && sameInput(out.name, f) {
				return fmt.Errorf("%w: %s %s is the input %s: give another file", errUsage, out.flag, displayName(out.name), displayName(f))
			}
		}
	}
	return nil
}

// sameInput says whether two names of inputs name one file: the same
// path, or os.SameFile.
func sameInput(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}

// twinFrames is how many frames of each file sameCapture hashes first.
const twinFrames = 64

// sameCapture returns two of the files that hold the same capture (a
// copy, or a file and its .gz: the same frames, timestamps and bytes,
// every one), and ok false when none do. Only regular files are
// compared (a pipe cannot be read twice); their first frames are hashed,
// and files whose first frames agree are compared to their ends (two
// capture points of one traffic can agree on many).
func sameCapture(files []string) (a, b string, ok bool) {
	if len(files) < 2 {
		return "", "", false
	}
	seen := map[uint64][]string{}
	for _, f := range files {
		if info, err := os.Stat(f); f == "-" || err != nil || !info.Mode().IsRegular() {
			continue
		}
		h, err := headHash(f)
		if err != nil {
			continue
		}
		for _, g := range seen[h] {
			if sameFrames(g, f) {
				return g, f, true
			}
		}
		seen[h] = append(seen[h], f)
	}
	return "", "", false
}

// headHash hashes the timestamps, lengths and bytes of a capture's first
// twinFrames frames.
func headHash(name string) (uint64, error) {
	cr, err := openSmall(name)
	if err != nil {
		return 0, err
	}
	defer cr.Close()
	h := fnv.New64a()
	n := 0
	for ; n < twinFrames; n++ {
		ci, data, lt, err := cr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
		h.Write(frameHeader(ci.Timestamp, ci.Length, lt))
		h.Write(data)
	}
	if n == 0 {
		return 0, io.EOF
	}
	return h.Sum64(), nil
}

// frameHeader is what sameCapture compares of a frame besides its bytes.
func frameHeader(t time.Time, length int, lt gplayers.LinkType) []byte {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], uint64(t.UnixNano()))
	binary.LittleEndian.PutUint64(b[8:], uint64(length)<<16|uint64(lt))
	return b[:]
}

// sameFrames says whether two captures hold the same frames to their
// ends (an error reading either: not the same).
func sameFrames(a, b string) bool {
	ra, err := capture.Open(a)
	if err != nil {
		return false
	}
	defer ra.Close()
	rb, err := capture.Open(b)
	if err != nil {
		return false
	}
	defer rb.Close()
	for {
		ca, da, la, ea := ra.Next()
		ha := frameHeader(ca.Timestamp, ca.Length, la)
		cb, db, lb, eb := rb.Next() // da stays valid: ra is not read meanwhile
		if ea != nil || eb != nil {
			return errors.Is(ea, io.EOF) && errors.Is(eb, io.EOF)
		}
		if !bytes.Equal(ha, frameHeader(cb.Timestamp, cb.Length, lb)) || !bytes.Equal(da, db) {
			return false
		}
	}
}
