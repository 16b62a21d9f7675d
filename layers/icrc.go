package layers

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// ICRCStatus is the result of checking an ICRC or VCRC.
type ICRCStatus uint8

// ICRC check results.
const (
	// ICRCUnverifiable: the packet was cut short by the snap length (or its
	// network header is missing), so the CRC cannot be checked.
	ICRCUnverifiable ICRCStatus = iota
	// ICRCOK: the CRC on the wire equals the computed one.
	ICRCOK
	// ICRCBad: the CRC on the wire differs from the computed one.
	ICRCBad
)

// String returns "unverifiable", "ok" or "bad".
func (s ICRCStatus) String() string {
	switch s {
	case ICRCOK:
		return "ok"
	case ICRCBad:
		return "bad"
	}
	return "unverifiable"
}

// ICRCResult is the outcome of an ICRC check: the status, the value on the
// wire and the value computed (meaningful when Status is ICRCBad or OK).
// Values are CRC-32 values; the wire carries them least-significant byte
// first.
type ICRCResult struct {
	Status   ICRCStatus
	Value    uint32
	Expected uint32
}

// NetworkKind says which header the ICRC's coverage starts with.
type NetworkKind uint8

// Network headers in front of the BTH.
const (
	NetworkNone NetworkKind = iota
	NetworkIPv4             // RoCE v2 over IPv4 (a UDP header follows)
	NetworkIPv6             // RoCE v2 over IPv6 (a UDP header follows)
	NetworkGRH              // RoCE v1, or native IB with a GRH (LRH replaced by ones)
	NetworkLRH              // native IB without GRH: the LRH itself, VL masked
)

// ComputeICRC returns the invariant CRC of an IB packet. netHdr is the
// network header as on the wire (IPv4 header with options, IPv6 fixed
// header, GRH, or LRH for NetworkLRH), udpHdr the 8-byte UDP header for
// RoCE v2 (nil otherwise) and ib the bytes from the BTH through the pad
// (the ICRC itself excluded). Variant fields are masked byte by byte while
// the headers are summed; nothing is copied and nothing allocated.
func ComputeICRC(kind NetworkKind, netHdr, udpHdr, ib []byte) (uint32, error) {
	if len(ib) < BTHLen {
		return 0, fmt.Errorf("icrc: %w: %d bytes from the BTH on", ErrTruncated, len(ib))
	}
	var crc uint32 // running register of crc32, before the final complement
	switch kind {
	case NetworkIPv4:
		if len(netHdr) < 20 || len(netHdr) > 60 {
			return 0, fmt.Errorf("icrc: %w: IPv4 header of %d bytes", ErrBadHeader, len(netHdr))
		}
		crc = crcAfterOnes                                      // the LRH RoCE does not have
		crc = crcWord(crc, le64(netHdr[0:])|0x000000000000FF00) // TOS (DSCP, ECN)
		crc = crcWord(crc, le64(netHdr[8:])|0x00000000FFFF00FF) // TTL, header checksum
		for _, b := range netHdr[16:] {                         // destination, options
			crc = crcByte(crc, b)
		}
	case NetworkIPv6, NetworkGRH:
		if len(netHdr) < 40 {
			return 0, fmt.Errorf("icrc: %w: %d-byte IPv6/GRH header", ErrTruncated, len(netHdr))
		}
		crc = crcAfterOnes
		// Version kept; traffic class, flow label and hop limit masked.
		crc = crcWord(crc, le64(netHdr[0:])|0xFF000000FFFFFF0F)
		for off := 8; off < 40; off += 8 {
			crc = crcWord(crc, le64(netHdr[off:]))
		}
	case NetworkLRH:
		if len(netHdr) < LRHLen {
			return 0, fmt.Errorf("icrc: %w: %d-byte LRH", ErrTruncated, len(netHdr))
		}
		crc = crcWord(^uint32(0), le64(netHdr)|0xF0) // VL
	default:
		return 0, fmt.Errorf("icrc: %w: no network header", ErrBadHeader)
	}
	if kind == NetworkIPv4 || kind == NetworkIPv6 {
		if len(udpHdr) < 8 {
			return 0, fmt.Errorf("icrc: %w: %d-byte UDP header", ErrTruncated, len(udpHdr))
		}
		crc = crcWord(crc, le64(udpHdr)|0xFFFF000000000000) // UDP checksum
	}
	crc = crcWord(crc, le64(ib)|0x000000FF00000000) // FECN, BECN, resv6
	return crc32.Update(^crc, crc32.IEEETable, ib[8:]), nil
}

