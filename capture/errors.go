package capture

import (
	"errors"
	"fmt"
	"os"
)

// Sentinel errors wrapped by every error the package returns about a
// capture's contents, so callers can test with errors.Is.
var (
	// ErrNotCapture reports data that is neither pcap nor pcapng, plain or
	// gzip-compressed: the first bytes match no known magic number.
	ErrNotCapture = errors.New("capture: not a pcap or pcapng file")
	// ErrEmpty reports a file (or a gzip stream) holding no bytes at all. It
	// wraps ErrNotCapture, so errors.Is(err, ErrNotCapture) holds for it too.
	ErrEmpty = fmt.Errorf("%w (empty file)", ErrNotCapture)
	// ErrTruncated reports a file that ends inside a file header, a record
	// header, a packet's data or a pcapng block, or a gzip stream cut short.
	// Every frame before the cut has been returned by Next.
	ErrTruncated = errors.New("capture: truncated")
	// ErrCorrupt reports a structure that cannot be right: an impossible
	// length, a pcapng block whose lengths disagree, a bad gzip checksum.
	ErrCorrupt = errors.New("capture: corrupt")
)

// errClosed is returned by Next after Close.
var errClosed = fmt.Errorf("capture: reader closed: %w", os.ErrClosed)

// Error is the type of every error the package returns about a capture's
// contents or about reading it. It carries the byte offset where the problem
// lies, counted in the decompressed stream for gzip files, and unwraps to its
// Kind and its cause:
//
//	var ce *capture.Error
//	if errors.As(err, &ce) { fmt.Println("bad data at", ce.Offset) }
//	if errors.Is(err, capture.ErrTruncated) { ... }
type Error struct {
	// Kind is ErrNotCapture, ErrEmpty, ErrTruncated or ErrCorrupt, or nil
	// when the underlying io.Reader failed (an I/O error).
	Kind error
	// Offset is the byte offset of the record, block or header the error is
	// about: the start of a truncated or corrupt record, for example.
	Offset int64
	// Err is the underlying cause when there is one (io.ErrUnexpectedEOF for
	// truncation, a gzip or pcapgo error, an I/O error), or nil.
	Err error

	msg string
}

// newError returns an *Error whose message is the formatted text, which must
// start with "capture: " and name the offset where one applies.
func newError(kind error, off int64, cause error, format string, args ...any) *Error {
	return &Error{Kind: kind, Offset: off, Err: cause, msg: fmt.Sprintf(format, args...)}
}

// Error returns the one-line message.
func (e *Error) Error() string {
	if e.msg != "" {
		return e.msg
	}
	switch {
	case e.Kind != nil && e.Err != nil:
		return fmt.Sprintf("%v at byte offset %d: %v", e.Kind, e.Offset, e.Err)
	case e.Kind != nil:
		return fmt.Sprintf("%v at byte offset %d", e.Kind, e.Offset)
	case e.Err != nil:
		return fmt.Sprintf("capture: read error at byte offset %d: %v", e.Offset, e.Err)
	}
	return fmt.Sprintf("capture: error at byte offset %d", e.Offset)
}

// Unwrap returns Kind and Err, those that are set.
func (e *Error) Unwrap() []error {
	errs := make([]error, 0, 2)
	if e.Kind != nil {
		errs = append(errs, e.Kind)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}
