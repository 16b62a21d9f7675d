package layers

import (
	"encoding/binary"
	"hash/crc32"
	"path/filepath"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sniffer is the UDP source port the NIC sniffer writes.
const sniffer = uint16(UDPPortRoCEv2)

// v2Packet is a RoCE v2 frame decoded for the port solver.
type v2Packet struct {
	icrc   ICRCResult
	kind   NetworkKind
	netHdr []byte
	udpHdr []byte
	bth    *BTH
	udpOff int // offset of the UDP header in the frame
}

// decodeV2 decodes a frame starting at first; ok is false when it is not
// a whole RoCE v2 packet.
func decodeV2(data []byte, first gopacket.LayerType) (v v2Packet, ok bool) {
	parser, std, ib := newParser(first)
	parser.IgnoreUnsupported = true
	var decoded []gopacket.LayerType
	if parser.DecodeLayers(data, &decoded) != nil {
		return v, false
	}
	for _, t := range decoded {
		switch t {
		case gplayers.LayerTypeIPv4:
			v.kind, v.netHdr = NetworkIPv4, std.ip4.Contents
		case gplayers.LayerTypeIPv6:
			v.kind, v.netHdr = NetworkIPv6, std.ip6.Contents
		case gplayers.LayerTypeUDP:
			v.udpHdr = std.udp.Contents
		case LayerTypeBTH:
			v.bth = &ib.BTH
		}
	}
	if v.udpHdr == nil || v.bth == nil || v.bth.Truncated {
		return v, false
	}
	v.icrc = checkDLP(decoded, std, ib)
	v.udpOff = offsetIn(data, v.udpHdr)
	return v, true
}

// withSrcPort returns a copy of a RoCE v2 frame with another UDP source
// port, the rest (ICRC included) unchanged: what the NIC sniffer writes.
func withSrcPort(data []byte, udpOff int, port uint16) []byte {
	out := append([]byte(nil), data...)
	binary.BigEndian.PutUint16(out[udpOff:], port)
	return out
}

// portsThatVerify tries every UDP source port with ComputeICRC (the
// brute force the solver avoids) and returns those whose ICRC equals the
// one on the wire.
func portsThatVerify(t *testing.T, v v2Packet) []uint16 {
	t.Helper()
	var udp [8]byte
	copy(udp[:], v.udpHdr)
	var out []uint16
	for p := range 1 << 16 {
		binary.BigEndian.PutUint16(udp[:], uint16(p))
		crc, err := ComputeICRC(v.kind, v.netHdr, udp[:], v.bth.ICRCCovered())
		require.NoError(t, err)
		if crc == v.icrc.Value {
			out = append(out, uint16(p))
		}
	}
	return out
}

// TestCRCRingArithmetic checks the GF(2)[x]/P helpers against hash/crc32
// itself: x·x^−1 = 1, and shifting a register over n zero bytes with
// crcShiftFwd equals feeding n zero bytes to the CRC.
func TestCRCRingArithmetic(t *testing.T) {
	assert.Equal(t, crcOne, crcMul(crcXInv, crcX1), "x · x^-1")
	for k := range 32 {
		assert.Equal(t, crcOne, crcMul(crcShiftFwd[k], crcShiftBack[k]), "2^%d bytes forward and back", k)
	}
	zeros := make([]byte, 5000)
	for _, n := range []int{0, 1, 2, 7, 8, 100, 1029, 4999} {
		for _, reg := range []uint32{0x12345678, 0xFFFFFFFF, 0x80000001} {
			// crc32.Update complements the register on the way in and out.
			want := ^crc32.Update(^reg, crc32.IEEETable, zeros[:n])
			assert.Equal(t, want, crcMul(reg, crcPow(&crcShiftFwd, uint32(n))), "%d zero bytes from %#x", n, reg)
			assert.Equal(t, reg, crcMul(want, crcPow(&crcShiftBack, uint32(n))), "%d zero bytes back to %#x", n, reg)
		}
	}
	for d := range 1 << 16 {
		// A(δ) is the CRC register after the two bytes of δ.
		raw := ^crc32.Update(^uint32(0), crc32.IEEETable, []byte{byte(d >> 8), byte(d)})
		if raw != portCRC(uint16(d)) {
			t.Fatalf("portCRC(%#x) = %#x, crc32 says %#x", d, portCRC(uint16(d)), raw)
		}
	}
}

// TestSolveICRCSrcPortGoldenFrames rewrites the UDP source port of every
// RoCE v2 golden frame (ICRCs computed by testdata/golden_frames.py, not
// by this package) as the NIC sniffer does, and solves it back.
func TestSolveICRCSrcPortGoldenFrames(t *testing.T) {
	n := 0
	for _, g := range goldenFrames {
		data := g.bytes()
		orig, ok := decodeV2(data, g.first)
		if !ok {
			continue
		}
		n++
		t.Run(g.name, func(t *testing.T) {
			require.Equal(t, ICRCOK, orig.icrc.Status)
			truePort := binary.BigEndian.Uint16(orig.udpHdr)
			port, ok := SolveICRCSrcPort(orig.icrc, orig.udpHdr, orig.bth)
			assert.True(t, ok, "a verifying packet keeps its port")
			assert.Equal(t, truePort, port)
			for _, captured := range []uint16{sniffer, 0, 0xFFFF, truePort ^ 1} {
				if captured == truePort {
					continue
				}
				v, ok := decodeV2(withSrcPort(data, orig.udpOff, captured), g.first)
				require.True(t, ok)
				require.Equal(t, ICRCBad, v.icrc.Status, "captured port %d", captured)
				port, ok := SolveICRCSrcPort(v.icrc, v.udpHdr, v.bth)
				assert.True(t, ok, "captured port %d", captured)
				assert.Equal(t, truePort, port, "captured port %d", captured)
				shift := ICRCSrcPortShift(len(v.bth.ICRCCovered()))
				assert.True(t, VerifyICRCSrcPort(v.icrc, captured, truePort, shift))
				assert.False(t, VerifyICRCSrcPort(v.icrc, captured, truePort^0x100, shift))
				assert.Equal(t, v.icrc.Value^v.icrc.Expected, ICRCSrcPortDelta(len(v.bth.ICRCCovered()), truePort^captured))
			}
		})
	}
	assert.GreaterOrEqual(t, n, 20, "RoCE v2 golden frames")
}

// TestSolveICRCSrcPortBruteForce tries all 65536 source ports on golden
// frames rewritten to port 4791: exactly one verifies, the solver's.
func TestSolveICRCSrcPortBruteForce(t *testing.T) {
	n := 0
	for _, g := range goldenFrames {
		orig, ok := decodeV2(g.bytes(), g.first)
		if !ok {
			continue
		}
		v, ok := decodeV2(withSrcPort(g.bytes(), orig.udpOff, sniffer), g.first)
		require.True(t, ok)
		want := portsThatVerify(t, v)
		require.Len(t, want, 1, g.name)
		port, ok := SolveICRCSrcPort(v.icrc, v.udpHdr, v.bth)
		assert.True(t, ok, g.name)
		assert.Equal(t, want[0], port, g.name)
		n++
	}
	assert.Positive(t, n)
}

// TestSolveICRCSrcPortDamaged: a packet damaged elsewhere than its port
// is not explained by a port (no port verifies, by brute force), except
// for the damage the ICRC cannot tell from a port change.
func TestSolveICRCSrcPortDamaged(t *testing.T) {
	g := goldenFrames[3] // RC RDMA_WRITE_FIRST
	orig, ok := decodeV2(g.bytes(), g.first)
	require.True(t, ok, g.name)
	truePort := binary.BigEndian.Uint16(orig.udpHdr)
	end := offsetIn(g.bytes(), orig.bth.ICRCCovered()) + len(orig.bth.ICRCCovered())
	for _, tc := range []struct {
		name string
		off  int // byte to flip, from the end of the covered bytes
		mask byte
	}{
		{"last payload byte", 1, 0x01},
		{"first payload byte", 16, 0x80},
		{"BTH PSN", len(orig.bth.ICRCCovered()) - 11, 0x04},
		{"IPv4 source address", end - orig.udpOff + 8, 0x10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := withSrcPort(g.bytes(), orig.udpOff, sniffer)
			data[end-tc.off] ^= tc.mask
			v, ok := decodeV2(data, g.first)
			require.True(t, ok)
			require.Equal(t, ICRCBad, v.icrc.Status)
			assert.Empty(t, portsThatVerify(t, v))
			_, ok = SolveICRCSrcPort(v.icrc, v.udpHdr, v.bth)
			assert.False(t, ok)
		})
	}
	// One damage in 2^16 is indistinguishable from a port change: here
	// the ICRC itself, XORed with the change port 1234 would make.
	data := withSrcPort(g.bytes(), orig.udpOff, sniffer)
	icrcOff := end
	binary.LittleEndian.PutUint32(data[icrcOff:], binary.LittleEndian.Uint32(data[icrcOff:])^ICRCSrcPortDelta(len(orig.bth.ICRCCovered()), truePort^1234))
	v, ok := decodeV2(data, g.first)
	require.True(t, ok)
	port, ok := SolveICRCSrcPort(v.icrc, v.udpHdr, v.bth)
	assert.True(t, ok)
	assert.Equal(t, uint16(1234), port)
	assert.Equal(t, []uint16{1234}, portsThatVerify(t, v))
}