// crcSlicing8 holds the slicing-by-8 tables of CRC-32 (IEEE, reflected),
// built once from hash/crc32's table and only read afterwards.
var crcSlicing8 = slicing8([256]uint32(*crc32.IEEETable))

// slicing8 extends the byte table of a reflected CRC to the eight tables
// of slicing-by-8: table k gives the effect of a byte followed by k zeros.
func slicing8[T uint16 | uint32](t0 [256]T) (t [8][256]T) {
	t[0] = t0
	for i := range 256 {
		c := t0[i]
		for k := 1; k < 8; k++ {
			c = t0[c&0xFF] ^ c>>8
			t[k][i] = c
		}
	}
	return t
}

// crcAfterOnes is the register after the 8 bytes of 0xFF that stand for
// the LRH of RoCE packets.
var crcAfterOnes = crcWord(^uint32(0), ^uint64(0))

// le64 reads 8 bytes, least significant first: byte 0 is fed first.
func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// crcWord feeds 8 bytes (v, byte 0 in its low bits) to the register, with
// slicing-by-8; header masks are ORed into v by the caller.
func crcWord(crc uint32, v uint64) uint32 {
	t := &crcSlicing8
	lo := crc ^ uint32(v)
	hi := uint32(v >> 32)
	return t[0][hi>>24] ^ t[1][hi>>16&0xFF] ^ t[2][hi>>8&0xFF] ^ t[3][hi&0xFF] ^
		t[4][lo>>24] ^ t[5][lo>>16&0xFF] ^ t[6][lo>>8&0xFF] ^ t[7][lo&0xFF]
}

// crcByte feeds one byte to the register.
func crcByte(crc uint32, b byte) uint32 {
	return crc32.IEEETable[byte(crc)^b] ^ crc>>8
}

// CheckICRC verifies the ICRC of a decoded BTH against its network header
// (see ComputeICRC for kind, netHdr and udpHdr). A truncated packet, or one
// whose network header is unknown, is ICRCUnverifiable.
func CheckICRC(kind NetworkKind, netHdr, udpHdr []byte, bth *BTH) ICRCResult {
	v, ok := bth.ICRCValue()
	if !ok || kind == NetworkNone {
		return ICRCResult{Status: ICRCUnverifiable, Value: v}
	}
	exp, err := ComputeICRC(kind, netHdr, udpHdr, bth.covered)
	if err != nil {
		return ICRCResult{Status: ICRCUnverifiable, Value: v}
	}
	if exp != v {
		return ICRCResult{Status: ICRCBad, Value: v, Expected: exp}
	}
	return ICRCResult{Status: ICRCOK, Value: v, Expected: exp}
}

// ICRC is the 4-byte invariant CRC trailer of every IB packet.
// gopacket.NewPacket adds it after the payload, already checked against
// the packet's network header: Status, Expected. Value is the CRC-32 value
// (the wire bytes read least-significant first, as ComputeICRC returns
// it); WireValue is the number Wireshark shows (infiniband.invariant.crc,
// the wire bytes read in order), and String prints it that way.
//
// Status is the check of the packet as captured. A NIC sniffer (the
// ConnectX sniffer) writes UDP source port 4791 on RoCE v2 packets whose
// ICRC the sender computed over its own source port, so their ICRC is
// ICRCBad here, and the layer cannot tell a rewritten port from a
// corrupted packet: that takes knowing how the capture was made.
// SolveICRCSrcPort gives the one source port that makes such an ICRC
// verify. The analyzer (package analyze) decides: a RoCE v2 packet
// captured with source port 4791 whose ICRC verifies with exactly one
// other port is ok, with that port (analyze.Packet.ICRC,
// SrcPortRewritten, OriginalSrcPort), and every view of roce-dissect
// shows that verdict.
//
// Serializing writes Value. To fill in a correct ICRC, set
// ComputeChecksums: for RoCE v2 call BTH.SetNetworkLayerForChecksum, for
// RoCE v1 and native IB the GRH or LRH computes it (they are serialized
// after the ICRC and see the whole packet).
type ICRC struct {
	gplayers.BaseLayer
	Value    uint32
	Status   ICRCStatus
	Expected uint32
}

