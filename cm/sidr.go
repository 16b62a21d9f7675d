package cm

import (
	"fmt"
	"strconv"
)

const (
	sidrReqFixedLen = 16
	sidrRepFixedLen = 96
)

// Room for private data in the SIDR messages.
const (
	SIDRReqPrivateDataLen = DataLen - sidrReqFixedLen
	SIDRRepPrivateDataLen = DataLen - sidrRepFixedLen
)

// SIDRRequest is the SIDR_REQ message (attribute 0x0017, IBTA 12.11.1):
// service ID resolution, the UD counterpart of a REQ ("which QP and Q_Key
// serve this ServiceID?"). The RDMA CM sends it for its UDP port space.
//
//	 0 RequestID(32)
//	 4 PKey(16) reserved(16)
//	 8 ServiceID(64)
//	16 PrivateData(216 bytes)
type SIDRRequest struct {
	RequestID uint32
	PKey      uint16
	ServiceID ServiceID
	// PrivateData aliases the decoded data (216 bytes on the wire).
	PrivateData []byte
}

// AttributeID returns AttrSIDRRequest.
func (m *SIDRRequest) AttributeID() AttributeID { return AttrSIDRRequest }

// IPPrivateData decodes the RDMA CM header at the start of PrivateData,
// as ConnectRequest.IPPrivateData does.
func (m *SIDRRequest) IPPrivateData() (IPPrivateData, bool) {
	if !m.ServiceID.IsRDMACM() {
		return IPPrivateData{}, false
	}
	p, err := DecodeIPPrivateData(m.PrivateData)
	return p, err == nil
}

// DecodeFromBytes implements Message.
func (m *SIDRRequest) DecodeFromBytes(data []byte) error {
	*m = SIDRRequest{}
	ok, err := checkLen(AttrSIDRRequest, data, sidrReqFixedLen)
	if !ok {
		return err
	}
	m.RequestID = be32(data[0:])
	m.PKey = be16(data[4:])
	m.ServiceID = ServiceID(be64(data[8:]))
	m.PrivateData = tail(data, sidrReqFixedLen, DataLen)
	return err
}

func (m *SIDRRequest) encode(b []byte) error {
	c := fieldChecker{msg: AttrSIDRRequest}
	c.room("PrivateData", m.PrivateData, SIDRReqPrivateDataLen)
	if c.err != nil {
		return c.err
	}
	put32(b[0:], m.RequestID)
	put16(b[4:], m.PKey)
	put64(b[8:], uint64(m.ServiceID))
	copy(b[sidrReqFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *SIDRRequest) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *SIDRRequest) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the SIDR_REQ.
func (m *SIDRRequest) String() string {
	return fmt.Sprintf("SIDR_REQ RequestID=0x%08x ServiceID=%s PKey=0x%04x", m.RequestID, m.ServiceID, m.PKey)
}

// SIDRReply is the SIDR_REP message (attribute 0x0018, IBTA 12.11.2): the
// answer to a SIDR_REQ.
//
//	 0 RequestID(32)
//	 4 Status(8) AdditionalInfoLength(8) VendorID[23:8](16)
//	 8 QPN(24) VendorID[7:0](8)
//	12 ServiceID(64)
//	20 QKey(32)
//	24 AdditionalInfo(72 bytes: a ClassPortInfo when Status is redirect)
//	96 PrivateData(136 bytes)
type SIDRReply struct {
	RequestID            uint32
	Status               SIDRStatus
	AdditionalInfoLength uint8
	VendorID             uint32 // 24 bits
	QPN                  uint32 // 24 bits
	ServiceID            ServiceID
	QKey                 uint32
	// AdditionalInfo aliases the decoded data (72 bytes on the wire).
	AdditionalInfo []byte
	// PrivateData aliases the decoded data (136 bytes on the wire).
	PrivateData []byte
}

// SIDRStatus is the status of a SIDR_REP.
type SIDRStatus uint8

// SIDR_REP statuses.
const (
	SIDRSuccess               SIDRStatus = 0 // QPN and QKey are valid
	SIDRServiceIDNotSupported SIDRStatus = 1
	SIDRRejected              SIDRStatus = 2
	SIDRNoQP                  SIDRStatus = 3
	SIDRRedirect              SIDRStatus = 4 // AdditionalInfo holds a ClassPortInfo
	SIDRUnsupportedVersion    SIDRStatus = 5
)

// String returns the meaning of the status or "SIDRStatus(N)".
func (s SIDRStatus) String() string {
	switch s {
	case SIDRSuccess:
		return "success"
	case SIDRServiceIDNotSupported:
		return "service ID not supported"
	case SIDRRejected:
		return "rejected"
	case SIDRNoQP:
		return "no QP"
	case SIDRRedirect:
		return "redirect"
	case SIDRUnsupportedVersion:
		return "unsupported class version"
	}
	return "SIDRStatus(" + strconv.Itoa(int(s)) + ")"
}

// AttributeID returns AttrSIDRReply.
func (m *SIDRReply) AttributeID() AttributeID { return AttrSIDRReply }

// DecodeFromBytes implements Message.
func (m *SIDRReply) DecodeFromBytes(data []byte) error {
	*m = SIDRReply{}
	ok, err := checkLen(AttrSIDRReply, data, sidrRepFixedLen)
	if !ok {
		return err
	}
	m.RequestID = be32(data[0:])
	m.Status = SIDRStatus(data[4])
	m.AdditionalInfoLength = data[5]
	m.VendorID = uint32(be16(data[6:]))<<8 | uint32(data[11])
	m.QPN = be24(data[8:])
	m.ServiceID = ServiceID(be64(data[12:]))
	m.QKey = be32(data[20:])
	m.AdditionalInfo = data[24 : 24+ARILen]
	m.PrivateData = tail(data, sidrRepFixedLen, DataLen)
	return err
}

func (m *SIDRReply) encode(b []byte) error {
	c := fieldChecker{msg: AttrSIDRReply}
	c.bits("VendorID", uint64(m.VendorID), 24)
	c.bits("QPN", uint64(m.QPN), 24)
	c.room("AdditionalInfo", m.AdditionalInfo, ARILen)
	c.room("PrivateData", m.PrivateData, SIDRRepPrivateDataLen)
	if c.err != nil {
		return c.err
	}
	put32(b[0:], m.RequestID)
	b[4] = byte(m.Status)
	b[5] = m.AdditionalInfoLength
	put16(b[6:], uint16(m.VendorID>>8))
	put24(b[8:], m.QPN)
	b[11] = byte(m.VendorID)
	put64(b[12:], uint64(m.ServiceID))
	put32(b[20:], m.QKey)
	copy(b[24:24+ARILen], m.AdditionalInfo)
	copy(b[sidrRepFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *SIDRReply) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *SIDRReply) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the SIDR_REP.
func (m *SIDRReply) String() string {
	return fmt.Sprintf("SIDR_REP RequestID=0x%08x %s QPN=0x%06x QKey=0x%08x ServiceID=%s",
		m.RequestID, m.Status, m.QPN, m.QKey, m.ServiceID)
}
