package layers

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// BTHLen is the length of the Base Transport Header.
const BTHLen = 12

// ICRCLen and VCRCLen are the lengths of the two CRC trailers.
const (
	ICRCLen = 4
	VCRCLen = 2
)

// BTH is the InfiniBand Base Transport Header, the first IB header of
// every RoCE v2 packet (after UDP port 4791), after the GRH of RoCE v1 and
// after the LRH/GRH of native InfiniBand.
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|    OpCode     |S|M|Pad|  TVer |            P_Key              |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|F|B|  resv6    |                    DestQP                     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|A|   resv7     |                     PSN                       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// Decoding takes the whole rest of the IB packet: the BTH strips the
// trailer (pad bytes and the 4-byte ICRC) so that its LayerPayload is the
// extension headers followed by the payload. The extension headers that
// follow are fixed by the opcode (Headers; for the RD opcodes also by
// whether the packet is DC, see RDDecoding and the DC field);
// NextLayerType returns the first of them. Trailer and Pad alias the
// decoded data.
//
// A packet cut short by the capture's snap length has no ICRC: when the
// layers below report truncation (gopacket.DecodeFeedback.SetTruncated was
// called by IPv4/UDP/GRH/LRH, seen through the DecodingLayerParser's
// Truncated field or the packet's metadata), Truncated is set, Trailer is
// nil and the payload is whatever was captured.
type BTH struct {
	gplayers.BaseLayer
	Opcode         Opcode
	SolicitedEvent bool  // SE
	MigReq         bool  // M: migration state
	PadCnt         uint8 // pad bytes before the ICRC (0–3)
	TVer           uint8 // transport header version (0)
	PKey           uint16
	FECN           bool // forward explicit congestion notification
	BECN           bool // backward explicit congestion notification
	Resv6          uint8
	DestQP         uint32 // 24 bits
	AckReq         bool
	Resv7          uint8
	PSN            uint32 // 24 bits

	// Truncated is true when the packet was cut short before its end
	// (snap length): no ICRC, payload incomplete.
	Truncated bool
	// Trailer is the 4-byte ICRC as on the wire, or nil when Truncated.
	Trailer []byte
	// Pad holds the PadCnt pad bytes (nil when Truncated).
	Pad []byte
	// DC is true when the packet, an RD-range opcode, was decoded as
	// NVIDIA's Dynamically Connected transport (see RDDecoding): its
	// headers are then RDETH, DETH, DCETH and those of the RC opcode.
	DC bool

	// DecodeRDAs chooses how RD-range opcodes are decoded (RDDecodeAuto
	// by default). It is a setting, not a header field: DecodeFromBytes
	// keeps it while it resets every field above.
	DecodeRDAs RDDecoding

	covered []byte // BTH through pad: what the ICRC covers after the network header
	chain   [maxExtHeaders + 1]gopacket.LayerType
	nChain  uint8

	csumNet gopacket.SerializableLayer // set by SetNetworkLayerForChecksum
	csumUDP *gplayers.UDP
}

var (
	_ gopacket.DecodingLayer     = (*BTH)(nil)
	_ gopacket.SerializableLayer = (*BTH)(nil)
)

// LayerType returns LayerTypeBTH.
func (b *BTH) LayerType() gopacket.LayerType { return LayerTypeBTH }

// CanDecode returns LayerTypeBTH.
func (b *BTH) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// NextLayerType returns the first extension header the opcode implies,
// then LayerTypeMAD for QP0/QP1 traffic, gopacket.LayerTypePayload for a
// payload, or gopacket.LayerTypeZero when nothing follows.
func (b *BTH) NextLayerType() gopacket.LayerType {
	if b.nChain == 0 {
		return gopacket.LayerTypeZero
	}
	return b.chain[0]
}

// nextAfter returns the layer type following t in this packet's header
// sequence; extension headers linked to the BTH use it.
func (b *BTH) nextAfter(t gopacket.LayerType) gopacket.LayerType {
	for i := 0; i < int(b.nChain)-1; i++ {
		if b.chain[i] == t {
			return b.chain[i+1]
		}
	}
	return gopacket.LayerTypeZero
}

// ICRCValue returns the ICRC carried by the packet as a CRC-32 value
// (the wire bytes read least-significant first) and whether it is present.
func (b *BTH) ICRCValue() (uint32, bool) {
	if len(b.Trailer) != ICRCLen {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b.Trailer), true
}

// ICRCCovered returns the bytes from the BTH through the pad, unmasked:
// the part of the ICRC's coverage that follows the network header.
func (b *BTH) ICRCCovered() []byte { return b.covered }

// PayloadLen returns the length of the payload after the extension
// headers (pad and ICRC excluded); for a Truncated packet, what was captured.
func (b *BTH) PayloadLen() int {
	n := len(b.Payload) - b.HeaderLen()
	if n < 0 {
		return 0
	}
	return n
}