var (
	_ gopacket.DecodingLayer     = (*ICRC)(nil)
	_ gopacket.SerializableLayer = (*ICRC)(nil)
)

// LayerType returns LayerTypeICRC.
func (c *ICRC) LayerType() gopacket.LayerType { return LayerTypeICRC }

// CanDecode returns LayerTypeICRC.
func (c *ICRC) CanDecode() gopacket.LayerClass { return LayerTypeICRC }

// NextLayerType returns gopacket.LayerTypeZero: the ICRC ends the IB packet.
func (c *ICRC) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes a 4-byte ICRC (status unverifiable until checked).
func (c *ICRC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*c = ICRC{}
	if len(data) < ICRCLen {
		df.SetTruncated()
		return fmt.Errorf("icrc: %w: %d bytes, need %d", ErrTruncated, len(data), ICRCLen)
	}
	c.Value = binary.LittleEndian.Uint32(data)
	c.Contents = data[:ICRCLen]
	c.Payload = data[ICRCLen:]
	return nil
}

// WireValue returns the ICRC as Wireshark shows it: its four bytes as
// on the wire, read most-significant first (ICRCWireValue of Value).
func (c *ICRC) WireValue() uint32 { return ICRCWireValue(c.Value) }

// String shows the ICRC as Wireshark's number, its status and, when it
// is bad, the value expected; gopacket's LayerString and packet dumps
// print it so, rather than Value in decimal.
func (c *ICRC) String() string {
	if c.Status == ICRCBad {
		return fmt.Sprintf("ICRC %s (bad, expected %s)", ICRCWire(c.Value), ICRCWire(c.Expected))
	}
	return fmt.Sprintf("ICRC %s (%s)", ICRCWire(c.Value), c.Status)
}

// SerializeTo appends nothing and prepends the 4-byte ICRC holding Value.
func (c *ICRC) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(ICRCLen)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(p, c.Value)
	return nil
}

// SetNetworkLayerForChecksum gives the BTH the IPv4 or IPv6 layer and the
// UDP layer it will be serialized under, so that SerializeTo can compute
// the ICRC of a RoCE v2 packet when ComputeChecksums is set, the same way
// gopacket's UDP computes its checksum. It also calls
// udp.SetNetworkLayerForChecksum(network), so that the UDP layer can be
// serialized with ComputeChecksums too (it then writes a valid UDP
// checksum; wrap it in UDPZeroChecksum to send 0, as RoCE NICs do).
func (b *BTH) SetNetworkLayerForChecksum(network gopacket.SerializableLayer, udp *gplayers.UDP) error {
	switch network.(type) {
	case *gplayers.IPv4, *gplayers.IPv6:
	default:
		return fmt.Errorf("bth: %w: ICRC network layer must be IPv4 or IPv6, not %T", ErrBadHeader, network)
	}
	if udp != nil {
		if err := udp.SetNetworkLayerForChecksum(network.(gopacket.NetworkLayer)); err != nil {
			return fmt.Errorf("bth: %w", err)
		}
	}
	b.csumNet, b.csumUDP = network, udp
	return nil
}

