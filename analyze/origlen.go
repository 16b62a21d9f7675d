package analyze

import (
	"fmt"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
)

// MaxOriginalLength is the largest original (wire) length a frame is
// believed to have: libpcap's MAXIMUM_SNAPLEN (256 KiB), above any
// Ethernet jumbo frame, IB packet (LRH PktLen ≤ 8 KiB) or IP datagram. A
// capture's record header can say anything up to 4 GiB; a length above this
// is counted as the frame's captured length instead
// (Capture.OriginalLengthsClamped) and is a bad_original_length finding, so
// that four frames cannot make a report of gigabytes and terabits.
const MaxOriginalLength = decode.MaxOriginalLength

// flagOriginalLength counts and reports a clamped original length.
func (a *Analyzer) flagOriginalLength(p *Packet, orig int) {
	a.capture.OriginalLengthsClamped++
	if fd := a.finding(p, KindBadOriginalLength, SeverityWarning, nil); fd != nil {
		fd.Detail = fmt.Sprintf("original length %d is above the %d-byte maximum frame: counted as its captured length %d", orig, MaxOriginalLength, p.Length)
	}
}
