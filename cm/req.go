package cm

import "fmt"

// reqFixedLen is the size of the REQ before its private data.
const reqFixedLen = 140

// Offsets of the two 44-byte paths of a REQ, which share one layout.
const (
	reqPrimaryPath   = 52
	reqAlternatePath = 96
	reqPathLen       = 44
)

// ReqPrivateDataLen is the room for private data in a REQ.
const ReqPrivateDataLen = DataLen - reqFixedLen

// ConnectRequest is the REQ message (attribute 0x0010, IBTA 12.6.5): the
// active side asks for a connection. Offsets from the start of the MAD data
// (add 24 for the MAD):
//
//	  0 LocalCommID(32)
//	  4 reserved(8) VendorID(24)
//	  8 ServiceID(64)
//	 16 LocalCAGUID(64)
//	 24 reserved(32)
//	 28 LocalQKey(32)
//	 32 LocalQPN(24) ResponderResources(8)
//	 36 LocalEECN(24) InitiatorDepth(8)
//	 40 RemoteEECN(24) RemoteCMResponseTimeout(5) TransportServiceType(2) EndToEndFlowControl(1)
//	 44 StartingPSN(24) LocalCMResponseTimeout(5) RetryCount(3)
//	 48 PKey(16) PathMTU(4) RDCExists(1) RNRRetryCount(3) MaxCMRetries(4) SRQ(1) ExtendedTransportType(3)
//	 52 PrimaryLocalLID(16) PrimaryRemoteLID(16)
//	 56 PrimaryLocalGID(128)
//	 72 PrimaryRemoteGID(128)
//	 88 PrimaryFlowLabel(20) reserved(6) PrimaryPacketRate(6)
//	 92 PrimaryTrafficClass(8) PrimaryHopLimit(8) PrimarySL(4) PrimarySubnetLocal(1) reserved(3)
//	    PrimaryLocalACKTimeout(5) reserved(3)
//	 96 the alternate path, same shape as 52–95 (Alternate…); bit 5 of
//	    byte 139 is SAPSupported
//	140 PrivateData(92 bytes)
//
// On RoCE the LIDs are placeholders (see LID.IsPlaceholder) and the GIDs,
// over IPv4, IPv4-mapped addresses. With the RDMA CM, the ServiceID names
// a port (ServiceID.IsRDMACM) and the private data starts with the IP
// header returned by IPPrivateData.
type ConnectRequest struct {
	LocalCommID             uint32
	VendorID                uint32 // 24 bits (enhanced connection establishment)
	ServiceID               ServiceID
	LocalCAGUID             GUID
	LocalQKey               uint32
	LocalQPN                uint32 // 24 bits
	ResponderResources      uint8
	LocalEECN               uint32 // 24 bits
	InitiatorDepth          uint8
	RemoteEECN              uint32 // 24 bits
	RemoteCMResponseTimeout uint8  // 5 bits, see TimeoutDuration
	TransportServiceType    TransportServiceType
	EndToEndFlowControl     bool
	StartingPSN             uint32 // 24 bits
	LocalCMResponseTimeout  uint8  // 5 bits
	RetryCount              uint8  // 3 bits
	PKey                    uint16
	PathMTU                 PathMTU // 4 bits
	RDCExists               bool
	RNRRetryCount           uint8 // 3 bits
	MaxCMRetries            uint8 // 4 bits
	SRQ                     bool
	ExtendedTransportType   uint8 // 3 bits: 1 = XRC

	PrimaryLocalLID        LID
	PrimaryRemoteLID       LID
	PrimaryLocalGID        GID
	PrimaryRemoteGID       GID
	PrimaryFlowLabel       uint32 // 20 bits
	PrimaryPacketRate      uint8  // 6 bits
	PrimaryTrafficClass    uint8
	PrimaryHopLimit        uint8
	PrimarySL              uint8 // 4 bits
	PrimarySubnetLocal     bool
	PrimaryLocalACKTimeout uint8 // 5 bits

	AlternateLocalLID        LID
	AlternateRemoteLID       LID
	AlternateLocalGID        GID
	AlternateRemoteGID       GID
	AlternateFlowLabel       uint32 // 20 bits
	AlternatePacketRate      uint8  // 6 bits
	AlternateTrafficClass    uint8
	AlternateHopLimit        uint8
	AlternateSL              uint8 // 4 bits
	AlternateSubnetLocal     bool
	AlternateLocalACKTimeout uint8 // 5 bits
	SAPSupported             bool

	// PrivateData is the consumer's data, 92 bytes on the wire (fewer when
	// the capture cut the MAD). It aliases the decoded data.
	PrivateData []byte
}