// TestSolveICRCSrcPortUnverifiable: an unverifiable packet, or one with
// no UDP header, is not solved.
func TestSolveICRCSrcPortUnverifiable(t *testing.T) {
	g := goldenFrames[0]
	v, ok := decodeV2(g.bytes(), g.first)
	require.True(t, ok)
	for name, r := range map[string]ICRCResult{
		"unverifiable": {Status: ICRCUnverifiable, Value: v.icrc.Value},
	} {
		_, ok := SolveICRCSrcPort(r, v.udpHdr, v.bth)
		assert.False(t, ok, name)
	}
	_, ok = SolveICRCSrcPort(ICRCResult{Status: ICRCBad, Value: 1}, v.udpHdr[:4], v.bth)
	assert.False(t, ok, "short UDP header")
	_, ok = SolveICRCSrcPort(ICRCResult{Status: ICRCBad, Value: 1}, v.udpHdr, nil)
	assert.False(t, ok, "no BTH")
}

// TestSolveICRCSrcPortSoftRoCE rewrites the source port of every RoCE v2
// packet of the Soft-RoCE captures (ICRCs computed by the Linux rxe
// driver) to 4791 and solves each back to the port on the wire.
func TestSolveICRCSrcPortSoftRoCE(t *testing.T) {
	for _, path := range capturePaths(t, "softroce") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			n := 0
			for _, f := range readPcap(t, path) {
				orig, ok := decodeV2(f.data, f.linkType)
				if !ok || orig.icrc.Status != ICRCOK {
					continue
				}
				truePort := binary.BigEndian.Uint16(orig.udpHdr)
				if truePort == sniffer {
					continue
				}
				v, ok := decodeV2(withSrcPort(f.data, orig.udpOff, sniffer), f.linkType)
				require.True(t, ok, "frame %d", f.n)
				require.Equal(t, ICRCBad, v.icrc.Status, "frame %d", f.n)
				port, ok := SolveICRCSrcPort(v.icrc, v.udpHdr, v.bth)
				require.True(t, ok, "frame %d", f.n)
				require.Equal(t, truePort, port, "frame %d", f.n)
				n++
			}
			assert.Positive(t, n)
		})
	}
}