// DecodeFromBytes decodes the BTH and splits off the pad and ICRC. data is
// the whole IB packet from the BTH on (bounded by the IP, UDP, GRH or LRH
// length by the layers below).
func (b *BTH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	net, udp, rdAs := b.csumNet, b.csumUDP, b.DecodeRDAs
	*b = BTH{csumNet: net, csumUDP: udp, DecodeRDAs: rdAs}
	if len(data) < BTHLen {
		df.SetTruncated()
		return fmt.Errorf("bth: %w: %d bytes, need %d", ErrTruncated, len(data), BTHLen)
	}
	b.Opcode = Opcode(data[0])
	b.SolicitedEvent = data[1]&0x80 != 0
	b.MigReq = data[1]&0x40 != 0
	b.PadCnt = (data[1] >> 4) & 0x3
	b.TVer = data[1] & 0xF
	b.PKey = binary.BigEndian.Uint16(data[2:4])
	b.FECN = data[4]&0x80 != 0
	b.BECN = data[4]&0x40 != 0
	b.Resv6 = data[4] & 0x3F
	b.DestQP = uint32(data[5])<<16 | uint32(data[6])<<8 | uint32(data[7])
	b.AckReq = data[8]&0x80 != 0
	b.Resv7 = data[8] & 0x7F
	b.PSN = uint32(data[9])<<16 | uint32(data[10])<<8 | uint32(data[11])
	b.Contents = data[:BTHLen]

	b.Truncated = isTruncated(df)
	body := data[BTHLen:]
	if !b.Truncated {
		if len(body) < ICRCLen {
			return fmt.Errorf("bth: %w: no room for the ICRC (%d bytes after the BTH)", ErrTruncated, len(body))
		}
		end := len(body) - ICRCLen
		b.Trailer = body[end:]
		b.covered = data[:BTHLen+end]
		body = body[:end]
		b.DC = b.decodesAsDC(body, false)
		hl := b.HeaderLen()
		if len(body) < hl {
			b.Payload = body
			return fmt.Errorf("bth: %w: %s needs %d bytes of extension headers, have %d", ErrTruncated, b.OpcodeName(), hl, len(body))
		}
		if int(b.PadCnt) > len(body)-hl {
			b.Payload = body
			return fmt.Errorf("bth: %w: PadCnt %d but %d bytes after the extension headers", ErrBadHeader, b.PadCnt, len(body)-hl)
		}
		b.Pad = body[len(body)-int(b.PadCnt):]
		body = body[:len(body)-int(b.PadCnt)]
	} else {
		b.DC = b.decodesAsDC(body, true)
	}
	b.Payload = body
	b.buildChain()
	return nil
}

// buildChain records the sequence of layers after the BTH.
func (b *BTH) buildChain() {
	hs := b.Headers()
	n := copy(b.chain[:], hs)
	hl := b.HeaderLen()
	if len(b.Payload) > hl {
		b.chain[n] = gopacket.LayerTypePayload
		if b.carriesMAD() {
			b.chain[n] = LayerTypeMAD
		}
		n++
	}
	b.nChain = uint8(n)
}

// carriesMAD reports whether the payload is a management datagram: the
// packet goes to QP0/QP1 or, for datagrams, comes from QP0/QP1 (DETH SrcQP).
func (b *BTH) carriesMAD() bool {
	if !b.Opcode.Known() {
		return false
	}
	if b.DestQP <= 1 {
		return true
	}
	off := int(b.info().dethOff)
	if off < 0 || len(b.Payload) < off+DETHLen {
		return false
	}
	return get24(b.Payload[off+5:off+8]) <= 1
}

// IsMAD reports whether the payload of this packet is a management
// datagram (QP0/QP1 traffic).
func (b *BTH) IsMAD() bool { return b.carriesMAD() }

