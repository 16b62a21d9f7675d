package cm

import (
	"fmt"
	"strconv"
)

const mraFixedLen = 10

// MraPrivateDataLen is the room for private data in an MRA.
const MraPrivateDataLen = DataLen - mraFixedLen

// MessageReceiptAck is the MRA message (attribute 0x0011, IBTA 12.6.6):
// "your REQ, REP or LAP arrived; the answer will take ServiceTimeout".
//
//	 0 LocalCommID(32)
//	 4 RemoteCommID(32)
//	 8 MessageMRAed(2) reserved(6) ServiceTimeout(5) reserved(3)
//	10 PrivateData(222 bytes)
type MessageReceiptAck struct {
	LocalCommID    uint32
	RemoteCommID   uint32
	MessageMRAed   MRAedMessage
	ServiceTimeout uint8 // 5 bits, see TimeoutDuration
	// PrivateData aliases the decoded data (222 bytes on the wire).
	PrivateData []byte
}

// MRAedMessage is the 2-bit MessageMRAed field of an MRA.
type MRAedMessage uint8

// What an MRA acknowledges.
const (
	MRAedREQ MRAedMessage = 0
	MRAedREP MRAedMessage = 1
	MRAedLAP MRAedMessage = 2
)

// String returns "REQ", "REP", "LAP" or the number.
func (r MRAedMessage) String() string {
	switch r {
	case MRAedREQ:
		return "REQ"
	case MRAedREP:
		return "REP"
	case MRAedLAP:
		return "LAP"
	}
	return "MRAedMessage(" + strconv.Itoa(int(r)) + ")"
}

// AttributeID returns AttrMessageReceiptAck.
func (m *MessageReceiptAck) AttributeID() AttributeID { return AttrMessageReceiptAck }

// DecodeFromBytes implements Message.
func (m *MessageReceiptAck) DecodeFromBytes(data []byte) error {
	*m = MessageReceiptAck{}
	ok, err := checkLen(AttrMessageReceiptAck, data, mraFixedLen)
	if !ok {
		return err
	}
	m.LocalCommID = be32(data[0:])
	m.RemoteCommID = be32(data[4:])
	m.MessageMRAed = MRAedMessage(data[8] >> 6)
	m.ServiceTimeout = data[9] >> 3
	m.PrivateData = tail(data, mraFixedLen, DataLen)
	return err
}

func (m *MessageReceiptAck) encode(b []byte) error {
	c := fieldChecker{msg: AttrMessageReceiptAck}
	c.bits("MessageMRAed", uint64(m.MessageMRAed), 2)
	c.bits("ServiceTimeout", uint64(m.ServiceTimeout), 5)
	c.room("PrivateData", m.PrivateData, MraPrivateDataLen)
	if c.err != nil {
		return c.err
	}
	put32(b[0:], m.LocalCommID)
	put32(b[4:], m.RemoteCommID)
	b[8] = byte(m.MessageMRAed) << 6
	b[9] = m.ServiceTimeout << 3
	copy(b[mraFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *MessageReceiptAck) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *MessageReceiptAck) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the MRA.
func (m *MessageReceiptAck) String() string {
	return fmt.Sprintf("MRA LocalCommID=0x%08x RemoteCommID=0x%08x for %s, service timeout %v",
		m.LocalCommID, m.RemoteCommID, m.MessageMRAed, TimeoutDuration(m.ServiceTimeout))
}
