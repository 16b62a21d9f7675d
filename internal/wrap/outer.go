package wrap

import (
	"encoding/binary"
	"net/netip"
)

// Header sizes and numbers of the encapsulations.
const (
	ethLen       = 14
	ipv4Len      = 20
	udpLen       = 8
	greLen       = 4 // flags, version, protocol
	seqLen       = 4 // GRE sequence number
	keyLen       = 4 // GRE key
	erspan2Len   = 8
	erspan3Len   = 12
	platformLen  = 8
	vxlanLen     = 8
	geneveLen    = 8
	geneveOptLen = 8 // one option: 4-byte option header, 4 bytes of data
	tagLen       = 4
	labelLen     = 4

	etherTypeIPv4  = 0x0800
	etherTypeIPv6  = 0x86DD
	etherTypeDot1Q = 0x8100
	etherTypeQinQ  = 0x88A8
	etherTypeMPLS  = 0x8847
	etherTypeTEB   = 0x6558 // transparent Ethernet bridging (NVGRE, Geneve)
	etherTypeERSP2 = 0x88BE // ERSPAN types I and II
	etherTypeERSP3 = 0x22EB // ERSPAN type III

	protoGRE = 47
	protoUDP = 17

	portVXLAN  = 4789
	portGeneve = 6081

	outerTTL = 64
	maxIPv4  = 0xFFFF
)

// grow appends n bytes to b and returns b and the n new bytes.
func grow(b []byte, n int) ([]byte, []byte) {
	l := len(b)
	if cap(b)-l < n {
		nb := make([]byte, l, 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	b = b[:l+n]
	return b, b[l:]
}

// macOf is the MAC address of an outer endpoint: locally administered,
// 02:77 and its IPv4 address.
func macOf(a netip.Addr) [6]byte {
	v := a.As4()
	return [6]byte{0x02, 0x77, v[0], v[1], v[2], v[3]}
}

// putEthernet writes an Ethernet header from src to dst.
func putEthernet(b []byte, src, dst netip.Addr, etherType uint16) {
	d, s := macOf(dst), macOf(src)
	copy(b[0:6], d[:])
	copy(b[6:12], s[:])
	binary.BigEndian.PutUint16(b[12:14], etherType)
}

// putIPv4 writes a 20-byte IPv4 header (DF, TTL 64, identification 0)
// whose total length is total, with its checksum.
func putIPv4(b []byte, tos, proto uint8, src, dst netip.Addr, total int) {
	b[0], b[1] = 0x45, tos
	binary.BigEndian.PutUint16(b[2:4], uint16(total))
	binary.BigEndian.PutUint16(b[4:6], 0)
	binary.BigEndian.PutUint16(b[6:8], 0x4000) // DF
	b[8], b[9] = outerTTL, proto
	binary.BigEndian.PutUint16(b[10:12], 0)
	s, d := src.As4(), dst.As4()
	copy(b[12:16], s[:])
	copy(b[16:20], d[:])
	binary.BigEndian.PutUint16(b[10:12], ipv4Checksum(b[:ipv4Len]))
}

// ipv4Checksum is the Internet checksum of an IPv4 header.
func ipv4Checksum(h []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(h); i += 2 {
		sum += uint32(h[i])<<8 | uint32(h[i+1])
	}
	for sum > 0xFFFF {
		sum = sum>>16 + sum&0xFFFF
	}
	return ^uint16(sum)
}

// putUDP writes a UDP header with checksum 0 (allowed over IPv4 and
// usual for tunnels, RFC 7348 and RFC 8926).
func putUDP(b []byte, srcPort, dstPort uint16, length int) {
	binary.BigEndian.PutUint16(b[0:2], srcPort)
	binary.BigEndian.PutUint16(b[2:4], dstPort)
	binary.BigEndian.PutUint16(b[4:6], uint16(length))
	binary.BigEndian.PutUint16(b[6:8], 0)
}

// GRE flags (first byte).
const (
	greKeyBit = 0x20
	greSeqBit = 0x10
)

// putGRE writes a GRE header with the flags of the optional fields that
// follow it (key, then sequence number) and returns its length.
func putGRE(b []byte, flags uint8, proto uint16, key, seq uint32) int {
	b[0], b[1] = flags, 0
	binary.BigEndian.PutUint16(b[2:4], proto)
	n := greLen
	if flags&greKeyBit != 0 {
		binary.BigEndian.PutUint32(b[n:], key)
		n += keyLen
	}
	if flags&greSeqBit != 0 {
		binary.BigEndian.PutUint32(b[n:], seq)
		n += seqLen
	}
	return n
}
