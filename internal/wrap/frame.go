package wrap

import "encoding/binary"

// host names an inner host: its IP address, or its MAC address when the
// frame carries no (whole) IP header.
type host struct {
	addr [16]byte
	ip   uint8 // 4, 6, or 0 for a MAC address
}

// frameInfo is what a wrapper reads of the frame it wraps: enough for the
// headers it writes around it, never more than the captured bytes.
type frameInfo struct {
	typeAt    int    // offset of the innermost EtherType, after the tags
	etherType uint16 // 0 when the tags run past the captured bytes
	tagged    bool
	tci       uint16 // the outermost tag's TCI, when tagged
	ip        bool   // an IPv4 or IPv6 header was captured whole
	tos       uint8  // its DSCP and ECN (traffic class for IPv6)
	src, dst  host
	hash      uint32 // of the flow's headers, as a VTEP's ECMP hash
}

// isTag reports whether an EtherType is that of a VLAN tag.
func isTag(t uint16) bool { return t == etherTypeDot1Q || t == etherTypeQinQ || t == 0x9100 }

// readFrame reads an Ethernet frame of at least ethLen bytes.
func readFrame(f []byte) frameInfo {
	var fi frameInfo
	at := 12
	t := binary.BigEndian.Uint16(f[at:])
	for isTag(t) {
		if !fi.tagged {
			fi.tagged = true
			if len(f) >= at+4 {
				fi.tci = binary.BigEndian.Uint16(f[at+2:])
			}
		}
		if len(f) < at+6 {
			t = 0 // cut inside the tags
			break
		}
		at += 4
		t = binary.BigEndian.Uint16(f[at:])
	}
	fi.typeAt, fi.etherType = at, t
	copy(fi.src.addr[:], f[6:12])
	copy(fi.dst.addr[:], f[0:6])
	h := fnv32(2166136261)
	l3 := f[min(at+2, len(f)):]
	var proto uint8
	var ports []byte
	switch {
	case t == etherTypeIPv4 && len(l3) >= ipv4Len && l3[0]>>4 == 4:
		fi.ip, fi.tos, proto = true, l3[1], l3[9]
		fi.src, fi.dst = host{ip: 4}, host{ip: 4}
		copy(fi.src.addr[:], l3[12:16])
		copy(fi.dst.addr[:], l3[16:20])
		ihl := int(l3[0]&0x0F) * 4
		fragment := binary.BigEndian.Uint16(l3[6:8])&0x3FFF != 0
		if !fragment && ihl >= ipv4Len && len(l3) >= ihl+4 {
			ports = l3[ihl : ihl+4]
		}
	case t == etherTypeIPv6 && len(l3) >= 40 && l3[0]>>4 == 6:
		fi.ip, fi.tos, proto = true, l3[0]<<4|l3[1]>>4, l3[6]
		fi.src, fi.dst = host{ip: 6}, host{ip: 6}
		copy(fi.src.addr[:], l3[8:24])
		copy(fi.dst.addr[:], l3[24:40])
		h.write(l3[1:4]) // flow label
		if len(l3) >= 44 {
			ports = l3[40:44]
		}
	}
	h.write(fi.src.addr[:])
	h.write(fi.dst.addr[:])
	if proto == protoUDP || proto == 6 { // UDP, TCP
		h.write([]byte{proto})
		h.write(ports)
	}
	if !fi.ip {
		h.write(f[12:14])
	}
	fi.hash = uint32(h)
	return fi
}

// cos is the class of service of the frame: its tag's priority, else its
// IP precedence, as a Linux ERSPAN port reports it.
func (fi *frameInfo) cos() uint8 {
	switch {
	case fi.tagged:
		return uint8(fi.tci >> 13)
	case fi.ip:
		return fi.tos >> 5
	}
	return 0
}

// srcPort is the UDP source port of a VXLAN or Geneve packet: the flow's
// hash in 49152…65535 (RFC 7348 section 5), as VTEPs spread flows over
// ECMP paths.
func (fi *frameInfo) srcPort() uint16 {
	return 49152 | uint16(fi.hash^fi.hash>>16)&0x3FFF
}

// fnv32 is the 32-bit FNV-1a hash.
type fnv32 uint32

func (h *fnv32) write(b []byte) {
	for _, c := range b {
		*h = (*h ^ fnv32(c)) * 16777619
	}
}
