package layers

import "errors"

// Sentinel errors wrapped by every decoder in this package, so callers can
// test with errors.Is.
var (
	// ErrTruncated reports data too short for the header being decoded.
	ErrTruncated = errors.New("truncated")
	// ErrUnknownOpcode reports a BTH opcode outside the IBTA table: the BTH
	// itself is decoded, but its extension headers cannot be known.
	ErrUnknownOpcode = errors.New("unknown opcode")
	// ErrBadHeader reports a header whose fields contradict each other or
	// the data (a length pointing past the packet, a wrong version).
	ErrBadHeader = errors.New("bad header")
	// ErrFieldRange reports a field too large for its wire width when
	// serializing (a DestQP over 24 bits, say).
	ErrFieldRange = errors.New("field out of range")
)
