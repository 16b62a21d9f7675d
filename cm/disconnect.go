package cm

import "fmt"

const (
	dreqFixedLen = 12
	drepFixedLen = 8
)

// Room for private data in the disconnection messages.
const (
	DreqPrivateDataLen = DataLen - dreqFixedLen
	DrepPrivateDataLen = DataLen - drepFixedLen
)

// DisconnectRequest is the DREQ message (attribute 0x0015, IBTA 12.6.10):
// either side asks to release the connection.
//
//	 0 LocalCommID(32)
//	 4 RemoteCommID(32)
//	 8 RemoteQPN(24) reserved(8)   (the QPN, or EECN for RD, of the receiver)
//	12 PrivateData(220 bytes)
type DisconnectRequest struct {
	LocalCommID  uint32
	RemoteCommID uint32
	RemoteQPN    uint32 // 24 bits: remote QPN or EECN
	// PrivateData aliases the decoded data (220 bytes on the wire).
	PrivateData []byte
}

// AttributeID returns AttrDisconnectRequest.
func (m *DisconnectRequest) AttributeID() AttributeID { return AttrDisconnectRequest }

// DecodeFromBytes implements Message.
func (m *DisconnectRequest) DecodeFromBytes(data []byte) error {
	*m = DisconnectRequest{}
	ok, err := checkLen(AttrDisconnectRequest, data, dreqFixedLen)
	if !ok {
		return err
	}
	m.LocalCommID = be32(data[0:])
	m.RemoteCommID = be32(data[4:])
	m.RemoteQPN = be24(data[8:])
	m.PrivateData = tail(data, dreqFixedLen, DataLen)
	return err
}

func (m *DisconnectRequest) encode(b []byte) error {
	c := fieldChecker{msg: AttrDisconnectRequest}
	c.bits("RemoteQPN", uint64(m.RemoteQPN), 24)
	c.room("PrivateData", m.PrivateData, DreqPrivateDataLen)
	if c.err != nil {
		return c.err
	}
	put32(b[0:], m.LocalCommID)
	put32(b[4:], m.RemoteCommID)
	put24(b[8:], m.RemoteQPN)
	copy(b[dreqFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *DisconnectRequest) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *DisconnectRequest) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the DREQ.
func (m *DisconnectRequest) String() string {
	return fmt.Sprintf("DREQ LocalCommID=0x%08x RemoteCommID=0x%08x RemoteQPN=0x%06x",
		m.LocalCommID, m.RemoteCommID, m.RemoteQPN)
}

// DisconnectReply is the DREP message (attribute 0x0016, IBTA 12.6.11):
// the answer to a DREQ.
//
//	0 LocalCommID(32)
//	4 RemoteCommID(32)
//	8 PrivateData(224 bytes)
type DisconnectReply struct {
	LocalCommID  uint32
	RemoteCommID uint32
	// PrivateData aliases the decoded data (224 bytes on the wire).
	PrivateData []byte
}

// AttributeID returns AttrDisconnectReply.
func (m *DisconnectReply) AttributeID() AttributeID { return AttrDisconnectReply }

// DecodeFromBytes implements Message.
func (m *DisconnectReply) DecodeFromBytes(data []byte) error {
	*m = DisconnectReply{}
	ok, err := checkLen(AttrDisconnectReply, data, drepFixedLen)
	if !ok {
		return err
	}
	m.LocalCommID = be32(data[0:])
	m.RemoteCommID = be32(data[4:])
	m.PrivateData = tail(data, drepFixedLen, DataLen)
	return err
}

func (m *DisconnectReply) encode(b []byte) error {
	c := fieldChecker{msg: AttrDisconnectReply}
	c.room("PrivateData", m.PrivateData, DrepPrivateDataLen)
	if c.err != nil {
		return c.err
	}
	put32(b[0:], m.LocalCommID)
	put32(b[4:], m.RemoteCommID)
	copy(b[drepFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *DisconnectReply) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *DisconnectReply) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the DREP.
func (m *DisconnectReply) String() string {
	return fmt.Sprintf("DREP LocalCommID=0x%08x RemoteCommID=0x%08x", m.LocalCommID, m.RemoteCommID)
}
