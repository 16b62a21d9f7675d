package cli

import (
	"fmt"
	"strings"

	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// The headers of the encapsulations a frame arrived in (a switch mirror's
// ERSPAN, an overlay's VXLAN or GENEVE, MPLS), in -V's tree.

func (t *tree) gre(v *gplayers.GRE) {
	t.title("Generic Routing Encapsulation (%s)", etherTypeName(v.Protocol))
	var flags []string
	for _, f := range []struct {
		on   bool
		name string
	}{{v.ChecksumPresent, "checksum"}, {v.RoutingPresent, "routing"}, {v.KeyPresent, "key"}, {v.SeqPresent, "sequence number"}} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	if len(flags) == 0 {
		flags = []string{"none"}
	}
	t.field(1, "Flags", "%s", strings.Join(flags, ", "))
	t.field(1, "Version", "%d", v.Version)
	t.field(1, "Protocol Type", "%s (0x%04x)", etherTypeName(v.Protocol), uint16(v.Protocol))
	if v.ChecksumPresent {
		t.field(1, "Checksum", "0x%04x", v.Checksum)
	}
	if v.KeyPresent {
		t.field(1, "Key", "0x%08x", v.Key)
		if v.Protocol == gplayers.EthernetTypeTransparentEthernetBridging {
			t.field(2, "Virtual Subnet ID (NVGRE)", "%d", v.Key>>8)
			t.field(2, "Flow ID", "%d", v.Key&0xFF)
		}
	}
	if v.SeqPresent {
		t.field(1, "Sequence Number", "%d", v.Seq)
	}
	if v.Protocol == gplayers.EthernetTypeERSPAN && !v.SeqPresent {
		t.note(1, "ERSPAN type I: the mirrored frame follows")
	}
}

func (t *tree) erspan2(v *gplayers.ERSPANII) {
	t.title("Encapsulated Remote Switch Packet ANalysis Type II, Session %d", v.SessionID)
	t.field(1, "Version", "%d", v.Version)
	t.field(1, "VLAN", "%d", v.VLANIdentifier)
	t.field(1, "COS", "%d", v.CoS)
	t.field(1, "Encapsulation", "%d", v.TrunkEncap)
	t.field(1, "Truncated", "%s", yesNo(v.IsTruncated))
	t.field(1, "Session ID", "%d", v.SessionID)
	t.field(1, "Index", "%d", v.Index)
}

func (t *tree) vxlan(v *gplayers.VXLAN) {
	t.title("Virtual eXtensible Local Area Network, VNI: %d", v.VNI)
	t.field(1, "VNI valid (I flag)", "%s", yesNo(v.ValidIDFlag))
	if v.GBPExtension {
		t.field(1, "Group Policy ID", "%d", v.GBPGroupPolicyID)
	}
	t.field(1, "VXLAN Network Identifier (VNI)", "%d", v.VNI)
}

func (t *tree) geneve(v *gplayers.Geneve) {
	t.title("Generic Network Virtualization Encapsulation, VNI: 0x%06x", v.VNI)
	t.field(1, "Version", "%d", v.Version)
	t.field(1, "Options Length", "%d bytes, %d options", v.OptionsLength, len(v.Options))
	t.field(1, "OAM", "%s", yesNo(v.OAMPacket))
	t.field(1, "Critical Options Present", "%s", yesNo(v.CriticalOption))
	t.field(1, "Protocol Type", "%s (0x%04x)", etherTypeName(v.Protocol), uint16(v.Protocol))
	t.field(1, "Virtual Network Identifier (VNI)", "0x%06x (%d)", v.VNI, v.VNI)
	for _, o := range v.Options {
		t.field(2, "Option", "class 0x%04x type 0x%02x, %d bytes", o.Class, o.Type, o.Length)
	}
}

func (t *tree) mpls(v *gplayers.MPLS) {
	t.title("MultiProtocol Label Switching Header, Label: %d, Exp: %d, S: %d, TTL: %d", v.Label, v.TrafficClass, b2i(v.StackBottom), v.TTL)
	t.field(1, "MPLS Label", "%d", v.Label)
	t.field(1, "MPLS Experimental Bits", "%d", v.TrafficClass)
	t.field(1, "MPLS Bottom Of Label Stack", "%d", b2i(v.StackBottom))
	t.field(1, "MPLS TTL", "%d", v.TTL)
}

// wrapWords names the encapsulations a frame arrived in, for -P's line:
// "erspan2 session 7 / vxlan VNI 5001"; "" for none.
func wrapWords(ws []analyze.Wrap) string {
	parts := make([]string, len(ws))
	for i, w := range ws {
		parts[i] = w.Kind.String()
		if n := w.Kind.IDName(); n != "" {
			parts[i] += fmt.Sprintf(" %s %d", n, w.ID)
		}
	}
	return strings.Join(parts, " / ")
}

func (t *tree) erspan3(v *layers.ERSPANIII) {
	t.title("Encapsulated Remote Switch Packet ANalysis Type III, Session %d", v.SessionID)
	t.field(1, "Version", "%d", v.Version)
	t.field(1, "VLAN", "%d", v.VLANIdentifier)
	t.field(1, "COS", "%d", v.CoS)
	t.field(1, "Bad/Short/Oversized", "%d", v.BSO)
	t.field(1, "Truncated", "%s", yesNo(v.Truncated))
	t.field(1, "Session ID", "%d", v.SessionID)
	t.field(1, "Timestamp", "%d (%s)", v.Timestamp, v.TimestampString())
	t.field(1, "Security Group Tag", "%d", v.SGT)
	t.field(1, "Frame Type", "%d (%s)", uint8(v.FrameType), v.FrameType)
	t.field(1, "Hardware ID", "%d", v.HardwareID)
	dir := "ingress"
	if v.Direction {
		dir = "egress"
	}
	t.field(1, "Direction", "%s", dir)
	t.field(1, "Timestamp Granularity", "%s", v.Granularity)
	if v.PlatformSubheader {
		t.field(1, "Platform ID", "%d", v.PlatformID)
		t.field(1, "Platform Info", "0x%015x", v.PlatformInfo)
	}
}
