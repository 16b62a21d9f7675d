package layers

import (
	"encoding/binary"
	"fmt"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
)

// LRHLen is the length of the Local Route Header.
const LRHLen = 8

// LNH values: what follows the LRH.
const (
	LNHRaw       = 0 // raw packet (non-IBA transport)
	LNHIPv6      = 1 // raw IPv6 packet
	LNHIBALocal  = 2 // BTH follows
	LNHIBAGlobal = 3 // GRH then BTH follow
)

// LRH is the InfiniBand Local Route Header, the first header of a native
// IB packet (LINKTYPE_INFINIBAND, or the IB records of an ERF capture).
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  VL   | LVer  |  SL   |rsv|LNH|        Destination LID        |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	| Reserved|  PktLen (4-byte words)|          Source LID         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// PktLen counts the packet from the LRH through the ICRC; the 2-byte VCRC
// follows. Decoding bounds the payload by PktLen and keeps the VCRC in
// Trailer (nil when the capture cut it off).
type LRH struct {
	gplayers.BaseLayer
	VL        uint8 // virtual lane (VL15: subnet management)
	LVer      uint8
	SL        uint8 // service level
	Reserved2 uint8
	LNH       uint8  // link next header
	DLID      uint16 // destination LID
	Reserved5 uint8
	PktLen    uint16 // 11 bits, in 4-byte words
	SLID      uint16 // source LID

	// Trailer is the 2-byte VCRC as on the wire, or nil when the capture
	// cut the packet short.
	Trailer []byte
	packet  []byte // LRH through ICRC: what the VCRC covers
}

var (
	_ gopacket.DecodingLayer     = (*LRH)(nil)
	_ gopacket.SerializableLayer = (*LRH)(nil)
)

// LayerType returns LayerTypeLRH.
func (l *LRH) LayerType() gopacket.LayerType { return LayerTypeLRH }

// CanDecode returns LayerTypeLRH.
func (l *LRH) CanDecode() gopacket.LayerClass { return LayerTypeLRH }

// NextLayerType follows LNH: GRH, BTH, IPv6 or raw payload.
func (l *LRH) NextLayerType() gopacket.LayerType {
	switch l.LNH {
	case LNHIBAGlobal:
		return LayerTypeGRH
	case LNHIBALocal:
		return LayerTypeBTH
	case LNHIPv6:
		return gplayers.LayerTypeIPv6
	}
	return gopacket.LayerTypePayload
}

// VCRCValue returns the VCRC on the wire and whether it was captured.
func (l *LRH) VCRCValue() (uint16, bool) {
	if len(l.Trailer) != VCRCLen {
		return 0, false
	}
	return binary.LittleEndian.Uint16(l.Trailer), true
}

// CheckVCRC verifies the VCRC of the decoded packet.
func (l *LRH) CheckVCRC() VCRCResult {
	v, ok := l.VCRCValue()
	if !ok {
		return VCRCResult{Status: ICRCUnverifiable}
	}
	exp := ComputeVCRC(l.packet)
	if exp != v {
		return VCRCResult{Status: ICRCBad, Value: v, Expected: exp}
	}
	return VCRCResult{Status: ICRCOK, Value: v, Expected: exp}
}

// DecodeFromBytes decodes the LRH and bounds the packet by PktLen.
func (l *LRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*l = LRH{}
	if len(data) < LRHLen {
		df.SetTruncated()
		return fmt.Errorf("lrh: %w: %d bytes, need %d", ErrTruncated, len(data), LRHLen)
	}
	l.VL, l.LVer = data[0]>>4, data[0]&0xF
	l.SL, l.Reserved2, l.LNH = data[1]>>4, (data[1]>>2)&3, data[1]&3
	l.DLID = binary.BigEndian.Uint16(data[2:4])
	l.Reserved5 = data[4] >> 3
	l.PktLen = binary.BigEndian.Uint16(data[4:6]) & 0x7FF
	l.SLID = binary.BigEndian.Uint16(data[6:8])
	l.Contents = data[:LRHLen]
	end := int(l.PktLen) * 4
	if end < LRHLen {
		l.Payload = data[LRHLen:]
		return fmt.Errorf("lrh: %w: PktLen %d words is shorter than the LRH", ErrBadHeader, l.PktLen)
	}
	switch {
	case len(data) >= end+VCRCLen:
		l.Trailer = data[end : end+VCRCLen]
		l.packet = data[:end]
		l.Payload = data[LRHLen:end]
	case len(data) >= end:
		l.packet = data[:end]
		l.Payload = data[LRHLen:end]
	default:
		df.SetTruncated()
		l.Payload = data[LRHLen:]
	}
	// With a GRH, PktLen and the GRH's PayLen measure the same bytes (the
	// GRH's payload runs to the ICRC's end): when they disagree, bytes of
	// the packet belong to no header.
	if l.LNH == LNHIBAGlobal && len(l.Payload) >= GRHLen && l.packet != nil {
		if payLen := int(binary.BigEndian.Uint16(l.Payload[4:6])); payLen != end-LRHLen-GRHLen {
			return fmt.Errorf("lrh: %w: PktLen %d words leaves %d bytes after the GRH, its PayLen says %d", ErrBadHeader, l.PktLen, end-LRHLen-GRHLen, payLen)
		}
	}
	return nil
}