// AttributeID returns AttrConnectRequest.
func (m *ConnectRequest) AttributeID() AttributeID { return AttrConnectRequest }

// HasAlternatePath reports whether the REQ proposes an alternate path (its
// alternate local LID or GID is set).
func (m *ConnectRequest) HasAlternatePath() bool {
	return m.AlternateLocalLID != 0 || !m.AlternateLocalGID.IsZero()
}

// IPPrivateData decodes the RDMA CM header at the start of PrivateData. It
// reports false when the ServiceID is not of the RDMA CM form or the
// private data is too short.
func (m *ConnectRequest) IPPrivateData() (IPPrivateData, bool) {
	if !m.ServiceID.IsRDMACM() {
		return IPPrivateData{}, false
	}
	p, err := DecodeIPPrivateData(m.PrivateData)
	return p, err == nil
}

// DecodeFromBytes implements Message.
func (m *ConnectRequest) DecodeFromBytes(data []byte) error {
	*m = ConnectRequest{}
	ok, err := checkLen(AttrConnectRequest, data, reqFixedLen)
	if !ok {
		return err
	}
	m.LocalCommID = be32(data[0:])
	m.VendorID = be24(data[5:])
	m.ServiceID = ServiceID(be64(data[8:]))
	m.LocalCAGUID = GUID(be64(data[16:]))
	m.LocalQKey = be32(data[28:])
	m.LocalQPN = be24(data[32:])
	m.ResponderResources = data[35]
	m.LocalEECN = be24(data[36:])
	m.InitiatorDepth = data[39]
	m.RemoteEECN = be24(data[40:])
	m.RemoteCMResponseTimeout = data[43] >> 3
	m.TransportServiceType = TransportServiceType(data[43]>>1) & 0x3
	m.EndToEndFlowControl = bit(data[43], 0x01)
	m.StartingPSN = be24(data[44:])
	m.LocalCMResponseTimeout = data[47] >> 3
	m.RetryCount = data[47] & 0x7
	m.PKey = be16(data[48:])
	m.PathMTU = PathMTU(data[50] >> 4)
	m.RDCExists = bit(data[50], 0x08)
	m.RNRRetryCount = data[50] & 0x7
	m.MaxCMRetries = data[51] >> 4
	m.SRQ = bit(data[51], 0x08)
	m.ExtendedTransportType = data[51] & 0x7

	p, a := data[reqPrimaryPath:], data[reqAlternatePath:]
	m.PrimaryLocalLID, m.PrimaryRemoteLID, m.PrimaryLocalGID, m.PrimaryRemoteGID = pathAddresses(p)
	m.PrimaryFlowLabel, m.PrimaryPacketRate, m.PrimaryTrafficClass, m.PrimaryHopLimit,
		m.PrimarySL, m.PrimarySubnetLocal, m.PrimaryLocalACKTimeout = pathAttributes(p)
	m.AlternateLocalLID, m.AlternateRemoteLID, m.AlternateLocalGID, m.AlternateRemoteGID = pathAddresses(a)
	m.AlternateFlowLabel, m.AlternatePacketRate, m.AlternateTrafficClass, m.AlternateHopLimit,
		m.AlternateSL, m.AlternateSubnetLocal, m.AlternateLocalACKTimeout = pathAttributes(a)
	m.SAPSupported = bit(data[reqAlternatePath+43], 0x04)

	m.PrivateData = tail(data, reqFixedLen, DataLen)
	return err
}