// SerializeTo writes the BTH. With FixLengths, PadCnt is set and pad
// bytes inserted so the payload ends on a 4-byte boundary; the bytes
// already in b must then end with the 4-byte ICRC (serialize an ICRC
// layer last, followed by a VCRC layer for native IB: with
// gopacket.SerializeLayers the BTH sees that a VCRC was serialized). The
// pad bytes come from Pad when it holds PadCnt bytes, zeros otherwise.
// Without FixLengths, PadCnt is written as it is, and the Pad bytes are
// inserted before the ICRC (and VCRC) layers when Pad holds PadCnt bytes,
// as after decoding; otherwise the payload must include the pad. With ComputeChecksums and a network layer set by
// SetNetworkLayerForChecksum, the ICRC is computed (RoCE v2); RoCE v1 and
// native IB compute it in GRH and LRH, whose SerializeTo runs later.
func (b *BTH) SerializeTo(buf gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if b.DestQP > 0xFFFFFF || b.PSN > 0xFFFFFF {
		return fmt.Errorf("bth: %w: DestQP 0x%x, PSN 0x%x (24 bits)", ErrFieldRange, b.DestQP, b.PSN)
	}
	if b.PadCnt > 3 || b.TVer > 0xF || b.Resv6 > 0x3F || b.Resv7 > 0x7F {
		return fmt.Errorf("bth: %w: PadCnt %d, TVer %d", ErrFieldRange, b.PadCnt, b.TVer)
	}
	if err := b.addMissingICRC(buf); err != nil {
		return err
	}
	if opts.FixLengths {
		if err := b.fixPad(buf); err != nil {
			return err
		}
	} else if b.PadCnt > 0 && len(b.Pad) == int(b.PadCnt) {
		// A decoded packet: its payload layer excludes the pad.
		if err := b.insertPad(buf, serializedTrailer(buf)); err != nil {
			return err
		}
	}
	h, err := buf.PrependBytes(BTHLen)
	if err != nil {
		return err
	}
	h[0] = byte(b.Opcode)
	h[1] = b.PadCnt<<4 | b.TVer
	if b.SolicitedEvent {
		h[1] |= 0x80
	}
	if b.MigReq {
		h[1] |= 0x40
	}
	binary.BigEndian.PutUint16(h[2:4], b.PKey)
	h[4] = b.Resv6
	if b.FECN {
		h[4] |= 0x80
	}
	if b.BECN {
		h[4] |= 0x40
	}
	put24(h[5:8], b.DestQP)
	h[8] = b.Resv7
	if b.AckReq {
		h[8] |= 0x80
	}
	put24(h[9:12], b.PSN)
	if opts.ComputeChecksums && b.csumNet != nil {
		return b.fillICRCv2(buf.Bytes(), opts)
	}
	return nil
}

// addMissingICRC appends the 4 ICRC bytes (zero until computed) when
// gopacket.SerializeLayers serialized the layers after the BTH and none of
// them was an ICRC: the pad and the ICRC would otherwise take the place
// of the payload's last bytes. A BTH decoded from a packet cut by the
// capture (Truncated) had no ICRC and gets none.
func (b *BTH) addMissingICRC(buf gopacket.SerializeBuffer) error {
	if b.Truncated || len(buf.Layers()) == 0 || serializedTrailer(buf) > 0 {
		return nil
	}
	t, err := buf.AppendBytes(ICRCLen)
	if err != nil {
		return err
	}
	clear(t)
	return nil
}

// fixPad inserts pad bytes between the payload and the ICRC so that the
// payload is 4-byte aligned, and sets PadCnt.
func (b *BTH) fixPad(buf gopacket.SerializeBuffer) error {
	trailer := ICRCLen
	if serializedVCRC(buf) {
		trailer += VCRCLen
	}
	if len(buf.Bytes()) < trailer {
		return fmt.Errorf("bth: %w: FixLengths needs the ICRC serialized after the payload", ErrBadHeader)
	}
	body := len(buf.Bytes()) - trailer
	b.PadCnt = uint8((4 - body%4) % 4)
	return b.insertPad(buf, trailer)
}

// insertPad inserts PadCnt pad bytes in front of the last trailer bytes of
// buf. The pad bytes are taken from Pad when it has the right length (a
// decoded packet re-serializes to the same bytes), zeros otherwise.
func (b *BTH) insertPad(buf gopacket.SerializeBuffer, trailer int) error {
	pad := int(b.PadCnt)
	if pad == 0 {
		return nil
	}
	body := len(buf.Bytes()) - trailer
	if _, err := buf.AppendBytes(pad); err != nil {
		return err
	}
	cur := buf.Bytes()
	copy(cur[body+pad:], cur[body:body+trailer])
	if len(b.Pad) == pad {
		copy(cur[body:body+pad], b.Pad)
		return nil
	}
	for i := body; i < body+pad; i++ {
		cur[i] = 0
	}
	return nil
}

// serializedTrailer returns the length of the ICRC and VCRC layers that
// gopacket.SerializeLayers has already serialized into buf.
func serializedTrailer(buf gopacket.SerializeBuffer) int {
	ls, n := buf.Layers(), 0
	if len(ls) > 0 && ls[0] == LayerTypeVCRC {
		ls, n = ls[1:], VCRCLen
	}
	if len(ls) > 0 && ls[0] == LayerTypeICRC {
		n += ICRCLen
	}
	return n
}

// serializedVCRC reports whether the first layer serialized into buf (the
// last of the packet) is a VCRC: a native IB packet, whose ICRC is followed
// by the VCRC. gopacket.SerializeLayers records the layers it serializes.
func serializedVCRC(buf gopacket.SerializeBuffer) bool {
	ls := buf.Layers()
	return len(ls) > 0 && ls[0] == LayerTypeVCRC
}

func put24(b []byte, v uint32) {
	b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v)
}

func get24(b []byte) uint32 {
	return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
}

// isTruncated reads the truncation flag the layers below may have set.
func isTruncated(df gopacket.DecodeFeedback) bool {
	switch v := df.(type) {
	case *gopacket.DecodingLayerParser:
		return v.Truncated
	case gopacket.Packet:
		return v.Metadata().Truncated
	case interface{ IsTruncated() bool }:
		return v.IsTruncated()
	}
	return false
}
