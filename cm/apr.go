package cm

import (
	"fmt"
	"strconv"
)

const aprFixedLen = 84

// AprPrivateDataLen is the room for private data in an APR.
const AprPrivateDataLen = DataLen - aprFixedLen

// AlternatePathResponse is the APR message (attribute 0x001A, IBTA
// 12.8.2): the answer to a LAP.
//
//	 0 LocalCommID(32)
//	 4 RemoteCommID(32)
//	 8 AdditionalInfoLength(8) APStatus(8) reserved(16)
//	12 AdditionalInfo(72 bytes)
//	84 PrivateData(148 bytes)
type AlternatePathResponse struct {
	LocalCommID          uint32
	RemoteCommID         uint32
	AdditionalInfoLength uint8
	APStatus             APStatus
	// AdditionalInfo aliases the decoded data (72 bytes on the wire).
	AdditionalInfo []byte
	// PrivateData aliases the decoded data (148 bytes on the wire).
	PrivateData []byte
}

// APStatus is the status of an APR.
type APStatus uint8

// APR statuses.
const (
	APPathLoaded        APStatus = 0
	APInvalidCommID     APStatus = 1
	APUnsupported       APStatus = 2 // alternate paths not supported
	APRejected          APStatus = 3
	APRedirect          APStatus = 4 // AdditionalInfo holds a ClassPortInfo
	APDuplicatePath     APStatus = 5 // the path is already the current one
	APInvalidQPN        APStatus = 6 // QPN/EECN does not match the connection
	APInvalidLID        APStatus = 7
	APInvalidGID        APStatus = 8
	APInvalidFlowLabel  APStatus = 9
	APInvalidTClass     APStatus = 10
	APInvalidHopLimit   APStatus = 11
	APInvalidPacketRate APStatus = 12
	APInvalidSL         APStatus = 13
)

// String returns the meaning of the status or "APStatus(N)".
func (s APStatus) String() string {
	switch s {
	case APPathLoaded:
		return "path loaded"
	case APInvalidCommID:
		return "invalid communication ID"
	case APUnsupported:
		return "unsupported request"
	case APRejected:
		return "rejected"
	case APRedirect:
		return "redirect"
	case APDuplicatePath:
		return "duplicate path"
	case APInvalidQPN:
		return "invalid QPN/EECN"
	case APInvalidLID:
		return "invalid LID"
	case APInvalidGID:
		return "invalid GID"
	case APInvalidFlowLabel:
		return "invalid flow label"
	case APInvalidTClass:
		return "invalid traffic class"
	case APInvalidHopLimit:
		return "invalid hop limit"
	case APInvalidPacketRate:
		return "invalid packet rate"
	case APInvalidSL:
		return "invalid SL"
	}
	return "APStatus(" + strconv.Itoa(int(s)) + ")"
}

// AttributeID returns AttrAlternatePathResponse.
func (m *AlternatePathResponse) AttributeID() AttributeID { return AttrAlternatePathResponse }

// DecodeFromBytes implements Message.
func (m *AlternatePathResponse) DecodeFromBytes(data []byte) error {
	*m = AlternatePathResponse{}
	ok, err := checkLen(AttrAlternatePathResponse, data, aprFixedLen)
	if !ok {
		return err
	}
	m.LocalCommID = be32(data[0:])
	m.RemoteCommID = be32(data[4:])
	m.AdditionalInfoLength = data[8]
	m.APStatus = APStatus(data[9])
	m.AdditionalInfo = data[12 : 12+ARILen]
	m.PrivateData = tail(data, aprFixedLen, DataLen)
	return err
}

func (m *AlternatePathResponse) encode(b []byte) error {
	c := fieldChecker{msg: AttrAlternatePathResponse}
	c.room("AdditionalInfo", m.AdditionalInfo, ARILen)
	c.room("PrivateData", m.PrivateData, AprPrivateDataLen)
	if c.err != nil {
		return c.err
	}
	put32(b[0:], m.LocalCommID)
	put32(b[4:], m.RemoteCommID)
	b[8] = m.AdditionalInfoLength
	b[9] = byte(m.APStatus)
	copy(b[12:12+ARILen], m.AdditionalInfo)
	copy(b[aprFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *AlternatePathResponse) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *AlternatePathResponse) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the APR.
func (m *AlternatePathResponse) String() string {
	return fmt.Sprintf("APR LocalCommID=0x%08x RemoteCommID=0x%08x %s", m.LocalCommID, m.RemoteCommID, m.APStatus)
}