// fillICRCv2 computes the ICRC of a RoCE v2 packet whose bytes from the BTH
// on are ib (ending with the ICRC), serializing the network header into a
// scratch buffer exactly as it will be written.
func (b *BTH) fillICRCv2(ib []byte, opts gopacket.SerializeOptions) error {
	if len(ib) < BTHLen+ICRCLen {
		return fmt.Errorf("bth: %w: no ICRC after the BTH to fill in", ErrBadHeader)
	}
	udpLen := 8 + len(ib)
	scratch := gopacket.NewSerializeBuffer()
	if _, err := scratch.PrependBytes(udpLen); err != nil {
		return err
	}
	var kind NetworkKind
	switch ip := b.csumNet.(type) {
	case *gplayers.IPv4:
		kind = NetworkIPv4
		saved := *ip
		err := ip.SerializeTo(scratch, opts)
		*ip = saved
		if err != nil {
			return err
		}
	case *gplayers.IPv6:
		kind = NetworkIPv6
		saved := *ip
		err := ip.SerializeTo(scratch, opts)
		*ip = saved
		if err != nil {
			return err
		}
	}
	hdr := scratch.Bytes()[:len(scratch.Bytes())-udpLen]
	var udp [8]byte
	if b.csumUDP != nil {
		binary.BigEndian.PutUint16(udp[0:2], uint16(b.csumUDP.SrcPort))
		binary.BigEndian.PutUint16(udp[2:4], uint16(b.csumUDP.DstPort))
		l := b.csumUDP.Length
		if opts.FixLengths {
			l = uint16(udpLen)
		}
		binary.BigEndian.PutUint16(udp[4:6], l)
	}
	crc, err := ComputeICRC(kind, hdr, udp[:], ib[:len(ib)-ICRCLen])
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint32(ib[len(ib)-ICRCLen:], crc)
	return nil
}

// crc16Tables are the slicing-by-8 tables of the VCRC: polynomial 0x100B,
// processed least-significant bit first (reflected form 0xD008). Built
// once, only read afterwards.
var crc16Tables = slicing8(func() (t [256]uint16) {
	for i := range t {
		c := uint16(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return t
}())

// ComputeVCRC returns the variant CRC of a native IB packet: CRC-16 with
// polynomial 0x100B, initial value 0xFFFF, bits processed least
// significant first and a final complement, over the packet from the LRH
// through the ICRC. The wire carries it least-significant byte first.
func ComputeVCRC(pkt []byte) uint16 {
	t := &crc16Tables
	crc := uint16(0xFFFF)
	for ; len(pkt) >= 8; pkt = pkt[8:] {
		c := crc ^ uint16(pkt[0]) ^ uint16(pkt[1])<<8
		crc = t[7][c&0xFF] ^ t[6][c>>8] ^ t[5][pkt[2]] ^ t[4][pkt[3]] ^
			t[3][pkt[4]] ^ t[2][pkt[5]] ^ t[1][pkt[6]] ^ t[0][pkt[7]]
	}
	for _, x := range pkt {
		crc = crc>>8 ^ t[0][byte(crc)^x]
	}
	return ^crc
}

// ICRCWireValue returns the number Wireshark shows for the ICRC whose
// CRC-32 value is v (infiniband.invariant.crc): the four bytes on the
// wire, least significant of v first, read most-significant first.
// 0x2a00fd82 is 0x82fd002a.
func ICRCWireValue(v uint32) uint32 { return bits.ReverseBytes32(v) }

// ICRCWire renders an ICRC value as its bytes on the wire, least
// significant first, the way Wireshark shows them (ICRCWireValue in
// hex): 0x2a00fd82 is "0x82fd002a".
func ICRCWire(v uint32) string {
	const hex = "0123456789abcdef"
	b := [10]byte{'0', 'x'}
	for i := range 4 {
		x := byte(v >> (8 * i))
		b[2+2*i], b[3+2*i] = hex[x>>4], hex[x&0xF]
	}
	return string(b[:])
}

// VCRCWire renders a VCRC value as its bytes on the wire, least
// significant first.
func VCRCWire(v uint16) string { return ICRCWire(uint32(v))[:6] }