// TestSolveICRCSrcPortAllocs: the solver allocates nothing.
func TestSolveICRCSrcPortAllocs(t *testing.T) {
	g := goldenFrames[3]
	orig, ok := decodeV2(g.bytes(), g.first)
	require.True(t, ok)
	v, ok := decodeV2(withSrcPort(g.bytes(), orig.udpOff, sniffer), g.first)
	require.True(t, ok)
	allocs := testing.AllocsPerRun(1000, func() {
		if _, ok := SolveICRCSrcPort(v.icrc, v.udpHdr, v.bth); !ok {
			panic("not solved")
		}
	})
	assert.Zero(t, allocs)
}

// FuzzSolveICRCSrcPort: for any length and port change, the solver finds
// the change from the ICRC difference it makes; for any difference, a
// solution it returns makes exactly that difference.
func FuzzSolveICRCSrcPort(f *testing.F) {
	f.Add(uint32(0), uint16(0), uint32(0))
	f.Add(uint32(12), uint16(0xc000^4791), uint32(0xdeadbeef))
	f.Add(uint32(4096+28), uint16(0xffff), uint32(1))
	f.Add(uint32(65535), uint16(1), uint32(0x80000000))
	f.Fuzz(func(t *testing.T, covered uint32, delta uint16, diff uint32) {
		n := int(covered % (1 << 20))
		shift := ICRCSrcPortShift(n)
		got, ok := SolveICRCSrcPortDelta(ICRCSrcPortDelta(n, delta), shift)
		if !ok || got != delta {
			t.Fatalf("length %d, delta %#x: solved %#x, %v", n, delta, got, ok)
		}
		if d, ok := SolveICRCSrcPortDelta(diff, shift); ok && ICRCSrcPortDelta(n, d) != diff {
			t.Fatalf("length %d, diff %#x: delta %#x makes %#x", n, diff, d, ICRCSrcPortDelta(n, d))
		}
	})
}

