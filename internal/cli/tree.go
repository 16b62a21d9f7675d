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
	w   io.Writer
	pal report.Palette
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
// then what could not be decoded and the frame's findings.
func (r *runner) writeTree(p *analyze.Packet, f *frame, rel time.Duration, file string, findings []analyze.Finding) {
	t := &tree{w: r.stdout, pal: r.pal}
	head := fmt.Sprintf("Frame %d: %d bytes on wire, %d captured, %.9f s", p.Frame, p.Length, p.CapLength, rel.Seconds())
	if file != "" {
		head += ", file " + file
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
		t.crc("Invariant CRC", layers.ICRCWire(v.Value), layers.ICRCWire(v.Expected), v.Status, p)
	case *layers.VCRC:
		t.crc("Variant CRC", layers.VCRCWire(v.Value), layers.VCRCWire(v.Expected), v.Status, nil)
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

func (t *tree) lrh(v *layers.LRH, p *analyze.Packet) {
	t.title("InfiniBand Local Route Header, SLID: %d, DLID: %d", v.SLID, v.DLID)
	vl := ""
	if v.VL == 15 {
		vl = " (VL15: subnet management)"
	}
	t.field(1, "Virtual Lane", "%d%s", v.VL, vl)
	t.field(1, "Link Version", "%d", v.LVer)
	t.field(1, "Service Level", "%d", v.SL)
	lnh := [...]string{"raw (non-IBA transport)", "raw IPv6", "IBA local (BTH follows)", "IBA global (GRH follows)"}[v.LNH&3]
	t.field(1, "Link Next Header", "%d, %s", v.LNH, lnh)
	t.field(1, "Destination LID", "%d", v.DLID)
	t.field(1, "Packet Length", "%d words (%d bytes, LRH through ICRC)", v.PktLen, int(v.PktLen)*4)
	t.field(1, "Source LID", "%d", v.SLID)
	_ = p
}

func (t *tree) bth(v *layers.BTH) {
	name := v.OpcodeName()
	t.title("Base Transport Header, %s, QP 0x%06x, PSN %d", name, v.DestQP, v.PSN)
	kind := v.Opcode.Transport().String()
	if v.DC {
		kind = "DC (NVIDIA Dynamically Connected, on an RD opcode)"
	}
	t.field(1, "Opcode", "%s (0x%02x), transport %s", name, uint8(v.Opcode), kind)
	t.field(1, "Solicited Event", "%s", yesNo(v.SolicitedEvent))
	t.field(1, "MigReq", "%s", yesNo(v.MigReq))
	t.field(1, "Pad Count", "%d", v.PadCnt)
	t.field(1, "Header Version", "%d", v.TVer)
	pk := ""
	if v.PKey == 0xFFFF {
		pk = " (default partition, full member)"
	}
	t.field(1, "Partition Key", "0x%04x%s", v.PKey, pk)
	t.field(1, "FECN", "%s", yesNo(v.FECN))
	t.field(1, "BECN", "%s", yesNo(v.BECN))
	if v.Resv6 != 0 {
		t.field(1, "Reserved (6 bits)", "0x%02x (should be 0)", v.Resv6)
	}
	t.field(1, "Destination QP", "0x%06x (%d)", v.DestQP, v.DestQP)
	t.field(1, "Acknowledge Request", "%s", yesNo(v.AckReq))
	if v.Resv7 != 0 {
		t.field(1, "Reserved (7 bits)", "0x%02x (should be 0)", v.Resv7)
	}
	t.field(1, "Packet Sequence Number", "%d (0x%06x)", v.PSN, v.PSN)
	if v.Truncated {
		t.note(1, "cut by the capture: no ICRC, payload incomplete")
	}
}

func (t *tree) aeth(v *layers.AETH) {
	var meaning string
	switch v.Type() {
	case layers.AckTypeACK:
		if v.Credits() == layers.CreditsUnlimited {
			meaning = "ACK, credits unlimited"
		} else {
			meaning = fmt.Sprintf("ACK, %d credits (code)", v.Credits())
		}
	case layers.AckTypeRNRNAK:
		meaning = fmt.Sprintf("RNR NAK, timer %s (code %d)", v.RNRTimer(), v.Value())
	case layers.AckTypeNAK:
		meaning = fmt.Sprintf("NAK, %s (code %d)", v.NAKCode(), v.Value())
	default:
		meaning = "reserved syndrome"
	}
	t.title("AETH - ACK Extended Transport Header, %s", meaning)
	t.field(1, "Syndrome", "0x%02x (%s)", v.Syndrome, meaning)
	t.field(2, "Type", "%s", v.Type())
	switch v.Type() {
	case layers.AckTypeACK:
		t.field(2, "Credit Count", "%d", v.Credits())
	case layers.AckTypeRNRNAK:
		t.field(2, "RNR Timer", "%d (%s)", v.Value(), v.RNRTimer())
	case layers.AckTypeNAK:
		t.field(2, "NAK Code", "%d (%s)", v.Value(), v.NAKCode())
	}
	t.field(1, "Message Sequence Number", "%d", v.MSN)
}

func flushSelectivity(s uint8) string {
	return [...]string{"memory region", "memory region range", "reserved", "reserved"}[s&3]
}

func flushPlacement(p uint8) string {
	var w []string
	if p&1 != 0 {
		w = append(w, "global visibility")
	}
	if p&2 != 0 {
		w = append(w, "persistence")
	}
	if len(w) == 0 {
		return "none"
	}
	return strings.Join(w, ", ")
}

func (t *tree) payload(b []byte, p *analyze.Packet) {
	switch {
	case p.PayloadLen >= 0 && p.PayloadLen != len(b):
		t.title("Data (%d bytes, %d captured)", p.PayloadLen, len(b))
	default:
		t.title("Data (%d bytes)", len(b))
	}
	if len(b) > 0 {
		t.field(1, "Bytes", "%s", hexBytes(b))
	}
}

func (t *tree) crc(name, value, expected string, st layers.ICRCStatus, p *analyze.Packet) {
	switch st {
	case layers.ICRCOK:
		t.title("%s: %s [correct]", name, value)
		if p != nil && p.SrcPortRewritten {
			t.note(1, "verified with UDP source port %d: the capture tool wrote 4791 in its place", p.OriginalSrcPort)
		}
	case layers.ICRCBad:
		t.title("%s: %s [incorrect, should be %s]", name, value, expected)
	default:
		t.title("%s: %s [not verified]", name, value)
	}
}

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
