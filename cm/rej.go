package cm

import (
	"fmt"
	"strconv"
)

const (
	rejFixedLen = 84
	// ARILen is the room for additional reject information in a REJ (and
	// for additional information in an APR and a SIDR_REP).
	ARILen = 72
)

// RejPrivateDataLen is the room for private data in a REJ.
const RejPrivateDataLen = DataLen - rejFixedLen

// ConnectReject is the REJ message (attribute 0x0012, IBTA 12.6.7): either
// side refuses a REQ or REP (or tells of a stale connection).
//
//	 0 LocalCommID(32)
//	 4 RemoteCommID(32)
//	 8 MessageRejected(2) reserved(6) RejectInfoLength(7) reserved(1)
//	10 Reason(16)
//	12 ARI(72 bytes, the first RejectInfoLength meaningful)
//	84 PrivateData(148 bytes)
type ConnectReject struct {
	LocalCommID      uint32
	RemoteCommID     uint32
	MessageRejected  RejectedMessage
	RejectInfoLength uint8 // 7 bits, at most ARILen
	Reason           RejectReason
	// ARI is the additional reject information, 72 bytes on the wire; the
	// meaningful part is ARIBytes. Both alias the decoded data.
	ARI []byte
	// PrivateData aliases the decoded data (148 bytes on the wire).
	PrivateData []byte
}

// RejectedMessage is the 2-bit MessageRejected field of a REJ.
type RejectedMessage uint8

// What a REJ rejects.
const (
	RejectedREQ   RejectedMessage = 0
	RejectedREP   RejectedMessage = 1
	RejectedOther RejectedMessage = 2 // no message, or another one
)

// String returns "REQ", "REP", "other" or the number.
func (r RejectedMessage) String() string {
	switch r {
	case RejectedREQ:
		return "REQ"
	case RejectedREP:
		return "REP"
	case RejectedOther:
		return "other"
	}
	return "RejectedMessage(" + strconv.Itoa(int(r)) + ")"
}

// RejectReason is the 16-bit reason of a REJ (IBTA 12.6.7.2).
type RejectReason uint16

// REJ reasons. The comments give the ARI each carries, when it has one.
const (
	RejectNoQP                           RejectReason = 1
	RejectNoEEC                          RejectReason = 2
	RejectNoResources                    RejectReason = 3
	RejectTimeout                        RejectReason = 4 // ARI: the REJ sender's port GUID
	RejectUnsupportedRequest             RejectReason = 5
	RejectInvalidCommID                  RejectReason = 6
	RejectInvalidCommInstance            RejectReason = 7
	RejectInvalidServiceID               RejectReason = 8
	RejectInvalidTransportType           RejectReason = 9
	RejectStaleConnection                RejectReason = 10
	RejectRDCNotExist                    RejectReason = 11
	RejectPrimaryRemoteGID               RejectReason = 12 // ARI: an acceptable GID
	RejectPrimaryRemoteLID               RejectReason = 13 // ARI: an acceptable LID
	RejectInvalidPrimarySL               RejectReason = 14 // ARI: an acceptable SL
	RejectInvalidPrimaryTrafficClass     RejectReason = 15
	RejectInvalidPrimaryHopLimit         RejectReason = 16
	RejectInvalidPrimaryPacketRate       RejectReason = 17
	RejectAlternateRemoteGID             RejectReason = 18
	RejectAlternateRemoteLID             RejectReason = 19
	RejectInvalidAlternateSL             RejectReason = 20
	RejectInvalidAlternateTrafficClass   RejectReason = 21
	RejectInvalidAlternateHopLimit       RejectReason = 22
	RejectInvalidAlternatePacketRate     RejectReason = 23
	RejectPortCMRedirect                 RejectReason = 24 // ARI: a ClassPortInfo
	RejectPortRedirect                   RejectReason = 25 // ARI: a GID for a new REQ
	RejectInvalidPathMTU                 RejectReason = 26 // ARI: an acceptable MTU
	RejectInsufficientResponderResources RejectReason = 27
	RejectConsumer                       RejectReason = 28 // the application said no (private data explains)
	RejectInvalidRNRRetryCount           RejectReason = 29
	RejectDuplicateLocalCommID           RejectReason = 30
	RejectInvalidClassVersion            RejectReason = 31 // ARI: the highest class version supported
	RejectInvalidPrimaryFlowLabel        RejectReason = 32
	RejectInvalidAlternateFlowLabel      RejectReason = 33
	RejectReserved34                     RejectReason = 34 // reserved: no published meaning found
	RejectVendorOptionNotSupported       RejectReason = 35 // enhanced connection establishment
)

