package cm

import "fmt"

// AttributeID identifies the attribute (for the CM: the message) a MAD
// carries. Its meaning depends on the management class: 0x0012 is REJ in
// the CM class, SwitchInfo for the subnet manager, PortInfoRecord for
// subnet administration and PortCounters for performance management, so
// String prints the number and AttributeName the class-aware name.
type AttributeID uint16

// Attribute IDs common to every class.
const (
	AttrClassPortInfo AttributeID = 0x0001
	AttrNotice        AttributeID = 0x0002
	AttrInformInfo    AttributeID = 0x0003
)

// CM attribute IDs: one per message (the table messageTypes gives each
// its name, length and type).
const (
	AttrConnectRequest        AttributeID = 0x0010 // REQ
	AttrMessageReceiptAck     AttributeID = 0x0011 // MRA
	AttrConnectReject         AttributeID = 0x0012 // REJ
	AttrConnectReply          AttributeID = 0x0013 // REP
	AttrReadyToUse            AttributeID = 0x0014 // RTU
	AttrDisconnectRequest     AttributeID = 0x0015 // DREQ
	AttrDisconnectReply       AttributeID = 0x0016 // DREP
	AttrSIDRRequest           AttributeID = 0x0017 // SIDR_REQ
	AttrSIDRReply             AttributeID = 0x0018 // SIDR_REP
	AttrLoadAlternatePath     AttributeID = 0x0019 // LAP
	AttrAlternatePathResponse AttributeID = 0x001A // APR
)

// Subnet management attribute IDs (SMPs, classes 0x01 and 0x81; IBTA
// 14.2.5).
const (
	AttrNodeDescription          AttributeID = 0x0010
	AttrNodeInfo                 AttributeID = 0x0011
	AttrSwitchInfo               AttributeID = 0x0012
	AttrGUIDInfo                 AttributeID = 0x0014
	AttrPortInfo                 AttributeID = 0x0015
	AttrPKeyTable                AttributeID = 0x0016 // P_KeyTable
	AttrSLtoVLMappingTable       AttributeID = 0x0017
	AttrVLArbitrationTable       AttributeID = 0x0018
	AttrLinearForwardingTable    AttributeID = 0x0019
	AttrRandomForwardingTable    AttributeID = 0x001A
	AttrMulticastForwardingTable AttributeID = 0x001B
	AttrLinkSpeedWidthPairsTable AttributeID = 0x001C
	AttrSMInfo                   AttributeID = 0x0020
	AttrVendorDiag               AttributeID = 0x0030
	AttrLedInfo                  AttributeID = 0x0031
)

// Subnet administration attribute IDs (class 0x03; IBTA 15.2.5).
const (
	AttrNodeRecord                     AttributeID = 0x0011
	AttrPortInfoRecord                 AttributeID = 0x0012
	AttrSLtoVLMappingTableRecord       AttributeID = 0x0013
	AttrSwitchInfoRecord               AttributeID = 0x0014
	AttrLinearForwardingTableRecord    AttributeID = 0x0015
	AttrRandomForwardingTableRecord    AttributeID = 0x0016
	AttrMulticastForwardingTableRecord AttributeID = 0x0017
	AttrSMInfoRecord                   AttributeID = 0x0018
	AttrLinkSpeedWidthPairsTableRecord AttributeID = 0x0019
	AttrLinkRecord                     AttributeID = 0x0020
	AttrGUIDInfoRecord                 AttributeID = 0x0030
	AttrServiceRecord                  AttributeID = 0x0031
	AttrPKeyTableRecord                AttributeID = 0x0033 // P_KeyTableRecord
	AttrPathRecord                     AttributeID = 0x0035
	AttrVLArbitrationTableRecord       AttributeID = 0x0036
	AttrMCMemberRecord                 AttributeID = 0x0038
	AttrTraceRecord                    AttributeID = 0x0039
	AttrMultiPathRecord                AttributeID = 0x003A
	AttrServiceAssociationRecord       AttributeID = 0x003B
	AttrInformInfoRecord               AttributeID = 0x00F3
)

// Performance management attribute IDs (class 0x04; IBTA 16.1.3).
const (
	AttrPortSamplesControl            AttributeID = 0x0010
	AttrPortSamplesResult             AttributeID = 0x0011
	AttrPortCounters                  AttributeID = 0x0012
	AttrPortRcvErrorDetails           AttributeID = 0x0015
	AttrPortXmitDiscardDetails        AttributeID = 0x0016
	AttrPortOpRcvCounters             AttributeID = 0x0017
	AttrPortFlowCtlCounters           AttributeID = 0x0018
	AttrPortVLOpPackets               AttributeID = 0x0019
	AttrPortVLOpData                  AttributeID = 0x001A
	AttrPortVLXmitFlowCtlUpdateErrors AttributeID = 0x001B
	AttrPortVLXmitWaitCounters        AttributeID = 0x001C
	AttrPortCountersExtended          AttributeID = 0x001D
	AttrPortSamplesResultExtended     AttributeID = 0x001E
	AttrSwPortVLCongestion            AttributeID = 0x0030
)

