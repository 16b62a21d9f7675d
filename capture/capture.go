// Package capture reads capture files for library users: pcap (µs and ns
// timestamps), pcapng and ERF records, plain or gzip-compressed, sniffed by
// their magic number. It is the reader roce-dissect uses; the types are
// aliases of it.
//
// A Reader yields each frame's gopacket.CaptureInfo, its data (valid until
// the next call to Next) and its link type, which selects the first
// layer to decode: gopacket.NewPacket(data, linkType, …) or a
// gopacket.DecodingLayerParser started at the link type's layer.
//
// Errors about a file's contents are *Error values that carry the byte
// offset of the problem and wrap ErrNotCapture, ErrEmpty, ErrTruncated or
// ErrCorrupt: a truncated file has given all its frames before the cut.
package capture

import (
	"io"

	"github.com/roce-dissect/roce-dissect/internal/capture"
)

// Reader reads the frames of a capture: Next returns io.EOF at the end.
// Close releases the file (Open) or the decompressor.
type Reader = capture.Reader

// Format says how a capture file is laid out (container, gzip, timestamp
// resolution).
type Format = capture.Format

// Container is a capture file layout, as told by its magic number.
type Container = capture.Container

// Error is the type of every error about a capture's contents or reading
// it; it carries the byte offset (see internal/capture).
type Error = capture.Error

// Sentinel errors wrapped by the errors of the package, for errors.Is.
var (
	ErrNotCapture = capture.ErrNotCapture
	ErrEmpty      = capture.ErrEmpty
	ErrTruncated  = capture.ErrTruncated
	ErrCorrupt    = capture.ErrCorrupt
)

// Open opens a capture file by name.
func Open(name string) (*Reader, error) { return capture.Open(name) }

// NewReader reads a capture from r (a file, standard input, a network
// stream).
func NewReader(r io.Reader) (*Reader, error) { return capture.NewReader(r) }
