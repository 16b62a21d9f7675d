package cli

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/internal/filename"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/report"
)

// The -V protocol tree: one title line per header (column 0, as tshark
// -V), its fields indented under it, each named and with its meaning
// (DSCP and ECN names, opcode names, a decoded AETH syndrome, MTUs in
// bytes, GIDs as IPv4 addresses when they are IPv4-mapped). What could not
// be decoded is said in a line starting with "[" (as tshark marks its
// own notes): the bytes not decoded and why.

// tree writes one frame's protocol tree.
type tree struct {
	w       io.Writer
	pal     report.Palette
	linkBps float64 // --link-speed, for the pause times
}

// title starts a header.
func (t *tree) title(format string, a ...any) { fmt.Fprintf(t.w, format+"\n", a...) }

// field writes a field at depth (1: under a title).
func (t *tree) field(depth int, name, format string, a ...any) {
	fmt.Fprintf(t.w, "%s%s: %s\n", strings.Repeat("    ", depth), name, fmt.Sprintf(format, a...))
}

// group writes a field that only heads the fields under it.
func (t *tree) group(depth int, name string) {
	fmt.Fprintf(t.w, "%s%s\n", strings.Repeat("    ", depth), name)
}

// note writes a bracketed remark at depth.
func (t *tree) note(depth int, format string, a ...any) {
	fmt.Fprintf(t.w, "%s[%s]\n", strings.Repeat("    ", depth), fmt.Sprintf(format, a...))
}

// warn writes a bracketed remark in the warning colour.
func (t *tree) warn(depth int, format string, a ...any) {
	fmt.Fprintf(t.w, "%s%s\n", strings.Repeat("    ", depth), t.pal.Yellow.Sprintf("[%s]", fmt.Sprintf(format, a...)))
}

// yesNo shows a one-bit flag as tshark does: its value, then Set/Not set.
func yesNo(b bool) string {
	if b {
		return "1 (set)"
	}
	return "0 (not set)"
}

// dscpNames names a Differentiated Services codepoint (RFC 2474, 2597,
// 3246, 5865, 8622): its long and short names.
func dscpNames(d uint8) (long, short string) {
	switch {
	case d == 0:
		return "Default", "CS0"
	case d == 46:
		return "Expedited Forwarding", "EF"
	case d == 44:
		return "Voice Admit", "VA"
	case d == 1:
		return "Lower Effort", "LE"
	case d%8 == 0:
		return fmt.Sprintf("Class Selector %d", d/8), fmt.Sprintf("CS%d", d/8)
	case d%2 == 0 && d/8 >= 1 && d/8 <= 4 && (d%8)/2 >= 1 && (d%8)/2 <= 3:
		return fmt.Sprintf("Assured Forwarding %d%d", d/8, (d%8)/2), fmt.Sprintf("AF%d%d", d/8, (d%8)/2)
	}
	return "Unknown", fmt.Sprint(d)
}

// dscpName is the codepoint's long name.
func dscpName(d uint8) string { l, _ := dscpNames(d); return l }

// dscpShort is the codepoint's short name ("AF31", "CS3", "EF").
func dscpShort(d uint8) string { _, s := dscpNames(d); return s }

// ecnName names the two ECN bits (RFC 3168).
func ecnName(e uint8) string {
	return [...]string{"Not-ECT (not ECN-capable)", "ECT(1) (ECN-capable)", "ECT(0) (ECN-capable)", "CE (congestion experienced)"}[e&3]
}

// ecnShort is the short ECN name of -P and -o json.
func ecnShort(e uint8) string { return [...]string{"Not-ECT", "ECT(1)", "ECT(0)", "CE"}[e&3] }

// gidString shows a GID, as its IPv4 address when IPv4-mapped.
func gidString(ip net.IP) string {
	a, ok := netip.AddrFromSlice(ip)
	if !ok {
		return fmt.Sprintf("%x", []byte(ip))
	}
	if a.Is4In6() {
		return fmt.Sprintf("%s (IPv4-mapped %s)", a.Unmap(), a)
	}
	return a.String()
}

