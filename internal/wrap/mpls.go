package wrap

import (
	"encoding/binary"
	"fmt"
)

const mplsTTL = 64

// mpls turns the frame into an MPLS frame: its MAC header and tags, the
// EtherType 0x8847, the Wrapper's two labels (traffic class from the
// frame's priority, TTL 64), then what followed the frame's EtherType.
// The inner label is bottom of stack unless the frame was MPLS already
// (labels pushed on its stack); any other frame than IPv4, IPv6 or MPLS
// cannot be wrapped.
func (w *Wrapper) mpls(out, f []byte, fi *frameInfo) ([]byte, tunnelKey, error) {
	switch fi.etherType {
	case etherTypeIPv4, etherTypeIPv6, etherTypeMPLS:
	default:
		return out, tunnelKey{}, fmt.Errorf("wrap: %w: mpls: the frame carries EtherType 0x%04x, not IPv4 or IPv6", ErrFrame, fi.etherType)
	}
	at := fi.typeAt
	out, b := grow(out, len(f)+2*labelLen)
	copy(b, f[:at])
	binary.BigEndian.PutUint16(b[at:], etherTypeMPLS)
	tc := uint32(fi.cos())
	for i, l := range w.cfg.Labels {
		e := l<<12 | tc<<9 | mplsTTL
		if i == len(w.cfg.Labels)-1 && fi.etherType != etherTypeMPLS {
			e |= 1 << 8 // bottom of stack
		}
		binary.BigEndian.PutUint32(b[at+2+i*labelLen:], e)
	}
	copy(b[at+2+2*labelLen:], f[at+2:])
	return out, tunnelKey{kind: MPLS, id: w.cfg.Labels[0]}, nil
}
