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

// pcapngSPB writes a little-endian pcapng of the given link type whose
// frames are simple packet blocks: no timestamps.
func pcapngSPB(linkType uint16, frames [][]byte) []byte {
	block := func(b []byte, typ uint32, body []byte) []byte {
		n := uint32(12 + len(body))
		b = binary.LittleEndian.AppendUint32(b, typ)
		b = binary.LittleEndian.AppendUint32(b, n)
		b = append(b, body...)
		return binary.LittleEndian.AppendUint32(b, n)
	}
	shb := binary.LittleEndian.AppendUint32(nil, 0x1A2B3C4D)
	shb = binary.LittleEndian.AppendUint16(shb, 1)
	shb = binary.LittleEndian.AppendUint16(shb, 0)
	shb = binary.LittleEndian.AppendUint64(shb, ^uint64(0)) // section length unknown
	b := block(nil, 0x0A0D0D0A, shb)
	idb := binary.LittleEndian.AppendUint16(nil, linkType)
	idb = binary.LittleEndian.AppendUint16(idb, 0)
	idb = binary.LittleEndian.AppendUint32(idb, 65535)
	b = block(b, 1, idb)
	for _, f := range frames {
		spb := binary.LittleEndian.AppendUint32(nil, uint32(len(f)))
		spb = append(spb, f...)
		spb = append(spb, make([]byte, (4-len(f)%4)%4)...)
		b = block(b, 3, spb)
	}
	return b
}
