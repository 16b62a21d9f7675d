package cm

import "errors"

// Sentinel errors wrapped by every decoder and encoder in this package, so
// callers can test with errors.Is. The wrapping errors read
// "cm: truncated: REQ: 100 bytes, need 140".
var (
	// ErrTruncated reports data too short for what is being decoded: a MAD
	// under 256 bytes (cut by the capture's snap length), a message under
	// its fixed part, RDMA-CM private data under 36 bytes. What was present
	// is still decoded (see MAD.DecodeFromBytes).
	ErrTruncated = errors.New("truncated")
	// ErrUnknownAttribute reports an attribute that is not one of the
	// eleven CM messages where a CM message was asked for.
	ErrUnknownAttribute = errors.New("unknown attribute")
	// ErrFieldRange reports, when encoding, a field too large for its wire
	// width (a LocalQPN over 24 bits, private data over its room, …).
	ErrFieldRange = errors.New("field out of range")
	// ErrBadHeader reports, when serializing, a MAD header that contradicts
	// its message (a CM message in a MAD of another class or attribute)
	// while SerializeOptions.FixLengths is not set to mend it.
	ErrBadHeader = errors.New("bad header")
)