func (m *ConnectRequest) check() error {
	c := fieldChecker{msg: AttrConnectRequest}
	c.bits("VendorID", uint64(m.VendorID), 24)
	c.bits("LocalQPN", uint64(m.LocalQPN), 24)
	c.bits("LocalEECN", uint64(m.LocalEECN), 24)
	c.bits("RemoteEECN", uint64(m.RemoteEECN), 24)
	c.bits("RemoteCMResponseTimeout", uint64(m.RemoteCMResponseTimeout), 5)
	c.bits("TransportServiceType", uint64(m.TransportServiceType), 2)
	c.bits("StartingPSN", uint64(m.StartingPSN), 24)
	c.bits("LocalCMResponseTimeout", uint64(m.LocalCMResponseTimeout), 5)
	c.bits("RetryCount", uint64(m.RetryCount), 3)
	c.bits("PathMTU", uint64(m.PathMTU), 4)
	c.bits("RNRRetryCount", uint64(m.RNRRetryCount), 3)
	c.bits("MaxCMRetries", uint64(m.MaxCMRetries), 4)
	c.bits("ExtendedTransportType", uint64(m.ExtendedTransportType), 3)
	checkPath(&c, "Primary", m.PrimaryFlowLabel, m.PrimaryPacketRate, m.PrimarySL, m.PrimaryLocalACKTimeout)
	checkPath(&c, "Alternate", m.AlternateFlowLabel, m.AlternatePacketRate, m.AlternateSL, m.AlternateLocalACKTimeout)
	c.room("PrivateData", m.PrivateData, ReqPrivateDataLen)
	return c.err
}