// SerializeTo writes the LRH. With FixLengths, PktLen is set from the bytes
// already in b, which must then end with the ICRC and VCRC; with
// ComputeChecksums the ICRC (over LRH or GRH, as LNH says) and then the
// VCRC are computed over the finished packet.
func (l *LRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if l.VL > 0xF || l.LVer > 0xF || l.SL > 0xF || l.LNH > 3 || l.Reserved2 > 3 || l.Reserved5 > 0x1F || l.PktLen > 0x7FF {
		return fmt.Errorf("lrh: %w", ErrFieldRange)
	}
	if opts.FixLengths {
		n := len(b.Bytes()) + LRHLen - VCRCLen
		if n%4 != 0 || n/4 > 0x7FF {
			return fmt.Errorf("lrh: %w: packet of %d bytes is not a whole number of words", ErrBadHeader, n)
		}
		l.PktLen = uint16(n / 4)
	}
	h, err := b.PrependBytes(LRHLen)
	if err != nil {
		return err
	}
	h[0] = l.VL<<4 | l.LVer
	h[1] = l.SL<<4 | l.Reserved2<<2 | l.LNH
	binary.BigEndian.PutUint16(h[2:4], l.DLID)
	binary.BigEndian.PutUint16(h[4:6], uint16(l.Reserved5)<<11|l.PktLen)
	binary.BigEndian.PutUint16(h[6:8], l.SLID)
	if !opts.ComputeChecksums {
		return nil
	}
	pkt := b.Bytes()
	end := int(l.PktLen) * 4
	// Raw packets (LNH 0, 1) carry no ICRC, only the VCRC.
	minEnd := LRHLen
	switch l.LNH {
	case LNHIBALocal:
		minEnd = LRHLen + BTHLen + ICRCLen
	case LNHIBAGlobal:
		minEnd = LRHLen + GRHLen + BTHLen + ICRCLen
	}
	if len(pkt) < end+VCRCLen || end < minEnd {
		return fmt.Errorf("lrh: %w: ComputeChecksums needs the ICRC and VCRC serialized after the payload", ErrBadHeader)
	}
	var crc uint32
	switch l.LNH {
	case LNHIBALocal:
		crc, err = ComputeICRC(NetworkLRH, pkt[:LRHLen], nil, pkt[LRHLen:end-ICRCLen])
	case LNHIBAGlobal:
		crc, err = ComputeICRC(NetworkGRH, pkt[LRHLen:LRHLen+GRHLen], nil, pkt[LRHLen+GRHLen:end-ICRCLen])
	}
	if err != nil {
		return err
	}
	if l.LNH >= LNHIBALocal {
		binary.LittleEndian.PutUint32(pkt[end-ICRCLen:end], crc)
	}
	binary.LittleEndian.PutUint16(pkt[end:end+VCRCLen], ComputeVCRC(pkt[:end]))
	return nil
}

// VCRCResult is the outcome of a VCRC check.
type VCRCResult struct {
	Status   ICRCStatus
	Value    uint16
	Expected uint16
}

// VCRC is the 2-byte variant CRC ending a native IB packet. Value is as
// read least-significant byte first; gopacket.NewPacket checks it (Status,
// Expected). Serializing writes Value; LRH.SerializeTo with
// ComputeChecksums fills in the right one.
type VCRC struct {
	gplayers.BaseLayer
	Value    uint16
	Status   ICRCStatus
	Expected uint16
}

var (
	_ gopacket.DecodingLayer     = (*VCRC)(nil)
	_ gopacket.SerializableLayer = (*VCRC)(nil)
)

// LayerType returns LayerTypeVCRC.
func (v *VCRC) LayerType() gopacket.LayerType { return LayerTypeVCRC }

// CanDecode returns LayerTypeVCRC.
func (v *VCRC) CanDecode() gopacket.LayerClass { return LayerTypeVCRC }

// NextLayerType returns gopacket.LayerTypeZero.
func (v *VCRC) NextLayerType() gopacket.LayerType { return gopacket.LayerTypeZero }

// DecodeFromBytes decodes a 2-byte VCRC.
func (v *VCRC) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	*v = VCRC{}
	if len(data) < VCRCLen {
		df.SetTruncated()
		return fmt.Errorf("vcrc: %w: %d bytes, need %d", ErrTruncated, len(data), VCRCLen)
	}
	v.Value = binary.LittleEndian.Uint16(data)
	v.Contents, v.Payload = data[:VCRCLen], data[VCRCLen:]
	return nil
}

// SerializeTo prepends the VCRC holding Value.
func (v *VCRC) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	p, err := b.PrependBytes(VCRCLen)
	if err != nil {
		return err
	}
	binary.LittleEndian.PutUint16(p, v.Value)
	return nil
}
