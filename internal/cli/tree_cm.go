package cli

import (
	"fmt"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/cm"
)

// The CM part of the -V tree: a MAD, and each field of the REQ and REP
// the capture holds.

// mad writes a management datagram and its CM message.
func (t *tree) mad(m *cm.MAD, p *analyze.Packet) {
	h := &m.Header
	t.title("MAD - Management Datagram, %s %s %s", h.MgmtClass, h.Method, h.AttributeName())
	t.field(1, "Base Version", "%d", h.BaseVersion)
	t.field(1, "Management Class", "%s (0x%02x)", h.MgmtClass, uint8(h.MgmtClass))
	t.field(1, "Class Version", "%d", h.ClassVersion)
	t.field(1, "Method", "%s (0x%02x)", h.Method, uint8(h.Method))
	t.field(1, "Status", "0x%04x", uint16(h.Status))
	t.field(1, "Class Specific", "0x%04x", h.ClassSpecific)
	t.field(1, "Transaction ID", "0x%016x", h.TransactionID)
	t.field(1, "Attribute ID", "0x%04x (%s)", uint16(h.AttributeID), h.AttributeName())
	t.field(1, "Attribute Modifier", "0x%08x", h.AttributeModifier)
	got := cm.HeaderLen + len(m.Data)
	if got < cm.MADLen {
		if p.CapLength < p.Length {
			t.warn(1, "MAD cut by the capture: %d of %d bytes captured", got, cm.MADLen)
		} else {
			t.warn(1, "MAD too short: %d of %d bytes in the packet (malformed)", got, cm.MADLen)
		}
	}
	if h.MgmtClass != cm.ClassCM {
		if len(m.Data) > 0 {
			t.field(1, "Data", "%s", hexBytes(m.Data))
		}
		return
	}
	switch msg := m.CM().(type) {
	case *cm.ConnectRequest:
		t.cmREQ(msg)
	case *cm.ConnectReply:
		t.cmREP(msg)
	case nil:
		t.cmPartial(h.AttributeID, m.Data)
	default:
		t.title("CM %s", h.AttributeName())
		t.field(1, "Message", "%s", msg)
	}
}

// partialFields shows the Fields first…last of a cut CM message that were
// captured, then names the ones that were not.
func (t *tree) partialFields(name string, c cm.Captured, first, last cm.Field, value func(cm.Field) string) {
	t.title("%s, cut: only the fields below were captured", name)
	var missing []string
	for f := first; f <= last; f++ {
		if c.Has(f) {
			t.field(1, f.String(), "%s", value(f))
		} else {
			missing = append(missing, f.String())
		}
	}
	notCaptured(t, missing)
}

// cmPartial shows the fields of a REQ or REP that a cut MAD still holds.
func (t *tree) cmPartial(id cm.AttributeID, data []byte) {
	switch id {
	case cm.AttrConnectRequest:
		var req cm.ConnectRequest
		c, _ := req.DecodePartial(data)
		t.partialFields("CM ConnectRequest (REQ)", c, cm.ReqLocalCommID, cm.ReqPrimaryRemoteGID, func(f cm.Field) string { return reqField(&req, f) })
	case cm.AttrConnectReply:
		var rep cm.ConnectReply
		c, _ := rep.DecodePartial(data)
		t.partialFields("CM ConnectReply (REP)", c, cm.RepLocalCommID, cm.RepLocalCAGUID, func(f cm.Field) string { return repField(&rep, f) })
	default:
		t.warn(0, "CM %s: cut before the end of its fixed fields, not decoded (%d data bytes captured)", cm.AttributeName(cm.ClassCM, id), len(data))
	}
}

func notCaptured(t *tree, missing []string) {
	if len(missing) > 0 {
		t.note(1, "not captured: %s and the rest of the message", strings.Join(missing, ", "))
	}
}