// FuzzSolveICRCSrcPortFrame: any frame, its source port rewritten, never
// makes the solver panic; a frame whose ICRC verified solves back to its
// port.
func FuzzSolveICRCSrcPortFrame(f *testing.F) {
	frames, firsts := seedFrames()
	for i, data := range frames {
		if firsts[i] == gplayers.LayerTypeEthernet {
			f.Add(data, uint16(sniffer))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, captured uint16) {
		orig, ok := decodeV2(data, gplayers.LayerTypeEthernet)
		if !ok || gplayers.UDPPort(binary.BigEndian.Uint16(orig.udpHdr[2:4])) != UDPPortRoCEv2 {
			// RoCE v2 is told by its destination port (gopacket also
			// takes a source port 4791, which the rewrite may remove).
			return
		}
		truePort := binary.BigEndian.Uint16(orig.udpHdr)
		v, ok := decodeV2(withSrcPort(data, orig.udpOff, captured), gplayers.LayerTypeEthernet)
		if !ok {
			t.Fatal("rewriting the port made the frame undecodable")
		}
		port, solved := SolveICRCSrcPort(v.icrc, v.udpHdr, v.bth)
		if orig.icrc.Status == ICRCOK && (!solved || port != truePort) {
			t.Fatalf("port %d rewritten to %d: solved %d, %v", truePort, captured, port, solved)
		}
		if solved && v.icrc.Status == ICRCBad {
			fixed, ok := decodeV2(withSrcPort(data, orig.udpOff, port), gplayers.LayerTypeEthernet)
			if !ok || fixed.icrc.Status != ICRCOK {
				t.Fatalf("solved port %d does not verify", port)
			}
		}
	})
}

// BenchmarkSolveICRCSrcPort solves the port of a rewritten golden frame:
// O(log n) multiplications, no CRC over the packet.
func BenchmarkSolveICRCSrcPort(b *testing.B) {
	g := goldenFrames[3]
	orig, _ := decodeV2(g.bytes(), g.first)
	v, _ := decodeV2(withSrcPort(g.bytes(), orig.udpOff, sniffer), g.first)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := SolveICRCSrcPort(v.icrc, v.udpHdr, v.bth); !ok {
			b.Fatal("not solved")
		}
	}
}

// BenchmarkVerifyICRCSrcPort checks a known port against a rewritten
// frame's ICRC, the shift factor of its length given: what the analyzer
// pays per packet of a NIC sniffer capture once a flow's port is known.
func BenchmarkVerifyICRCSrcPort(b *testing.B) {
	g := goldenFrames[3]
	orig, _ := decodeV2(g.bytes(), g.first)
	v, _ := decodeV2(withSrcPort(g.bytes(), orig.udpOff, sniffer), g.first)
	truePort := binary.BigEndian.Uint16(orig.udpHdr)
	shift := ICRCSrcPortShift(len(v.bth.ICRCCovered()))
	b.ReportAllocs()
	for b.Loop() {
		if !VerifyICRCSrcPort(v.icrc, sniffer, truePort, shift) {
			b.Fatal("not verified")
		}
	}
}
