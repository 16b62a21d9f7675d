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

// messageType is everything the package knows about a CM message besides
// its fields: its attribute ID, short IBTA name, the size of its fixed
// fields (the rest of the 232 bytes is private data, or ARI and private
// data) and a constructor.
type messageType struct {
	id    AttributeID
	name  string
	fixed int
	new   func() Message
}

// messageTypes is the table of the CM messages (IBTA 12.6), indexed by
// attribute ID. It is the one place that maps an attribute ID to a
// message: NewMessage, DecodeMessage, MAD decoding and reuse, the fixed
// lengths and AttributeName for class CM all read it. Adding a message is
// one entry here (with its Attr* constant and its type).
var messageTypes = [...]messageType{
	AttrConnectRequest:        {AttrConnectRequest, "REQ", reqFixedLen, func() Message { return new(ConnectRequest) }},
	AttrMessageReceiptAck:     {AttrMessageReceiptAck, "MRA", mraFixedLen, func() Message { return new(MessageReceiptAck) }},
	AttrConnectReject:         {AttrConnectReject, "REJ", rejFixedLen, func() Message { return new(ConnectReject) }},
	AttrConnectReply:          {AttrConnectReply, "REP", repFixedLen, func() Message { return new(ConnectReply) }},
	AttrReadyToUse:            {AttrReadyToUse, "RTU", rtuFixedLen, func() Message { return new(ReadyToUse) }},
	AttrDisconnectRequest:     {AttrDisconnectRequest, "DREQ", dreqFixedLen, func() Message { return new(DisconnectRequest) }},
	AttrDisconnectReply:       {AttrDisconnectReply, "DREP", drepFixedLen, func() Message { return new(DisconnectReply) }},
	AttrSIDRRequest:           {AttrSIDRRequest, "SIDR_REQ", sidrReqFixedLen, func() Message { return new(SIDRRequest) }},
	AttrSIDRReply:             {AttrSIDRReply, "SIDR_REP", sidrRepFixedLen, func() Message { return new(SIDRReply) }},
	AttrLoadAlternatePath:     {AttrLoadAlternatePath, "LAP", lapFixedLen, func() Message { return new(LoadAlternatePath) }},
	AttrAlternatePathResponse: {AttrAlternatePathResponse, "APR", aprFixedLen, func() Message { return new(AlternatePathResponse) }},
}

// lookupMessage returns the table entry of a CM message, or nil when the
// attribute is not one.
func lookupMessage(id AttributeID) *messageType {
	if int(id) >= len(messageTypes) || messageTypes[id].new == nil {
		return nil
	}
	return &messageTypes[id]
}

// fixedLen returns the size of a message's fields before its private
// data, or DataLen for an attribute that is not a CM message.
func fixedLen(id AttributeID) int {
	if t := lookupMessage(id); t != nil {
		return t.fixed
	}
	return DataLen
}

// NewMessage returns a new, zero message for a CM attribute ID, or nil
// when the attribute is not one of the eleven messages.
func NewMessage(id AttributeID) Message {
	if t := lookupMessage(id); t != nil {
		return t.new()
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

// messageName returns the short name of a message attribute ("REQ"), or
// "0x%04x" for an attribute that is not a CM message.
func messageName(id AttributeID) string {
	if t := lookupMessage(id); t != nil {
		return t.name
	}
	return id.String()
}

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

// pathBits is bits for a field named prefix+name, the name built only
// for the error.
func (c *fieldChecker) pathBits(prefix, name string, v uint64, width uint) {
	if c.err == nil && v>>width != 0 {
		c.bits(prefix+name, v, width)
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