func reqField(m *cm.ConnectRequest, f cm.Field) string {
	switch f {
	case cm.ReqLocalCommID:
		return fmt.Sprintf("0x%08x", m.LocalCommID)
	case cm.ReqServiceID:
		return serviceID(m.ServiceID)
	case cm.ReqLocalCAGUID:
		return m.LocalCAGUID.String()
	case cm.ReqLocalQKey:
		return fmt.Sprintf("0x%08x", m.LocalQKey)
	case cm.ReqLocalQPN:
		return fmt.Sprintf("0x%06x", m.LocalQPN)
	case cm.ReqTransportServiceType:
		return m.TransportServiceType.String()
	case cm.ReqStartingPSN:
		return fmt.Sprintf("%d", m.StartingPSN)
	case cm.ReqPKey:
		return fmt.Sprintf("0x%04x", m.PKey)
	case cm.ReqPathMTU:
		return pathMTU(m.PathMTU)
	case cm.ReqPrimaryLocalLID:
		return lid(m.PrimaryLocalLID)
	case cm.ReqPrimaryRemoteLID:
		return lid(m.PrimaryRemoteLID)
	case cm.ReqPrimaryLocalGID:
		return cmGID(m.PrimaryLocalGID)
	case cm.ReqPrimaryRemoteGID:
		return cmGID(m.PrimaryRemoteGID)
	}
	return ""
}

func repField(m *cm.ConnectReply, f cm.Field) string {
	switch f {
	case cm.RepLocalCommID:
		return fmt.Sprintf("0x%08x", m.LocalCommID)
	case cm.RepRemoteCommID:
		return fmt.Sprintf("0x%08x", m.RemoteCommID)
	case cm.RepLocalQKey:
		return fmt.Sprintf("0x%08x", m.LocalQKey)
	case cm.RepLocalQPN:
		return fmt.Sprintf("0x%06x", m.LocalQPN)
	case cm.RepStartingPSN:
		return fmt.Sprintf("%d", m.StartingPSN)
	case cm.RepLocalCAGUID:
		return m.LocalCAGUID.String()
	}
	return ""
}

func serviceID(s cm.ServiceID) string {
	if s.IsRDMACM() {
		return fmt.Sprintf("%s (RDMA CM, %s port %d)", s, s.PortSpace(), s.Port())
	}
	return s.String()
}

func pathMTU(m cm.PathMTU) string {
	if b := m.Bytes(); b > 0 {
		return fmt.Sprintf("%d bytes (%d)", b, uint8(m))
	}
	return fmt.Sprintf("invalid (%d)", uint8(m))
}

func lid(l cm.LID) string {
	if l.IsPlaceholder() {
		return fmt.Sprintf("%d (placeholder: RoCE has no LIDs)", l)
	}
	return l.String()
}

