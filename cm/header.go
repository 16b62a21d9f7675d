package cm

import (
	"encoding/binary"
	"fmt"
)

// Sizes of a management datagram.
const (
	// MADLen is the size of every InfiniBand MAD.
	MADLen = 256
	// HeaderLen is the size of the common MAD header.
	HeaderLen = 24
	// DataLen is the size of the MAD data after the common header, which
	// for the CM class is one message.
	DataLen = MADLen - HeaderLen
)

// Header is the 24-byte common MAD header (IBTA 13.4.2):
//
//	 0                   1                   2                   3
//	 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|  BaseVersion  |   MgmtClass   | ClassVersion  |R|  Method     |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|            Status             |         ClassSpecific         |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       TransactionID (64)                      |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|          AttributeID          |           Reserved            |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//	|                       AttributeModifier                       |
//	+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//
// R, the response bit, is kept inside Method (Method.IsResponse). For the
// directed-route SMP class, Status holds the D bit and ClassSpecific the
// hop pointer and count (see Direction, HopPointer, HopCount).
type Header struct {
	BaseVersion       uint8 // 1 for InfiniBand
	MgmtClass         ManagementClass
	ClassVersion      uint8 // 2 for the CM
	Method            Method
	Status            Status
	ClassSpecific     uint16
	TransactionID     uint64
	AttributeID       AttributeID
	Reserved          uint16 // kept so that decode → encode is byte-exact
	AttributeModifier uint32
}

// DecodeFromBytes decodes the first 24 bytes of data. On short data it
// resets h and returns an error wrapping ErrTruncated.
func (h *Header) DecodeFromBytes(data []byte) error {
	if len(data) < HeaderLen {
		*h = Header{}
		return fmt.Errorf("cm: %w: MAD header: %d bytes, need %d", ErrTruncated, len(data), HeaderLen)
	}
	*h = Header{
		BaseVersion:       data[0],
		MgmtClass:         ManagementClass(data[1]),
		ClassVersion:      data[2],
		Method:            Method(data[3]),
		Status:            Status(binary.BigEndian.Uint16(data[4:6])),
		ClassSpecific:     binary.BigEndian.Uint16(data[6:8]),
		TransactionID:     binary.BigEndian.Uint64(data[8:16]),
		AttributeID:       AttributeID(binary.BigEndian.Uint16(data[16:18])),
		Reserved:          binary.BigEndian.Uint16(data[18:20]),
		AttributeModifier: binary.BigEndian.Uint32(data[20:24]),
	}
	return nil
}

// Encode writes the header into the first 24 bytes of b, which must hold
// them.
func (h *Header) Encode(b []byte) {
	_ = b[HeaderLen-1]
	b[0] = h.BaseVersion
	b[1] = byte(h.MgmtClass)
	b[2] = h.ClassVersion
	b[3] = byte(h.Method)
	binary.BigEndian.PutUint16(b[4:6], uint16(h.Status))
	binary.BigEndian.PutUint16(b[6:8], h.ClassSpecific)
	binary.BigEndian.PutUint64(b[8:16], h.TransactionID)
	binary.BigEndian.PutUint16(b[16:18], uint16(h.AttributeID))
	binary.BigEndian.PutUint16(b[18:20], h.Reserved)
	binary.BigEndian.PutUint32(b[20:24], h.AttributeModifier)
}

// AppendBinary appends the 24-byte header to b.
func (h *Header) AppendBinary(b []byte) ([]byte, error) {
	n := len(b)
	b = append(b, make([]byte, HeaderLen)...)
	h.Encode(b[n:])
	return b, nil
}

// AttributeName returns the name of the attribute in the header's class
// ("REQ", "PathRecord", "SMInfo", "PortCounters"), or "0x%04x" when the
// class or attribute is not known.
func (h *Header) AttributeName() string { return AttributeName(h.MgmtClass, h.AttributeID) }

// Direction returns the D bit of a directed-route SMP (class 0x81): true
// for the return path. Meaningless for other classes.
func (h *Header) Direction() bool { return h.Status&0x8000 != 0 }

// HopPointer returns the hop pointer of a directed-route SMP.
func (h *Header) HopPointer() uint8 { return uint8(h.ClassSpecific >> 8) }

// HopCount returns the hop count of a directed-route SMP.
func (h *Header) HopCount() uint8 { return uint8(h.ClassSpecific) }

// String returns e.g. "CM Send REQ tid=0x000000026dc5c064".
func (h *Header) String() string {
	s := fmt.Sprintf("%s %s %s tid=0x%016x", h.MgmtClass, h.Method, h.AttributeName(), h.TransactionID)
	status := h.Status
	if h.MgmtClass == ClassSubnMgmtDirectedRoute {
		s += fmt.Sprintf(" hop=%d/%d", h.HopPointer(), h.HopCount())
		if h.Direction() {
			s += " return"
		}
		status &^= 0x8000
	}
	if status != 0 {
		s += " status=" + status.String()
	}
	return s
}

// ManagementClass identifies the management class of a MAD.
type ManagementClass uint8

// Management classes (IBTA 13.4.4, and the annexes for the application
// classes).
const (
	ClassSubnMgmt              ManagementClass = 0x01 // LID-routed SMP
	ClassSubnAdm               ManagementClass = 0x03 // subnet administration (SA)
	ClassPerfMgmt              ManagementClass = 0x04 // performance management
	ClassBaseboardMgmt         ManagementClass = 0x05
	ClassDevMgmt               ManagementClass = 0x06 // device management
	ClassCM                    ManagementClass = 0x07 // communication management
	ClassSNMP                  ManagementClass = 0x08 // SNMP tunneling
	ClassDeviceAdm             ManagementClass = 0x10 // application class: device administration
	ClassBootMgmt              ManagementClass = 0x11 // application class: boot management
	ClassBIS                   ManagementClass = 0x12 // application class: boot information service
	ClassCongestionMgmt        ManagementClass = 0x21 // application class: congestion control
	ClassSubnMgmtDirectedRoute ManagementClass = 0x81 // directed-route SMP
)

