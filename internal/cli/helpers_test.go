package cli_test

import (
	"encoding/binary"
)

// pcapBytes writes a little-endian µs pcap of the given link type.
func pcapBytes(linkType uint32, frames [][]byte) []byte {
	b := make([]byte, 24)
	binary.LittleEndian.PutUint32(b[0:], 0xa1b2c3d4)
	binary.LittleEndian.PutUint16(b[4:], 2)
	binary.LittleEndian.PutUint16(b[6:], 4)
	binary.LittleEndian.PutUint32(b[16:], 65535)
	binary.LittleEndian.PutUint32(b[20:], linkType)
	for i, f := range frames {
		h := make([]byte, 16)
		binary.LittleEndian.PutUint32(h[0:], uint32(1_700_000_000+i))
		binary.LittleEndian.PutUint32(h[8:], uint32(len(f)))
		binary.LittleEndian.PutUint32(h[12:], uint32(len(f)))
		b = append(append(b, h...), f...)
	}
	return b
}
