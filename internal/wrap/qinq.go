package wrap

import "encoding/binary"

// qinq pushes an 802.1ad S-tag in front of the frame's tags or EtherType:
// the frame's priority (tag or IP precedence), DEI 0, the Wrapper's
// S-VLAN ID.
func (w *Wrapper) qinq(out, f []byte, fi *frameInfo) ([]byte, tunnelKey, error) {
	out, b := grow(out, len(f)+tagLen)
	copy(b, f[:12])
	binary.BigEndian.PutUint16(b[12:14], etherTypeQinQ)
	binary.BigEndian.PutUint16(b[14:16], uint16(fi.cos())<<13|w.cfg.SVID)
	copy(b[16:], f[12:])
	return out, tunnelKey{kind: QinQ, id: uint32(w.cfg.SVID)}, nil
}