// cmGID shows a CM GID, as its IPv4 address when IPv4-mapped.
func cmGID(g cm.GID) string {
	if g.IsZero() {
		return ":: (none)"
	}
	return gidString(g.IP())
}

// hexBytes shows bytes in hex, the first 32 of a longer slice.
func hexBytes(b []byte) string {
	if len(b) > 32 {
		return fmt.Sprintf("%x… (%d bytes)", b[:32], len(b))
	}
	return fmt.Sprintf("%x", b)
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// writeTree prints every header of a packet, decoding the frame again
// through gopacket (the analyzer's fast path keeps only the IB headers),
// then what could not be decoded, what it is to NCCL (nc, ncclMark) and
// the frame's findings.
func (r *runner) writeTree(p *analyze.Packet, f *frame, rel time.Duration, file, nc string, findings []analyze.Finding) {
	t := &tree{w: r.stdout, pal: r.pal, linkBps: r.cfg.linkGbps * 1e9}
	head := fmt.Sprintf("Frame %d: %d bytes on wire, %d captured, %.9f s", p.Frame, p.Length, p.CapLength, rel.Seconds())
	if file != "" {
		head += ", file " + filename.Text(file)
	}
	r.pal.Bold.Fprintln(t.w, head)
	t.field(1, "Arrival Time", "%s", p.Time.UTC().Format("2006-01-02T15:04:05.000000000Z"))
	if p.CapLength < p.Length {
		t.note(1, "cut by the capture: %d of %d bytes captured", p.CapLength, p.Length)
	}
	pkt := gopacket.NewPacket(f.data, f.linkType, gopacket.DecodeOptions{NoCopy: true})
	var bth *layers.BTH
	for _, l := range pkt.Layers() {
		if b, ok := l.(*layers.BTH); ok {
			bth = b
		}
		t.layer(l, p, bth)
	}
	if b := bth; b != nil && p.BTH != nil && b.DC != p.BTH.DC {
		// gopacket.NewPacket decodes the RD opcodes automatically only.
		t.warn(0, "--decode-as %s: analyzed as %s; the tree above is the automatic decoding", r.cfg.rdAs, p.BTH.OpcodeName())
	}
	if p.Err != nil && pkt.ErrorLayer() == nil {
		t.warn(0, "Malformed: %v", p.Err)
	}
	if nc != "" {
		t.title("%s", nc)
	}
	if len(findings) > 0 || p.Findings > 0 {
		t.title("Findings of this frame (%d)", p.Findings)
		for _, fd := range findings {
			line := fmt.Sprintf("%s (%s): %s", fd.Kind, fd.Severity, fd.Detail)
			if name := fd.FlowName(); name != "" {
				line += " [" + name + "]"
			}
			fmt.Fprintf(t.w, "    %s\n", severityColour(r.pal, fd.Severity).Sprint(line))
		}
		if n := p.Findings - len(findings); n > 0 {
			t.note(1, "%d more not listed (--max-findings reached)", n)
		}
	}
}

// severityColour picks a finding's colour.
func severityColour(pal report.Palette, sev analyze.Severity) *color.Color {
	switch sev {
	case analyze.SeverityError:
		return pal.Red
	case analyze.SeverityWarning:
		return pal.Yellow
	}
	return pal.Bold
}

// layer writes one decoded layer.
func (t *tree) layer(l gopacket.Layer, p *analyze.Packet, bth *layers.BTH) {
	switch v := l.(type) {
	case *gplayers.Ethernet:
		t.title("Ethernet II, Src: %s, Dst: %s", v.SrcMAC, v.DstMAC)
		t.field(1, "Destination", "%s", v.DstMAC)
		t.field(1, "Source", "%s", v.SrcMAC)
		if v.EthernetType == 0 && v.Length > 0 {
			t.field(1, "Length", "%d (IEEE 802.3)", v.Length)
		} else {
			t.field(1, "Type", "%s (0x%04x)", etherTypeName(v.EthernetType), uint16(v.EthernetType))
		}
	case *gplayers.Dot1Q:
		t.title("802.1Q Virtual LAN, PRI: %d, DEI: %d, ID: %d", v.Priority, b2i(v.DropEligible), v.VLANIdentifier)
		t.field(1, "Priority", "%d", v.Priority)
		t.field(1, "DEI", "%d", b2i(v.DropEligible))
		t.field(1, "ID", "%d", v.VLANIdentifier)
		t.field(1, "Type", "%s (0x%04x)", etherTypeName(v.Type), uint16(v.Type))
	case *gplayers.IPv4:
		t.ipv4(v)
	case *gplayers.IPv6:
		t.title("Internet Protocol Version 6, Src: %s, Dst: %s", v.SrcIP, v.DstIP)
		t.field(1, "Version", "%d", v.Version)
		t.field(1, "Traffic Class", "0x%02x (DSCP: %s, ECN: %s)", v.TrafficClass, dscpShort(v.TrafficClass>>2), ecnShort(v.TrafficClass))
		t.field(2, "Differentiated Services Codepoint", "%s (%d)", dscpName(v.TrafficClass>>2), v.TrafficClass>>2)
		t.field(2, "Explicit Congestion Notification", "%s (%d)", ecnName(v.TrafficClass), v.TrafficClass&3)
		t.field(1, "Flow Label", "0x%05x", v.FlowLabel)
		t.field(1, "Payload Length", "%d", v.Length)
		t.field(1, "Next Header", "%s (%d)", v.NextHeader, uint8(v.NextHeader))
		t.field(1, "Hop Limit", "%d", v.HopLimit)
		t.field(1, "Source Address", "%s", v.SrcIP)
		t.field(1, "Destination Address", "%s", v.DstIP)
	case *gplayers.UDP:
		t.udp(v, p)
	case *gplayers.GRE:
		t.gre(v)
	case *gplayers.ERSPANII:
		t.erspan2(v)
	case *gplayers.VXLAN:
		t.vxlan(v)
	case *gplayers.Geneve:
		t.geneve(v)
	case *gplayers.MPLS:
		t.mpls(v)
	case *layers.ERSPANIII:
		t.erspan3(v)
	case *layers.MACControl:
		t.macControl(v, t.linkBps)
	case *layers.ERF:
		t.title("Extensible Record Format, type %d", v.Type)
		t.field(1, "Record Length", "%d", v.RLen)
		t.field(1, "Wire Length", "%d", v.WLen)
		t.field(1, "Loss Counter", "%d", v.LossCounter)
		if v.HasExtHdr {
			t.field(1, "Extension Headers", "%x", v.ExtHeaders)
		}
	case *layers.LRH:
		t.lrh(v, p)
	case *layers.GRH:
		t.title("InfiniBand Global Route Header, Src GID: %s, Dst GID: %s", shortGID(v.SGID), shortGID(v.DGID))
		t.field(1, "IP Version", "%d", v.IPVer)
		t.field(1, "Traffic Class", "0x%02x", v.TClass)
		t.field(1, "Flow Label", "0x%05x", v.FlowLabel)
		t.field(1, "Payload Length", "%d", v.PayLen)
		nh := "unknown"
		if v.NxtHdr == 0x1B {
			nh = "IBA transport (BTH)"
		}
		t.field(1, "Next Header", "0x%02x (%s)", v.NxtHdr, nh)
		t.field(1, "Hop Limit", "%d", v.HopLmt)
		t.field(1, "Source GID", "%s", gidString(v.SGID))
		t.field(1, "Destination GID", "%s", gidString(v.DGID))
	case *layers.BTH:
		t.bth(v)
	case *layers.RDETH:
		if bth != nil && bth.DC {
			t.title("DC header, 4 bytes in RDETH's place (NVIDIA DC: meaning not public)")
			t.field(1, "Bytes", "%x", v.Contents)
			return
		}
		t.title("RDETH - Reliable Datagram Extended Transport Header")
		t.field(1, "EE Context", "0x%06x", v.EECnxt)
	case *layers.DETH:
		if bth != nil && bth.DC {
			t.title("DC header, 8 bytes in DETH's place (NVIDIA DC: meaning not public)")
			t.field(1, "Q_Key field", "0x%08x", v.QKey)
			t.field(1, "Source QP field", "0x%06x", v.SrcQP)
			return
		}
		t.title("DETH - Datagram Extended Transport Header")
		q := ""
		if v.QKey == 0x80010000 {
			q = " (GSI well-known Q_Key)"
		}
		t.field(1, "Queue Key", "0x%08x%s", v.QKey, q)
		t.field(1, "Source QP", "0x%06x", v.SrcQP)
	case *layers.DCETH:
		t.title("DCETH - DC Extended Transport Header (NVIDIA DC, meaning not public)")
		t.field(1, "Word 0", "0x%08x", v.Word0)
		t.field(1, "Word 1", "0x%08x", v.Word1)
	case *layers.XRCETH:
		t.title("XRCETH - XRC Extended Transport Header")
		t.field(1, "XRC SRQ", "0x%06x", v.XRCSRQ)
	case *layers.RETH:
		t.title("RETH - RDMA Extended Transport Header")
		t.field(1, "Virtual Address", "0x%016x", v.VA)
		t.field(1, "Remote Key", "0x%08x", v.RKey)
		t.field(1, "DMA Length", "%d bytes", v.DMALength)
	case *layers.AtomicETH:
		t.title("AtomicETH - Atomic Extended Transport Header")
		t.field(1, "Virtual Address", "0x%016x", v.VA)
		t.field(1, "Remote Key", "0x%08x", v.RKey)
		t.field(1, "Swap (or Add) Data", "0x%016x", v.SwapOrAdd)
		t.field(1, "Compare Data", "0x%016x", v.Compare)
	case *layers.AETH:
		t.aeth(v)
	case *layers.AtomicAckETH:
		t.title("AtomicAckETH - Atomic Acknowledge Extended Transport Header")
		t.field(1, "Original Remote Data", "0x%016x", v.OrigRemoteData)
	case *layers.ImmDt:
		t.title("ImmDt - Immediate Extended Transport Header")
		t.field(1, "Immediate Data", "0x%08x", v.Immediate)
	case *layers.IETH:
		t.title("IETH - Invalidate Extended Transport Header")
		t.field(1, "R_Key to invalidate", "0x%08x", v.RKey)
	case *layers.FETH:
		t.title("FETH - Flush Extended Transport Header")
		t.field(1, "Selectivity Level", "%d (%s)", v.SelectivityLevel, flushSelectivity(v.SelectivityLevel))
		t.field(1, "Placement Type", "0x%x (%s)", v.PlacementType, flushPlacement(v.PlacementType))
	case *layers.CNP:
		t.title("CNP - Congestion Notification Packet body")
		if allZero(v.Reserved[:]) {
			t.field(1, "Reserved", "16 bytes, all zero")
		} else {
			t.field(1, "Reserved", "%x (not zero)", v.Reserved[:])
		}
	case *gopacket.Payload:
		t.payload(*v, p)
	case *cm.MAD:
		t.mad(v, p)
	case *layers.ICRC:
		t.icrc(v, p)
	case *layers.VCRC:
		t.vcrc(v, p)
	case *gopacket.DecodeFailure:
		t.failure(v, p)
	default:
		t.title("%s (%d bytes)", l.LayerType(), len(l.LayerContents()))
	}
}

// failure says what gopacket could not decode. A header cut by the
// capture's snap length was said where it was cut: it is not malformed.
func (t *tree) failure(v *gopacket.DecodeFailure, p *analyze.Packet) {
	err := v.Error()
	if p.CapLength < p.Length && (errors.Is(err, cm.ErrTruncated) || errors.Is(err, layers.ErrTruncated)) {
		if len(v.LayerContents()) > 0 {
			t.note(0, "%d bytes not decoded: the capture cut the header they start (%v)", len(v.LayerContents()), err)
		}
		return
	}
	if n := len(v.LayerContents()); n > 0 {
		t.warn(0, "Malformed: %v (%d bytes not decoded)", err, n)
		return
	}
	t.warn(0, "Malformed: %v", err)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func shortGID(ip net.IP) string {
	if a, ok := netip.AddrFromSlice(ip); ok {
		return a.Unmap().String()
	}
	return fmt.Sprintf("%x", []byte(ip))
}

func etherTypeName(t gplayers.EthernetType) string {
	switch t {
	case gplayers.EthernetTypeIPv4:
		return "IPv4"
	case gplayers.EthernetTypeIPv6:
		return "IPv6"
	case gplayers.EthernetTypeDot1Q:
		return "802.1Q Virtual LAN"
	case gplayers.EthernetTypeQinQ:
		return "802.1ad (QinQ)"
	case 0x8915:
		return "RoCE v1"
	}
	return t.String()
}

func (t *tree) ipv4(v *gplayers.IPv4) {
	t.title("Internet Protocol Version 4, Src: %s, Dst: %s", v.SrcIP, v.DstIP)
	t.field(1, "Version", "%d", v.Version)
	t.field(1, "Header Length", "%d bytes (%d)", int(v.IHL)*4, v.IHL)
	dscp, ecn := v.TOS>>2, v.TOS&3
	t.field(1, "Differentiated Services Field", "0x%02x (DSCP: %s, ECN: %s)", v.TOS, dscpShort(dscp), ecnShort(ecn))
	t.field(2, "Differentiated Services Codepoint", "%s (%d)", dscpName(dscp), dscp)
	t.field(2, "Explicit Congestion Notification", "%s (%d)", ecnName(ecn), ecn)
	t.field(1, "Total Length", "%d", v.Length)
	t.field(1, "Identification", "0x%04x (%d)", v.Id, v.Id)
	var fl []string
	if v.Flags&gplayers.IPv4EvilBit != 0 {
		fl = append(fl, "Reserved bit")
	}
	if v.Flags&gplayers.IPv4DontFragment != 0 {
		fl = append(fl, "Don't fragment")
	}
	if v.Flags&gplayers.IPv4MoreFragments != 0 {
		fl = append(fl, "More fragments")
	}
	if len(fl) == 0 {
		fl = []string{"none"}
	}
	t.field(1, "Flags", "0x%x, %s", uint8(v.Flags), strings.Join(fl, ", "))
	t.field(1, "Fragment Offset", "%d", v.FragOffset)
	t.field(1, "Time to Live", "%d", v.TTL)
	t.field(1, "Protocol", "%s (%d)", v.Protocol, uint8(v.Protocol))
	t.field(1, "Header Checksum", "0x%04x", v.Checksum)
	t.field(1, "Source Address", "%s", v.SrcIP)
	t.field(1, "Destination Address", "%s", v.DstIP)
	if len(v.Options) > 0 {
		t.field(1, "Options", "%d bytes", int(v.IHL)*4-20)
	}
}

func (t *tree) udp(v *gplayers.UDP, p *analyze.Packet) {
	dst := ""
	if p.Encap == analyze.EncapRoCEv2 {
		dst = " (RoCE v2)"
	}
	t.title("User Datagram Protocol, Src Port: %d, Dst Port: %d%s", v.SrcPort, v.DstPort, dst)
	src := ""
	if p.SrcPortRewritten {
		src = fmt.Sprintf(" (written by the capture tool; the sender used %d, see the ICRC)", p.OriginalSrcPort)
	}
	t.field(1, "Source Port", "%d%s", v.SrcPort, src)
	t.field(1, "Destination Port", "%d%s", v.DstPort, dst)
	t.field(1, "Length", "%d", v.Length)
	if v.Checksum == 0 {
		t.field(1, "Checksum", "0x0000 (none; RoCE v2 senders leave it 0)")
	} else {
		t.field(1, "Checksum", "0x%04x", v.Checksum)
	}
}
