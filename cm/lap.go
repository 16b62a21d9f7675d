package cm

import "fmt"

const lapFixedLen = 64

// LapPrivateDataLen is the room for private data in a LAP.
const LapPrivateDataLen = DataLen - lapFixedLen

// LoadAlternatePath is the LAP message (attribute 0x0019, IBTA 12.8.1):
// the active side proposes a new alternate path for automatic path
// migration.
//
//	 0 LocalCommID(32)
//	 4 RemoteCommID(32)
//	 8 reserved(32)
//	12 RemoteQPN(24) RemoteCMResponseTimeout(5) reserved(3)
//	16 reserved(32)
//	20 AlternateLocalLID(16) AlternateRemoteLID(16)
//	24 AlternateLocalGID(128)
//	40 AlternateRemoteGID(128)
//	56 AlternateFlowLabel(20) reserved(4) AlternateTrafficClass(8)
//	60 AlternateHopLimit(8) reserved(2) AlternatePacketRate(6)
//	   AlternateSL(4) AlternateSubnetLocal(1) reserved(3)
//	   AlternateLocalACKTimeout(5) reserved(3)
//	64 PrivateData(168 bytes)
type LoadAlternatePath struct {
	LocalCommID              uint32
	RemoteCommID             uint32
	RemoteQPN                uint32 // 24 bits: remote QPN or EECN
	RemoteCMResponseTimeout  uint8  // 5 bits
	AlternateLocalLID        LID
	AlternateRemoteLID       LID
	AlternateLocalGID        GID
	AlternateRemoteGID       GID
	AlternateFlowLabel       uint32 // 20 bits
	AlternateTrafficClass    uint8
	AlternateHopLimit        uint8
	AlternatePacketRate      uint8 // 6 bits
	AlternateSL              uint8 // 4 bits
	AlternateSubnetLocal     bool
	AlternateLocalACKTimeout uint8 // 5 bits
	// PrivateData aliases the decoded data (168 bytes on the wire).
	PrivateData []byte
}

// AttributeID returns AttrLoadAlternatePath.
func (m *LoadAlternatePath) AttributeID() AttributeID { return AttrLoadAlternatePath }

// DecodeFromBytes implements Message.
func (m *LoadAlternatePath) DecodeFromBytes(data []byte) error {
	*m = LoadAlternatePath{}
	ok, err := checkLen(AttrLoadAlternatePath, data, lapFixedLen)
	if !ok {
		return err
	}
	m.LocalCommID = be32(data[0:])
	m.RemoteCommID = be32(data[4:])
	m.RemoteQPN = be24(data[12:])
	m.RemoteCMResponseTimeout = data[15] >> 3
	m.AlternateLocalLID = LID(be16(data[20:]))
	m.AlternateRemoteLID = LID(be16(data[22:]))
	m.AlternateLocalGID = GID(data[24:40])
	m.AlternateRemoteGID = GID(data[40:56])
	m.AlternateFlowLabel = be32(data[56:]) >> 12
	m.AlternateTrafficClass = data[59]
	m.AlternateHopLimit = data[60]
	m.AlternatePacketRate = data[61] & 0x3F
	m.AlternateSL = data[62] >> 4
	m.AlternateSubnetLocal = bit(data[62], 0x08)
	m.AlternateLocalACKTimeout = data[63] >> 3
	m.PrivateData = tail(data, lapFixedLen, DataLen)
	return err
}

func (m *LoadAlternatePath) encode(b []byte) error {
	c := fieldChecker{msg: AttrLoadAlternatePath}
	c.bits("RemoteQPN", uint64(m.RemoteQPN), 24)
	c.bits("RemoteCMResponseTimeout", uint64(m.RemoteCMResponseTimeout), 5)
	c.bits("AlternateFlowLabel", uint64(m.AlternateFlowLabel), 20)
	c.bits("AlternatePacketRate", uint64(m.AlternatePacketRate), 6)
	c.bits("AlternateSL", uint64(m.AlternateSL), 4)
	c.bits("AlternateLocalACKTimeout", uint64(m.AlternateLocalACKTimeout), 5)
	c.room("PrivateData", m.PrivateData, LapPrivateDataLen)
	if c.err != nil {
		return c.err
	}
	put32(b[0:], m.LocalCommID)
	put32(b[4:], m.RemoteCommID)
	put24(b[12:], m.RemoteQPN)
	b[15] = m.RemoteCMResponseTimeout << 3
	put16(b[20:], uint16(m.AlternateLocalLID))
	put16(b[22:], uint16(m.AlternateRemoteLID))
	copy(b[24:40], m.AlternateLocalGID[:])
	copy(b[40:56], m.AlternateRemoteGID[:])
	put32(b[56:], m.AlternateFlowLabel<<12|uint32(m.AlternateTrafficClass))
	b[60] = m.AlternateHopLimit
	b[61] = m.AlternatePacketRate
	b[62] = m.AlternateSL<<4 | b2u(m.AlternateSubnetLocal, 0x08)
	b[63] = m.AlternateLocalACKTimeout << 3
	copy(b[lapFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *LoadAlternatePath) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *LoadAlternatePath) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the LAP.
func (m *LoadAlternatePath) String() string {
	return fmt.Sprintf("LAP LocalCommID=0x%08x RemoteCommID=0x%08x RemoteQPN=0x%06x alternate LID %s->%s GID %s->%s",
		m.LocalCommID, m.RemoteCommID, m.RemoteQPN, m.AlternateLocalLID, m.AlternateRemoteLID,
		m.AlternateLocalGID, m.AlternateRemoteGID)
}
