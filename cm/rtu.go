package cm

import "fmt"

const rtuFixedLen = 8

// RtuPrivateDataLen is the room for private data in an RTU.
const RtuPrivateDataLen = DataLen - rtuFixedLen

// ReadyToUse is the RTU message (attribute 0x0014, IBTA 12.6.9): the
// active side confirms the REP; the connection is established.
//
//	0 LocalCommID(32)
//	4 RemoteCommID(32)
//	8 PrivateData(224 bytes)
type ReadyToUse struct {
	LocalCommID  uint32
	RemoteCommID uint32
	// PrivateData aliases the decoded data (224 bytes on the wire).
	PrivateData []byte
}

// AttributeID returns AttrReadyToUse.
func (m *ReadyToUse) AttributeID() AttributeID { return AttrReadyToUse }

// DecodeFromBytes implements Message.
func (m *ReadyToUse) DecodeFromBytes(data []byte) error {
	*m = ReadyToUse{}
	ok, err := checkLen(AttrReadyToUse, data, rtuFixedLen)
	if !ok {
		return err
	}
	m.LocalCommID = be32(data[0:])
	m.RemoteCommID = be32(data[4:])
	m.PrivateData = tail(data, rtuFixedLen, DataLen)
	return err
}

func (m *ReadyToUse) encode(b []byte) error {
	c := fieldChecker{msg: AttrReadyToUse}
	c.room("PrivateData", m.PrivateData, RtuPrivateDataLen)
	if c.err != nil {
		return c.err
	}
	put32(b[0:], m.LocalCommID)
	put32(b[4:], m.RemoteCommID)
	copy(b[rtuFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *ReadyToUse) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *ReadyToUse) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the RTU.
func (m *ReadyToUse) String() string {
	return fmt.Sprintf("RTU LocalCommID=0x%08x RemoteCommID=0x%08x", m.LocalCommID, m.RemoteCommID)
}
