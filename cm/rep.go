package cm

import (
	"fmt"
	"strconv"
)

const repFixedLen = 36

// RepPrivateDataLen is the room for private data in a REP.
const RepPrivateDataLen = DataLen - repFixedLen

// ConnectReply is the REP message (attribute 0x0013, IBTA 12.6.8): the
// passive side accepts a REQ and gives its own QPN and starting PSN.
//
//	 0 LocalCommID(32)
//	 4 RemoteCommID(32)
//	 8 LocalQKey(32)
//	12 LocalQPN(24) VendorID[23:16](8)
//	16 LocalEECN(24) VendorID[15:8](8)
//	20 StartingPSN(24) VendorID[7:0](8)
//	24 ResponderResources(8) InitiatorDepth(8)
//	   TargetACKDelay(5) FailoverAccepted(2) EndToEndFlowControl(1)
//	   RNRRetryCount(3) SRQ(1) reserved(4)
//	28 LocalCAGUID(64)
//	36 PrivateData(196 bytes)
type ConnectReply struct {
	LocalCommID         uint32
	RemoteCommID        uint32
	LocalQKey           uint32
	LocalQPN            uint32 // 24 bits
	LocalEECN           uint32 // 24 bits
	StartingPSN         uint32 // 24 bits
	VendorID            uint32 // 24 bits, spread over bytes 15, 19 and 23
	ResponderResources  uint8
	InitiatorDepth      uint8
	TargetACKDelay      uint8 // 5 bits, see TimeoutDuration
	FailoverAccepted    FailoverStatus
	EndToEndFlowControl bool
	RNRRetryCount       uint8 // 3 bits
	SRQ                 bool
	LocalCAGUID         GUID
	// PrivateData aliases the decoded data (196 bytes on the wire).
	PrivateData []byte
}

// FailoverStatus is the 2-bit FailoverAccepted field of a REP.
type FailoverStatus uint8

// Failover statuses.
const (
	FailoverAccepted          FailoverStatus = 0
	FailoverRejectedNoSupport FailoverStatus = 1 // failover not supported
	FailoverRejectedAltPath   FailoverStatus = 2 // alternate path rejected
)

// String returns "accepted", "not-supported", "alternate-rejected" or the
// number.
func (f FailoverStatus) String() string {
	switch f {
	case FailoverAccepted:
		return "accepted"
	case FailoverRejectedNoSupport:
		return "not-supported"
	case FailoverRejectedAltPath:
		return "alternate-rejected"
	}
	return "FailoverStatus(" + strconv.Itoa(int(f)) + ")"
}

// AttributeID returns AttrConnectReply.
func (m *ConnectReply) AttributeID() AttributeID { return AttrConnectReply }

// DecodeFromBytes implements Message.
func (m *ConnectReply) DecodeFromBytes(data []byte) error {
	*m = ConnectReply{}
	ok, err := checkLen(AttrConnectReply, data, repFixedLen)
	if !ok {
		return err
	}
	m.LocalCommID = be32(data[0:])
	m.RemoteCommID = be32(data[4:])
	m.LocalQKey = be32(data[8:])
	m.LocalQPN = be24(data[12:])
	m.LocalEECN = be24(data[16:])
	m.StartingPSN = be24(data[20:])
	m.VendorID = uint32(data[15])<<16 | uint32(data[19])<<8 | uint32(data[23])
	m.ResponderResources = data[24]
	m.InitiatorDepth = data[25]
	m.TargetACKDelay = data[26] >> 3
	m.FailoverAccepted = FailoverStatus(data[26]>>1) & 0x3
	m.EndToEndFlowControl = bit(data[26], 0x01)
	m.RNRRetryCount = data[27] >> 5
	m.SRQ = bit(data[27], 0x10)
	m.LocalCAGUID = GUID(be64(data[28:]))
	m.PrivateData = tail(data, repFixedLen, DataLen)
	return err
}

func (m *ConnectReply) encode(b []byte) error {
	c := fieldChecker{msg: AttrConnectReply}
	c.bits("LocalQPN", uint64(m.LocalQPN), 24)
	c.bits("LocalEECN", uint64(m.LocalEECN), 24)
	c.bits("StartingPSN", uint64(m.StartingPSN), 24)
	c.bits("VendorID", uint64(m.VendorID), 24)
	c.bits("TargetACKDelay", uint64(m.TargetACKDelay), 5)
	c.bits("FailoverAccepted", uint64(m.FailoverAccepted), 2)
	c.bits("RNRRetryCount", uint64(m.RNRRetryCount), 3)
	c.room("PrivateData", m.PrivateData, RepPrivateDataLen)
	if c.err != nil {
		return c.err
	}
	put32(b[0:], m.LocalCommID)
	put32(b[4:], m.RemoteCommID)
	put32(b[8:], m.LocalQKey)
	put24(b[12:], m.LocalQPN)
	b[15] = byte(m.VendorID >> 16)
	put24(b[16:], m.LocalEECN)
	b[19] = byte(m.VendorID >> 8)
	put24(b[20:], m.StartingPSN)
	b[23] = byte(m.VendorID)
	b[24] = m.ResponderResources
	b[25] = m.InitiatorDepth
	b[26] = m.TargetACKDelay<<3 | byte(m.FailoverAccepted)<<1 | b2u(m.EndToEndFlowControl, 0x01)
	b[27] = m.RNRRetryCount<<5 | b2u(m.SRQ, 0x10)
	put64(b[28:], uint64(m.LocalCAGUID))
	copy(b[repFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *ConnectReply) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *ConnectReply) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the REP.
func (m *ConnectReply) String() string {
	return fmt.Sprintf("REP LocalCommID=0x%08x RemoteCommID=0x%08x QPN=0x%06x PSN=0x%06x",
		m.LocalCommID, m.RemoteCommID, m.LocalQPN, m.StartingPSN)
}
