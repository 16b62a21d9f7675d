package cli

import (
	"fmt"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// The InfiniBand part of the -V tree: LRH, BTH, AETH, FLUSH, the
// payload and the ICRC/VCRC.

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

// icrc writes the ICRC with the analyzer's verdict on it (p.ICRC, and
// the source port it was computed with when the capture tool rewrote
// it), the one every view shows; the layer's own Status is the check of
// the packet as captured, which fails on a NIC sniffer's rewritten port.
// A packet the analyzer decoded no BTH of keeps the layer's check.
func (t *tree) icrc(v *layers.ICRC, p *analyze.Packet) {
	st, exp := v.Status, v.Expected
	if p.BTH != nil {
		st, exp = p.ICRC.Status, p.ICRC.Expected
	}
	rewritten := ""
	if st == layers.ICRCOK && p.SrcPortRewritten {
		rewritten = fmt.Sprintf("computed with the original UDP source port %d: the capture tool rewrote it", p.OriginalSrcPort)
	}
	t.crc("Invariant CRC", layers.ICRCWire(v.Value), layers.ICRCWire(exp), st, rewritten)
}

// vcrc writes the VCRC with the analyzer's verdict on it (p.VCRC; none
// with --no-icrc: not verified), as icrc does the ICRC's.
func (t *tree) vcrc(v *layers.VCRC, p *analyze.Packet) {
	st, exp := v.Status, v.Expected
	switch {
	case p.VCRC != nil:
		st, exp = p.VCRC.Status, p.VCRC.Expected
	case p.BTH != nil:
		st = layers.ICRCUnverifiable
	}
	t.crc("Variant CRC", layers.VCRCWire(v.Value), layers.VCRCWire(exp), st, "")
}

// crc writes a CRC's title: its value and verdict, why it is correct
// when that needs saying.
func (t *tree) crc(name, value, expected string, st layers.ICRCStatus, why string) {
	switch st {
	case layers.ICRCOK:
		if why != "" {
			t.title("%s: %s [correct, %s]", name, value, why)
			return
		}
		t.title("%s: %s [correct]", name, value)
	case layers.ICRCBad:
		t.title("%s: %s [incorrect, should be %s]", name, value, expected)
	default:
		t.title("%s: %s [not verified]", name, value)
	}
}
