package cm

import (
	"fmt"
	"slices"
)

// Sizes of the subnet administration MAD parts.
const (
	// RMPPHeaderLen is the size of the RMPP header after the common header.
	RMPPHeaderLen = 12
	// SAHeaderLen is the size of the SA header after the RMPP header.
	SAHeaderLen = 20
	// SADataLen is the size of the SA data (one record, or a segment of
	// several) after the two headers.
	SADataLen = DataLen - RMPPHeaderLen - SAHeaderLen
)

// SubnAdm is the class-specific part of a subnet administration MAD
// (class 0x03): the RMPP header and the SA header (IBTA 13.6.2 and 15.2.1),
// then the SA data. Offsets from the start of the MAD:
//
//	24 RMPPVersion(8) RMPPType(8) RRespTime(5) RMPPFlags(3) RMPPStatus(8)
//	28 Data1(32): segment number
//	32 Data2(32): payload length (first segment) or new window last (ACK)
//	36 SM_Key(64)
//	44 AttributeOffset(16) reserved(16)
//	48 ComponentMask(64)
//	56 SA data (200 bytes)
type SubnAdm struct {
	RMPP            RMPPHeader
	SMKey           uint64
	AttributeOffset uint16 // size of one record, in 8-byte words
	Reserved        uint16
	ComponentMask   uint64
	// Data is the SA data (a PathRecord, …); it aliases the decoded bytes.
	Data []byte
}

// RMPPHeader is the header of the reliable multi-packet protocol, used by
// the SA to send tables larger than one MAD.
type RMPPHeader struct {
	Version  uint8
	Type     RMPPType
	RespTime uint8 // 5 bits
	Flags    RMPPFlags
	Status   uint8
	Data1    uint32
	Data2    uint32
}

// RMPPType is the type of an RMPP packet.
type RMPPType uint8

// RMPP packet types.
const (
	RMPPTypeNone  RMPPType = 0 // not an RMPP packet
	RMPPTypeData  RMPPType = 1
	RMPPTypeAck   RMPPType = 2
	RMPPTypeStop  RMPPType = 3
	RMPPTypeAbort RMPPType = 4
)

// String returns "none", "DATA", "ACK", "STOP", "ABORT" or the number.
func (t RMPPType) String() string {
	switch t {
	case RMPPTypeNone:
		return "none"
	case RMPPTypeData:
		return "DATA"
	case RMPPTypeAck:
		return "ACK"
	case RMPPTypeStop:
		return "STOP"
	case RMPPTypeAbort:
		return "ABORT"
	}
	return fmt.Sprintf("RMPPType(%d)", uint8(t))
}

// RMPPFlags are the 3 flag bits of an RMPP header.
type RMPPFlags uint8

// RMPP flags.
const (
	RMPPActive RMPPFlags = 0x1
	RMPPFirst  RMPPFlags = 0x2
	RMPPLast   RMPPFlags = 0x4
)

// subnAdmFixedLen is the size of the RMPP and SA headers.
const subnAdmFixedLen = RMPPHeaderLen + SAHeaderLen

// DecodeFromBytes decodes the data of an SA MAD (the bytes after the
// common header). Data aliases data and is shorter than SADataLen when the
// MAD was cut; fewer than 32 bytes leave s zeroed. Either way of being
// short gives an error wrapping ErrTruncated.
func (s *SubnAdm) DecodeFromBytes(data []byte) error {
	*s = SubnAdm{}
	if len(data) < subnAdmFixedLen {
		return fmt.Errorf("cm: %w: SA headers: %d bytes, need %d", ErrTruncated, len(data), subnAdmFixedLen)
	}
	s.RMPP = RMPPHeader{
		Version:  data[0],
		Type:     RMPPType(data[1]),
		RespTime: data[2] >> 3,
		Flags:    RMPPFlags(data[2] & 0x7),
		Status:   data[3],
		Data1:    be32(data[4:]),
		Data2:    be32(data[8:]),
	}
	s.SMKey = be64(data[12:])
	s.AttributeOffset = be16(data[20:])
	s.Reserved = be16(data[22:])
	s.ComponentMask = be64(data[24:])
	s.Data = data[subnAdmFixedLen:min(len(data), DataLen)]
	if len(data) < DataLen {
		return fmt.Errorf("cm: %w: SA MAD data: %d bytes, need %d", ErrTruncated, len(data), DataLen)
	}
	return nil
}

// AppendBinary appends the 232 bytes of MAD data (headers, then Data
// zero-padded to SADataLen) to b: the MAD.Data of an SA MAD to build.
func (s *SubnAdm) AppendBinary(b []byte) ([]byte, error) {
	if s.RMPP.RespTime > 0x1F || s.RMPP.Flags > 0x7 {
		return b, fmt.Errorf("cm: %w: RMPP RRespTime %d (5 bits), flags %d (3 bits)", ErrFieldRange, s.RMPP.RespTime, s.RMPP.Flags)
	}
	if len(s.Data) > SADataLen {
		return b, fmt.Errorf("cm: %w: SA data is %d bytes, room for %d", ErrFieldRange, len(s.Data), SADataLen)
	}
	n := len(b)
	b = slices.Grow(b, DataLen)[:n+DataLen]
	d := b[n:]
	clear(d)
	d[0] = s.RMPP.Version
	d[1] = byte(s.RMPP.Type)
	d[2] = s.RMPP.RespTime<<3 | byte(s.RMPP.Flags)
	d[3] = s.RMPP.Status
	put32(d[4:], s.RMPP.Data1)
	put32(d[8:], s.RMPP.Data2)
	put64(d[12:], s.SMKey)
	put16(d[20:], s.AttributeOffset)
	put16(d[22:], s.Reserved)
	put64(d[24:], s.ComponentMask)
	copy(d[subnAdmFixedLen:], s.Data)
	return b, nil
}

// Sizes of the performance management MAD parts.
const (
	// PerfReservedLen is the reserved area after the common header.
	PerfReservedLen = 40
	// PerfDataLen is the size of the PerfMgt attribute data.
	PerfDataLen = DataLen - PerfReservedLen
)

// Perf is the class-specific part of a performance management MAD (class
// 0x04, IBTA 16.1.1): 40 reserved bytes, then the 192 bytes of the
// attribute (PortCounters, …). Both slices alias the decoded data.
type Perf struct {
	Reserved []byte
	Data     []byte
}

// DecodeFromBytes decodes the data of a PerfMgt MAD (the bytes after the
// common header). Short data gives shorter slices and an error wrapping
// ErrTruncated.
func (p *Perf) DecodeFromBytes(data []byte) error {
	data = data[:min(len(data), DataLen)]
	p.Reserved = data[:min(len(data), PerfReservedLen)]
	p.Data = tail(data, PerfReservedLen, DataLen)
	if len(data) < DataLen {
		return fmt.Errorf("cm: %w: PerfMgt MAD data: %d bytes, need %d", ErrTruncated, len(data), DataLen)
	}
	return nil
}