func (t *tree) cmREQ(m *cm.ConnectRequest) {
	t.title("CM ConnectRequest (REQ), Local QPN 0x%06x, Starting PSN %d", m.LocalQPN, m.StartingPSN)
	t.field(1, "Local Communication ID", "0x%08x", m.LocalCommID)
	t.field(1, "Service ID", "%s", serviceID(m.ServiceID))
	t.field(1, "Local CA GUID", "%s", m.LocalCAGUID)
	t.field(1, "Local Q_Key", "0x%08x", m.LocalQKey)
	t.field(1, "Local QPN", "0x%06x", m.LocalQPN)
	t.field(1, "Responder Resources", "%d", m.ResponderResources)
	t.field(1, "Initiator Depth", "%d", m.InitiatorDepth)
	t.field(1, "Remote CM Response Timeout", "%d (%s)", m.RemoteCMResponseTimeout, cm.TimeoutDuration(m.RemoteCMResponseTimeout))
	ts := m.TransportServiceType.String()
	if m.TransportServiceType == cm.TransportExtended && m.ExtendedTransportType == cm.ExtendedTransportXRC {
		ts = "XRC"
	}
	t.field(1, "Transport Service Type", "%s (%d)", ts, uint8(m.TransportServiceType))
	t.field(1, "End-to-End Flow Control", "%s", yesNo(m.EndToEndFlowControl))
	t.field(1, "Starting PSN", "%d (0x%06x): the passive side's first request PSN", m.StartingPSN, m.StartingPSN)
	t.field(1, "Local CM Response Timeout", "%d (%s)", m.LocalCMResponseTimeout, cm.TimeoutDuration(m.LocalCMResponseTimeout))
	t.field(1, "Retry Count", "%d", m.RetryCount)
	t.field(1, "Partition Key", "0x%04x", m.PKey)
	t.field(1, "Path MTU", "%s", pathMTU(m.PathMTU))
	t.field(1, "RNR Retry Count", "%d", m.RNRRetryCount)
	t.field(1, "Max CM Retries", "%d", m.MaxCMRetries)
	t.field(1, "SRQ", "%s", yesNo(m.SRQ))
	t.group(1, "Primary Path")
	t.field(2, "Local LID", "%s", lid(m.PrimaryLocalLID))
	t.field(2, "Remote LID", "%s", lid(m.PrimaryRemoteLID))
	t.field(2, "Local GID", "%s", cmGID(m.PrimaryLocalGID))
	t.field(2, "Remote GID", "%s", cmGID(m.PrimaryRemoteGID))
	t.field(2, "Flow Label", "0x%05x", m.PrimaryFlowLabel)
	t.field(2, "Packet Rate", "%d", m.PrimaryPacketRate)
	t.field(2, "Traffic Class", "0x%02x (DSCP: %s, ECN: %s)", m.PrimaryTrafficClass, dscpShort(m.PrimaryTrafficClass>>2), ecnShort(m.PrimaryTrafficClass))
	t.field(2, "Hop Limit", "%d", m.PrimaryHopLimit)
	t.field(2, "Service Level", "%d", m.PrimarySL)
	t.field(2, "Subnet Local", "%s", yesNo(m.PrimarySubnetLocal))
	t.field(2, "Local ACK Timeout", "%d (%s)", m.PrimaryLocalACKTimeout, cm.TimeoutDuration(m.PrimaryLocalACKTimeout))
	if m.HasAlternatePath() {
		t.group(1, "Alternate Path")
		t.field(2, "Local LID", "%s", lid(m.AlternateLocalLID))
		t.field(2, "Remote LID", "%s", lid(m.AlternateRemoteLID))
		t.field(2, "Local GID", "%s", cmGID(m.AlternateLocalGID))
		t.field(2, "Remote GID", "%s", cmGID(m.AlternateRemoteGID))
	} else {
		t.field(1, "Alternate Path", "none")
	}
	if ip, ok := m.IPPrivateData(); ok {
		t.field(1, "Private Data", "%d bytes, RDMA CM IP header then consumer data", len(m.PrivateData))
		t.field(2, "RDMA CM Version", "%d.%d", ip.MajorVersion, ip.MinorVersion)
		t.field(2, "IP Version", "%d", ip.IPVersion)
		t.field(2, "Source Port", "%d", ip.SourcePort)
		t.field(2, "Source IP", "%s", ip.SourceIP)
		t.field(2, "Destination IP", "%s", ip.DestinationIP)
		t.field(2, "Destination Port", "%d (from the Service ID)", m.ServiceID.Port())
		if allZero(ip.ConsumerData) {
			t.field(2, "Consumer Data", "%d bytes, all zero", len(ip.ConsumerData))
		} else {
			t.field(2, "Consumer Data", "%s", hexBytes(ip.ConsumerData))
		}
		return
	}
	privateData(t, m.PrivateData)
}

func privateData(t *tree, b []byte) {
	switch {
	case len(b) == 0:
	case allZero(b):
		t.field(1, "Private Data", "%d bytes, all zero", len(b))
	default:
		t.field(1, "Private Data", "%s", hexBytes(b))
	}
}

func (t *tree) cmREP(m *cm.ConnectReply) {
	t.title("CM ConnectReply (REP), Local QPN 0x%06x, Starting PSN %d", m.LocalQPN, m.StartingPSN)
	t.field(1, "Local Communication ID", "0x%08x", m.LocalCommID)
	t.field(1, "Remote Communication ID", "0x%08x", m.RemoteCommID)
	t.field(1, "Local Q_Key", "0x%08x", m.LocalQKey)
	t.field(1, "Local QPN", "0x%06x", m.LocalQPN)
	t.field(1, "Starting PSN", "%d (0x%06x): the active side's first request PSN", m.StartingPSN, m.StartingPSN)
	t.field(1, "Responder Resources", "%d", m.ResponderResources)
	t.field(1, "Initiator Depth", "%d", m.InitiatorDepth)
	t.field(1, "Target ACK Delay", "%d (%s)", m.TargetACKDelay, cm.TimeoutDuration(m.TargetACKDelay))
	t.field(1, "Failover Accepted", "%s", m.FailoverAccepted)
	t.field(1, "End-to-End Flow Control", "%s", yesNo(m.EndToEndFlowControl))
	t.field(1, "RNR Retry Count", "%d", m.RNRRetryCount)
	t.field(1, "SRQ", "%s", yesNo(m.SRQ))
	t.field(1, "Local CA GUID", "%s", m.LocalCAGUID)
	privateData(t, m.PrivateData)
}