func (m *ConnectRequest) encode(b []byte) error {
	if err := m.check(); err != nil {
		return err
	}
	put32(b[0:], m.LocalCommID)
	put24(b[5:], m.VendorID)
	put64(b[8:], uint64(m.ServiceID))
	put64(b[16:], uint64(m.LocalCAGUID))
	put32(b[28:], m.LocalQKey)
	put24(b[32:], m.LocalQPN)
	b[35] = m.ResponderResources
	put24(b[36:], m.LocalEECN)
	b[39] = m.InitiatorDepth
	put24(b[40:], m.RemoteEECN)
	b[43] = m.RemoteCMResponseTimeout<<3 | byte(m.TransportServiceType)<<1 | b2u(m.EndToEndFlowControl, 0x01)
	put24(b[44:], m.StartingPSN)
	b[47] = m.LocalCMResponseTimeout<<3 | m.RetryCount
	put16(b[48:], m.PKey)
	b[50] = byte(m.PathMTU)<<4 | b2u(m.RDCExists, 0x08) | m.RNRRetryCount
	b[51] = m.MaxCMRetries<<4 | b2u(m.SRQ, 0x08) | m.ExtendedTransportType

	p, a := b[reqPrimaryPath:], b[reqAlternatePath:]
	putPathAddresses(p, m.PrimaryLocalLID, m.PrimaryRemoteLID, &m.PrimaryLocalGID, &m.PrimaryRemoteGID)
	putPathAttributes(p, m.PrimaryFlowLabel, m.PrimaryPacketRate, m.PrimaryTrafficClass, m.PrimaryHopLimit,
		m.PrimarySL, m.PrimarySubnetLocal, m.PrimaryLocalACKTimeout)
	putPathAddresses(a, m.AlternateLocalLID, m.AlternateRemoteLID, &m.AlternateLocalGID, &m.AlternateRemoteGID)
	putPathAttributes(a, m.AlternateFlowLabel, m.AlternatePacketRate, m.AlternateTrafficClass, m.AlternateHopLimit,
		m.AlternateSL, m.AlternateSubnetLocal, m.AlternateLocalACKTimeout)
	b[reqAlternatePath+43] |= b2u(m.SAPSupported, 0x04)

	copy(b[reqFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *ConnectRequest) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *ConnectRequest) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the REQ: IDs, QPN, starting PSN, MTU and the primary
// path's GIDs.
func (m *ConnectRequest) String() string {
	return fmt.Sprintf("REQ LocalCommID=0x%08x ServiceID=%s QPN=0x%06x PSN=0x%06x MTU=%s %s LID %s->%s GID %s->%s",
		m.LocalCommID, m.ServiceID, m.LocalQPN, m.StartingPSN, m.PathMTU, m.TransportServiceType,
		m.PrimaryLocalLID, m.PrimaryRemoteLID, m.PrimaryLocalGID, m.PrimaryRemoteGID)
}

// The primary and the alternate path of a REQ (bytes 52–95 and 96–139)
// share one 44-byte layout,
//
//	 0 LocalLID(16) RemoteLID(16)
//	 4 LocalGID(128)
//	20 RemoteGID(128)
//	36 FlowLabel(20) reserved(6) PacketRate(6)
//	40 TrafficClass(8) HopLimit(8) SL(4) SubnetLocal(1) reserved(3)
//	   LocalACKTimeout(5) reserved(3)
//
// which the functions below read, write and range-check for both. Each
// takes and returns the fields as values (not a struct or pointers) and is
// small enough to inline, so a REQ decodes and encodes as fast as when
// each path had its own code.

// pathAddresses reads the LIDs and GIDs of a path.
func pathAddresses(p []byte) (localLID, remoteLID LID, localGID, remoteGID GID) {
	_ = p[35]
	return LID(be16(p[0:])), LID(be16(p[2:])), GID(p[4:20]), GID(p[20:36])
}

// pathAttributes reads the rest of a path.
func pathAttributes(p []byte) (flowLabel uint32, packetRate, trafficClass, hopLimit, sl uint8, subnetLocal bool, localACKTimeout uint8) {
	_ = p[reqPathLen-1]
	return be32(p[36:]) >> 12, p[39] & 0x3F, p[40], p[41], p[42] >> 4, bit(p[42], 0x08), p[43] >> 3
}

// putPathAddresses writes the LIDs and GIDs of a path.
func putPathAddresses(p []byte, localLID, remoteLID LID, localGID, remoteGID *GID) {
	_ = p[35]
	put16(p[0:], uint16(localLID))
	put16(p[2:], uint16(remoteLID))
	copy(p[4:20], localGID[:])
	copy(p[20:36], remoteGID[:])
}

// putPathAttributes writes the rest of a path into zeroed bytes.
func putPathAttributes(p []byte, flowLabel uint32, packetRate, trafficClass, hopLimit, sl uint8, subnetLocal bool, localACKTimeout uint8) {
	_ = p[reqPathLen-1]
	put32(p[36:], flowLabel<<12|uint32(packetRate))
	p[40] = trafficClass
	p[41] = hopLimit
	p[42] = sl<<4 | b2u(subnetLocal, 0x08)
	p[43] = localACKTimeout << 3
}

// checkPath range-checks the fields of a path; prefix ("Primary",
// "Alternate") names them in the error.
func checkPath(c *fieldChecker, prefix string, flowLabel uint32, packetRate, sl, localACKTimeout uint8) {
	c.pathBits(prefix, "FlowLabel", uint64(flowLabel), 20)
	c.pathBits(prefix, "PacketRate", uint64(packetRate), 6)
	c.pathBits(prefix, "SL", uint64(sl), 4)
	c.pathBits(prefix, "LocalACKTimeout", uint64(localACKTimeout), 5)
}
