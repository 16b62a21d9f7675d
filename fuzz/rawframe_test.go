package fuzz_test

import "encoding/binary"

// rawRoCEv2 returns an Ethernet/IPv4/UDP frame to port 4791 holding a BTH
// of opcode (DestQP 1, PSN 1), rest and a zero ICRC, written byte by byte
// (no encoder of the repository makes a frame that lies). ipLen and udpLen
// set the IP total length and UDP length; 0 is the frame's own.
func rawRoCEv2(opcode byte, rest []byte, ipLen, udpLen int) []byte {
	l4 := append([]byte{opcode, 0, 0xFF, 0xFF, 0, 0, 0, 1, 0, 0, 0, 1}, rest...)
	l4 = append(l4, 0, 0, 0, 0)
	if udpLen == 0 {
		udpLen = 8 + len(l4)
	}
	if ipLen == 0 {
		ipLen = 20 + 8 + len(l4)
	}
	b := []byte{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00} // Ethernet, IPv4
	b = append(b, 0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2)
	binary.BigEndian.PutUint16(b[14+2:], uint16(ipLen))
	b = binary.BigEndian.AppendUint16(b, 49152)
	b = binary.BigEndian.AppendUint16(b, 4791)
	b = binary.BigEndian.AppendUint16(b, uint16(udpLen))
	b = append(b, 0, 0)
	return append(b, l4...)
}

// lyingPastListSeed is a FuzzAnalyzerSequence input of 34 RC WRITE ONLY
// frames without their RETH (malformed, not for their length) and then 4
// SEND ONLY frames recorded whole whose IP total length says 5,020 bytes
// (above any RDMA packet: malformed, lying), split after 20 frames. The
// whole lists only its first 32 malformed frames, none of them lying; the
// halves list all 38. The oracle once counted lying frames from those
// lists and failed on it.
func lyingPastListSeed() (split uint8, in []byte) {
	add := func(b []byte) { in = append(append(in, 0, byte(len(b))), b...) }
	for range 34 {
		add(rawRoCEv2(0x0A, nil, 0, 0))
	}
	for range 4 {
		add(rawRoCEv2(0x04, make([]byte, 8), 5020, 5000))
	}
	return 20, in
}
