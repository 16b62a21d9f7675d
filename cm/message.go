package cm

import (
	"encoding/binary"
	"fmt"
	"slices"
)

// Message is one of the eleven CM messages, the 232 data bytes of a MAD of
// class CM: *ConnectRequest, *MessageReceiptAck, *ConnectReject,
// *ConnectReply, *ReadyToUse, *DisconnectRequest, *DisconnectReply,
// *SIDRRequest, *SIDRReply, *LoadAlternatePath, *AlternatePathResponse.
// Use a type switch to reach the fields.
//
// DecodeFromBytes decodes the 232 bytes after the MAD header, resetting
// every field; the slices (PrivateData, ARI, AdditionalInfo) alias data.
// Data cut short by a capture's snap length still decodes when the
// message's fixed fields are present: PrivateData is then shorter than its
// room and the error wraps ErrTruncated. Shorter data leaves the message
// zeroed, also with ErrTruncated.
//
// AppendBinary appends the exact 232-byte form (reserved bits zero,
// private data zero-padded to its room); a field too wide for its bits or
// private data longer than its room gives an error wrapping ErrFieldRange.
type Message interface {
	AttributeID() AttributeID
	DecodeFromBytes(data []byte) error
	AppendBinary(b []byte) ([]byte, error)
	MarshalBinary() ([]byte, error)
	String() string
	// encode writes the message into b, exactly DataLen zeroed bytes.
	encode(b []byte) error
}

// Compile-time checks.
var (
	_ Message = (*ConnectRequest)(nil)
	_ Message = (*MessageReceiptAck)(nil)
	_ Message = (*ConnectReject)(nil)
	_ Message = (*ConnectReply)(nil)
	_ Message = (*ReadyToUse)(nil)
	_ Message = (*DisconnectRequest)(nil)
	_ Message = (*DisconnectReply)(nil)
	_ Message = (*SIDRRequest)(nil)
	_ Message = (*SIDRReply)(nil)
	_ Message = (*LoadAlternatePath)(nil)
	_ Message = (*AlternatePathResponse)(nil)
)

// NewMessage returns a new, zero message for a CM attribute ID, or nil
// when the attribute is not one of the eleven messages.
func NewMessage(id AttributeID) Message {
	switch id {
	case AttrConnectRequest:
		return &ConnectRequest{}
	case AttrMessageReceiptAck:
		return &MessageReceiptAck{}
	case AttrConnectReject:
		return &ConnectReject{}
	case AttrConnectReply:
		return &ConnectReply{}
	case AttrReadyToUse:
		return &ReadyToUse{}
	case AttrDisconnectRequest:
		return &DisconnectRequest{}
	case AttrDisconnectReply:
		return &DisconnectReply{}
	case AttrSIDRRequest:
		return &SIDRRequest{}
	case AttrSIDRReply:
		return &SIDRReply{}
	case AttrLoadAlternatePath:
		return &LoadAlternatePath{}
	case AttrAlternatePathResponse:
		return &AlternatePathResponse{}
	}
	return nil
}

// DecodeMessage decodes the data of a CM MAD (the bytes after the 24-byte
// header) as the message its attribute ID names. It allocates the message
// and nothing else. An attribute that is not a message gives an error
// wrapping ErrUnknownAttribute; for truncated data see Message.
func DecodeMessage(id AttributeID, data []byte) (Message, error) {
	m := NewMessage(id)
	if m == nil {
		return nil, fmt.Errorf("cm: %w: %s is not a CM message", ErrUnknownAttribute, id)
	}
	err := m.DecodeFromBytes(data)
	return m, err
}

// messageName returns the short name of a message attribute ("REQ").
func messageName(id AttributeID) string { return AttributeName(ClassCM, id) }

// checkLen checks data against the fixed part of a message. It returns
// (true, nil) for a whole message, (true, err) when the fixed fields are
// present but the tail is cut, and (false, err) when the fixed fields are
// not all there.
func checkLen(id AttributeID, data []byte, fixed int) (bool, error) {
	if len(data) >= DataLen {
		return true, nil
	}
	err := fmt.Errorf("cm: %w: %s: %d bytes, need %d", ErrTruncated, messageName(id), len(data), DataLen)
	return len(data) >= fixed, err
}

// tail returns data[from:min(to, len(data))], or nil when from is past
// the end: the part of a variable field that survived truncation.
func tail(data []byte, from, to int) []byte {
	if from >= len(data) {
		return nil
	}
	return data[from:min(to, len(data))]
}

// appendMessage grows b by DataLen zero bytes and encodes m into them.
func appendMessage(b []byte, m Message) ([]byte, error) {
	n := len(b)
	b = slices.Grow(b, DataLen)[:n+DataLen]
	clear(b[n:])
	if err := m.encode(b[n:]); err != nil {
		return b[:n], err
	}
	return b, nil
}

// fieldChecker collects the first field that does not fit its bits.
type fieldChecker struct {
	msg AttributeID
	err error
}

func (c *fieldChecker) bits(name string, v uint64, width uint) {
	if c.err == nil && v>>width != 0 {
		c.err = fmt.Errorf("cm: %w: %s %s 0x%x exceeds %d bits", ErrFieldRange, messageName(c.msg), name, v, width)
	}
}

func (c *fieldChecker) room(name string, b []byte, n int) {
	if c.err == nil && len(b) > n {
		c.err = fmt.Errorf("cm: %w: %s %s is %d bytes, room for %d", ErrFieldRange, messageName(c.msg), name, len(b), n)
	}
}

func be16(b []byte) uint16 { return binary.BigEndian.Uint16(b) }
func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }
func be64(b []byte) uint64 { return binary.BigEndian.Uint64(b) }
func be24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

func put16(b []byte, v uint16) { binary.BigEndian.PutUint16(b, v) }
func put32(b []byte, v uint32) { binary.BigEndian.PutUint32(b, v) }
func put64(b []byte, v uint64) { binary.BigEndian.PutUint64(b, v) }
func put24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

func bit(b byte, mask byte) bool { return b&mask != 0 }

func b2u(v bool, mask byte) byte {
	if v {
		return mask
	}
	return 0
}