func rejectReasonName(r RejectReason) string {
	switch r {
	case RejectNoQP:
		return "no QP available"
	case RejectNoEEC:
		return "no EEC available"
	case RejectNoResources:
		return "no resources available"
	case RejectTimeout:
		return "timeout"
	case RejectUnsupportedRequest:
		return "unsupported request"
	case RejectInvalidCommID:
		return "invalid communication ID"
	case RejectInvalidCommInstance:
		return "invalid communication instance"
	case RejectInvalidServiceID:
		return "invalid service ID"
	case RejectInvalidTransportType:
		return "invalid transport service type"
	case RejectStaleConnection:
		return "stale connection"
	case RejectRDCNotExist:
		return "RDC does not exist"
	case RejectPrimaryRemoteGID:
		return "primary remote port GID rejected"
	case RejectPrimaryRemoteLID:
		return "primary remote port LID rejected"
	case RejectInvalidPrimarySL:
		return "invalid primary SL"
	case RejectInvalidPrimaryTrafficClass:
		return "invalid primary traffic class"
	case RejectInvalidPrimaryHopLimit:
		return "invalid primary hop limit"
	case RejectInvalidPrimaryPacketRate:
		return "invalid primary packet rate"
	case RejectAlternateRemoteGID:
		return "alternate remote port GID rejected"
	case RejectAlternateRemoteLID:
		return "alternate remote port LID rejected"
	case RejectInvalidAlternateSL:
		return "invalid alternate SL"
	case RejectInvalidAlternateTrafficClass:
		return "invalid alternate traffic class"
	case RejectInvalidAlternateHopLimit:
		return "invalid alternate hop limit"
	case RejectInvalidAlternatePacketRate:
		return "invalid alternate packet rate"
	case RejectPortCMRedirect:
		return "port and CM redirection"
	case RejectPortRedirect:
		return "port redirection"
	case RejectInvalidPathMTU:
		return "invalid path MTU"
	case RejectInsufficientResponderResources:
		return "insufficient responder resources"
	case RejectConsumer:
		return "consumer reject"
	case RejectInvalidRNRRetryCount:
		return "RNR retry count rejected"
	case RejectDuplicateLocalCommID:
		return "duplicate local communication ID"
	case RejectInvalidClassVersion:
		return "unsupported class version"
	case RejectInvalidPrimaryFlowLabel:
		return "invalid primary flow label"
	case RejectInvalidAlternateFlowLabel:
		return "invalid alternate flow label"
	case RejectReserved34:
		return "reserved (34)"
	case RejectVendorOptionNotSupported:
		return "vendor option not supported"
	}
	return ""
}

// String returns the IBTA meaning ("stale connection", "consumer reject")
// or "RejectReason(N)".
func (r RejectReason) String() string {
	if s := rejectReasonName(r); s != "" {
		return s
	}
	return "RejectReason(" + strconv.Itoa(int(r)) + ")"
}

// AttributeID returns AttrConnectReject.
func (m *ConnectReject) AttributeID() AttributeID { return AttrConnectReject }

// ARIBytes returns the meaningful part of the ARI: its first
// RejectInfoLength bytes (fewer when the data was cut).
func (m *ConnectReject) ARIBytes() []byte { return m.ARI[:min(int(m.RejectInfoLength), len(m.ARI))] }

// DecodeFromBytes implements Message.
func (m *ConnectReject) DecodeFromBytes(data []byte) error {
	*m = ConnectReject{}
	ok, err := checkLen(AttrConnectReject, data, rejFixedLen)
	if !ok {
		return err
	}
	m.LocalCommID = be32(data[0:])
	m.RemoteCommID = be32(data[4:])
	m.MessageRejected = RejectedMessage(data[8] >> 6)
	m.RejectInfoLength = data[9] >> 1
	m.Reason = RejectReason(be16(data[10:]))
	m.ARI = data[12 : 12+ARILen]
	m.PrivateData = tail(data, rejFixedLen, DataLen)
	return err
}

func (m *ConnectReject) encode(b []byte) error {
	c := fieldChecker{msg: AttrConnectReject}
	c.bits("MessageRejected", uint64(m.MessageRejected), 2)
	c.bits("RejectInfoLength", uint64(m.RejectInfoLength), 7)
	c.room("ARI", m.ARI, ARILen)
	c.room("PrivateData", m.PrivateData, RejPrivateDataLen)
	if c.err != nil {
		return c.err
	}
	put32(b[0:], m.LocalCommID)
	put32(b[4:], m.RemoteCommID)
	b[8] = byte(m.MessageRejected) << 6
	b[9] = m.RejectInfoLength << 1
	put16(b[10:], uint16(m.Reason))
	copy(b[12:12+ARILen], m.ARI)
	copy(b[rejFixedLen:], m.PrivateData)
	return nil
}

// AppendBinary implements Message.
func (m *ConnectReject) AppendBinary(b []byte) ([]byte, error) { return appendMessage(b, m) }

// MarshalBinary implements Message.
func (m *ConnectReject) MarshalBinary() ([]byte, error) { return appendMessage(nil, m) }

// String summarizes the REJ.
func (m *ConnectReject) String() string {
	return fmt.Sprintf("REJ LocalCommID=0x%08x RemoteCommID=0x%08x rejects %s: %s (%d)",
		m.LocalCommID, m.RemoteCommID, m.MessageRejected, m.Reason, uint16(m.Reason))
}