// String returns "0x%04x"; use AttributeName for the class-aware name.
func (a AttributeID) String() string { return fmt.Sprintf("0x%04x", uint16(a)) }

// The attribute names of each class, keyed by the constants above. (The
// names of the CM class are those of the message table, messageTypes.)
// They are tables rather than stringer output because one AttributeID
// value has a different name in each class.
var (
	commonAttributeNames = map[AttributeID]string{
		AttrClassPortInfo: "ClassPortInfo",
		AttrNotice:        "Notice",
		AttrInformInfo:    "InformInfo",
	}
	smAttributeNames = map[AttributeID]string{
		AttrNodeDescription:          "NodeDescription",
		AttrNodeInfo:                 "NodeInfo",
		AttrSwitchInfo:               "SwitchInfo",
		AttrGUIDInfo:                 "GUIDInfo",
		AttrPortInfo:                 "PortInfo",
		AttrPKeyTable:                "P_KeyTable",
		AttrSLtoVLMappingTable:       "SLtoVLMappingTable",
		AttrVLArbitrationTable:       "VLArbitrationTable",
		AttrLinearForwardingTable:    "LinearForwardingTable",
		AttrRandomForwardingTable:    "RandomForwardingTable",
		AttrMulticastForwardingTable: "MulticastForwardingTable",
		AttrLinkSpeedWidthPairsTable: "LinkSpeedWidthPairsTable",
		AttrSMInfo:                   "SMInfo",
		AttrVendorDiag:               "VendorDiag",
		AttrLedInfo:                  "LedInfo",
	}
	saAttributeNames = map[AttributeID]string{
		AttrNodeRecord:                     "NodeRecord",
		AttrPortInfoRecord:                 "PortInfoRecord",
		AttrSLtoVLMappingTableRecord:       "SLtoVLMappingTableRecord",
		AttrSwitchInfoRecord:               "SwitchInfoRecord",
		AttrLinearForwardingTableRecord:    "LinearForwardingTableRecord",
		AttrRandomForwardingTableRecord:    "RandomForwardingTableRecord",
		AttrMulticastForwardingTableRecord: "MulticastForwardingTableRecord",
		AttrSMInfoRecord:                   "SMInfoRecord",
		AttrLinkSpeedWidthPairsTableRecord: "LinkSpeedWidthPairsTableRecord",
		AttrLinkRecord:                     "LinkRecord",
		AttrGUIDInfoRecord:                 "GUIDInfoRecord",
		AttrServiceRecord:                  "ServiceRecord",
		AttrPKeyTableRecord:                "P_KeyTableRecord",
		AttrPathRecord:                     "PathRecord",
		AttrVLArbitrationTableRecord:       "VLArbitrationTableRecord",
		AttrMCMemberRecord:                 "MCMemberRecord",
		AttrTraceRecord:                    "TraceRecord",
		AttrMultiPathRecord:                "MultiPathRecord",
		AttrServiceAssociationRecord:       "ServiceAssociationRecord",
		AttrInformInfoRecord:               "InformInfoRecord",
	}
	perfAttributeNames = map[AttributeID]string{
		AttrPortSamplesControl:            "PortSamplesControl",
		AttrPortSamplesResult:             "PortSamplesResult",
		AttrPortCounters:                  "PortCounters",
		AttrPortRcvErrorDetails:           "PortRcvErrorDetails",
		AttrPortXmitDiscardDetails:        "PortXmitDiscardDetails",
		AttrPortOpRcvCounters:             "PortOpRcvCounters",
		AttrPortFlowCtlCounters:           "PortFlowCtlCounters",
		AttrPortVLOpPackets:               "PortVLOpPackets",
		AttrPortVLOpData:                  "PortVLOpData",
		AttrPortVLXmitFlowCtlUpdateErrors: "PortVLXmitFlowCtlUpdateErrors",
		AttrPortVLXmitWaitCounters:        "PortVLXmitWaitCounters",
		AttrPortCountersExtended:          "PortCountersExtended",
		AttrPortSamplesResultExtended:     "PortSamplesResultExtended",
		AttrSwPortVLCongestion:            "SwPortVLCongestion",
	}
)

// AttributeName returns the name of an attribute in a management class:
// the short CM message names ("REQ", "REP", "SIDR_REQ", …), the SA record
// names ("PathRecord"), the SMP attributes ("PortInfo", "SMInfo"), the
// PerfMgt attributes ("PortCounters"), and ClassPortInfo, Notice and
// InformInfo in every class. Anything else is "0x%04x".
func AttributeName(class ManagementClass, id AttributeID) string {
	var s string
	switch class {
	case ClassCM:
		if t := lookupMessage(id); t != nil {
			s = t.name
		}
	case ClassSubnMgmt, ClassSubnMgmtDirectedRoute:
		s = smAttributeNames[id]
	case ClassSubnAdm:
		s = saAttributeNames[id]
	case ClassPerfMgmt:
		s = perfAttributeNames[id]
	}
	if s == "" {
		s = commonAttributeNames[id]
	}
	if s != "" {
		return s
	}
	return id.String()
}