// IsVendor reports whether the class is in one of the vendor-specific
// ranges (0x09–0x0F, and 0x30–0x4F which uses RMPP).
func (c ManagementClass) IsVendor() bool {
	return (c >= 0x09 && c <= 0x0F) || (c >= 0x30 && c <= 0x4F)
}

// IsApplication reports whether the class is in the application-specific
// range 0x10–0x2F.
func (c ManagementClass) IsApplication() bool { return c >= 0x10 && c <= 0x2F }

// String returns the name of the class: "SubnMgmt", "SubnMgmtDR",
// "SubnAdm", "Perf", "BM", "DevMgmt", "CM", "SNMP", "DevAdm", "BootMgmt",
// "BIS", "CC", "Vendor(0x..)", "Application(0x..)" or "Reserved(0x..)".
func (c ManagementClass) String() string {
	switch c {
	case ClassSubnMgmt:
		return "SubnMgmt"
	case ClassSubnMgmtDirectedRoute:
		return "SubnMgmtDR"
	case ClassSubnAdm:
		return "SubnAdm"
	case ClassPerfMgmt:
		return "Perf"
	case ClassBaseboardMgmt:
		return "BM"
	case ClassDevMgmt:
		return "DevMgmt"
	case ClassCM:
		return "CM"
	case ClassSNMP:
		return "SNMP"
	case ClassDeviceAdm:
		return "DevAdm"
	case ClassBootMgmt:
		return "BootMgmt"
	case ClassBIS:
		return "BIS"
	case ClassCongestionMgmt:
		return "CC"
	}
	switch {
	case c.IsVendor():
		return fmt.Sprintf("Vendor(0x%02x)", uint8(c))
	case c.IsApplication():
		return fmt.Sprintf("Application(0x%02x)", uint8(c))
	}
	return fmt.Sprintf("Reserved(0x%02x)", uint8(c))
}

// Method is the 8-bit method of a MAD, response bit (0x80) included.
type Method uint8

// MAD methods (IBTA 13.4.5 and 15.2.2). The responses are the request
// with the 0x80 bit set.
const (
	MethodGet           Method = 0x01
	MethodSet           Method = 0x02
	MethodSend          Method = 0x03 // all CM messages
	MethodTrap          Method = 0x05
	MethodReport        Method = 0x06
	MethodTrapRepress   Method = 0x07
	MethodGetTable      Method = 0x12
	MethodGetTraceTable Method = 0x13
	MethodGetMulti      Method = 0x14
	MethodDelete        Method = 0x15
	MethodResponse      Method = 0x80 // the response bit
	MethodGetResp       Method = 0x81
	MethodReportResp    Method = 0x86
	MethodGetTableResp  Method = 0x92
	MethodGetMultiResp  Method = 0x94
	MethodDeleteResp    Method = 0x95
)

// IsResponse reports whether the response bit is set.
func (m Method) IsResponse() bool { return m&MethodResponse != 0 }

// String returns "Get", "GetResp", "Send", … or "Method(0x..)".
func (m Method) String() string {
	var s string
	switch m &^ MethodResponse {
	case MethodGet:
		s = "Get"
	case MethodSet:
		s = "Set"
	case MethodSend:
		s = "Send"
	case MethodTrap:
		s = "Trap"
	case MethodReport:
		s = "Report"
	case MethodTrapRepress:
		s = "TrapRepress"
	case MethodGetTable:
		s = "GetTable"
	case MethodGetTraceTable:
		s = "GetTraceTable"
	case MethodGetMulti:
		s = "GetMulti"
	case MethodDelete:
		s = "Delete"
	default:
		return fmt.Sprintf("Method(0x%02x)", uint8(m))
	}
	if m.IsResponse() {
		s += "Resp"
	}
	return s
}

// Status is the 16-bit status of a MAD (IBTA 13.4.7): bit 0 busy, bit 1
// redirect required, bits 2–4 an invalid-field code, bits 8–14 class
// specific; bit 15 is the D bit of a directed-route SMP.
type Status uint16

// Busy reports the "temporarily busy" bit.
func (s Status) Busy() bool { return s&0x0001 != 0 }

// RedirectRequired reports the "redirection required" bit.
func (s Status) RedirectRequired() bool { return s&0x0002 != 0 }

// InvalidField returns the 3-bit invalid-field code: 0 none, 1 bad base or
// class version, 2 method not supported, 3 method/attribute combination
// not supported, 7 invalid attribute or modifier value.
func (s Status) InvalidField() uint8 { return uint8(s>>2) & 0x7 }

// ClassSpecific returns bits 8–14, whose meaning depends on the class.
func (s Status) ClassSpecific() uint8 { return uint8(s>>8) & 0x7F }

// String returns "0x%04x" followed by the meaning of the set bits.
func (s Status) String() string {
	str := fmt.Sprintf("0x%04x", uint16(s))
	if s.Busy() {
		str += " busy"
	}
	if s.RedirectRequired() {
		str += " redirect"
	}
	switch s.InvalidField() {
	case 0:
	case 1:
		str += " bad-version"
	case 2:
		str += " method-unsupported"
	case 3:
		str += " method-attribute-unsupported"
	case 7:
		str += " invalid-attribute-value"
	default:
		str += fmt.Sprintf(" invalid-field(%d)", s.InvalidField())
	}
	return str
}
