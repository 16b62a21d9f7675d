package cli

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// The headers of `-P -o json` beyond the transport ones: the ECN bits of
// the network header, the native IB route headers and CRC, the rarer
// extension headers, the CNP body, and the kinds of the frame's findings.

// ecnJSON is the ECN field of the IP header (RoCE v2) or the low two bits
// of the GRH traffic class (RoCE v1, native IB with a GRH).
type ecnJSON struct {
	Value uint8  `json:"value"`
	Name  string `json:"name"` // Not-ECT, ECT(1), ECT(0) or CE
}

type lrhJSON struct {
	VL     uint8  `json:"vl"`
	LVer   uint8  `json:"lver"`
	SL     uint8  `json:"sl"`
	LNH    uint8  `json:"lnh"`
	DLID   uint16 `json:"dlid"`
	PktLen uint16 `json:"pkt_len_words"`
	SLID   uint16 `json:"slid"`
}

type grhJSON struct {
	IPVer     uint8  `json:"ip_ver"`
	TClass    uint8  `json:"tclass"`
	FlowLabel uint32 `json:"flow_label"`
	PayLen    uint16 `json:"pay_len"`
	NxtHdr    uint8  `json:"nxt_hdr"`
	HopLmt    uint8  `json:"hop_lmt"`
	SGID      string `json:"sgid"`
	DGID      string `json:"dgid"`
}

type rdethJSON struct {
	EECnxt uint32 `json:"ee_context"`
}

type xrcethJSON struct {
	XRCSRQ uint32 `json:"xrc_srq"`
}

type fethJSON struct {
	SelectivityLevel uint8 `json:"selectivity_level"`
	PlacementType    uint8 `json:"placement_type"`
}

// cnpJSON is the 16-byte body of a congestion notification packet.
type cnpJSON struct {
	Reserved string `json:"reserved"` // 32 hex digits, zero when sent
}

// rdmaCMJSON is the RDMA CM IP header of a REQ's private data, with the
// destination port of its service ID.
type rdmaCMJSON struct {
	IPVersion uint8  `json:"ip_version"`
	SrcIP     string `json:"src_ip"`
	SrcPort   uint16 `json:"src_port"`
	DstIP     string `json:"dst_ip"`
	DstPort   uint16 `json:"dst_port"`
	PortSpace string `json:"port_space"`
}

func rdmaCMObject(m *cm.ConnectRequest) *rdmaCMJSON {
	ip, ok := m.IPPrivateData()
	if !ok {
		return nil
	}
	return &rdmaCMJSON{IPVersion: ip.IPVersion, SrcIP: ip.SourceIP.String(), SrcPort: ip.SourcePort,
		DstIP: ip.DestinationIP.String(), DstPort: m.ServiceID.Port(), PortSpace: m.ServiceID.PortSpace().String()}
}

// addHeaders fills the keys of o this file defines. rel is the packet's
// time since its file's first frame; file is "" unless several files are
// read; findings are the frame's (Analyzer.FrameFindings).
func addHeaders(o *packetJSON, p *analyze.Packet, rel time.Duration, file string, findings []analyze.Finding) {
	o.File = file
	o.TimeRelativeSeconds = rel.Seconds()
	if p.Encap == analyze.EncapRoCEv2 || p.GRH != nil {
		o.ECN = &ecnJSON{Value: p.ECN, Name: ecnShort(p.ECN)}
	}
	if h := p.LRH; h != nil {
		o.LRH = &lrhJSON{VL: h.VL, LVer: h.LVer, SL: h.SL, LNH: h.LNH, DLID: h.DLID, PktLen: h.PktLen, SLID: h.SLID}
	}
	if h := p.GRH; h != nil {
		o.GRH = &grhJSON{IPVer: h.IPVer, TClass: h.TClass, FlowLabel: h.FlowLabel, PayLen: h.PayLen, NxtHdr: h.NxtHdr, HopLmt: h.HopLmt,
			SGID: h.SGID.String(), DGID: h.DGID.String()}
	}
	if h := p.RDETH; h != nil {
		o.RDETH = &rdethJSON{EECnxt: h.EECnxt}
	}
	if h := p.XRCETH; h != nil {
		o.XRCETH = &xrcethJSON{XRCSRQ: h.XRCSRQ}
	}
	if h := p.FETH; h != nil {
		o.FETH = &fethJSON{SelectivityLevel: h.SelectivityLevel, PlacementType: h.PlacementType}
	}
	if h := p.CNP; h != nil {
		o.CNP = &cnpJSON{Reserved: fmt.Sprintf("%x", h.Reserved[:])}
	}
	if v := p.VCRC; v != nil {
		o.VCRC = &icrcJSON{Status: v.Status.String(), Value: layers.VCRCWire(v.Value)}
		if v.Status == layers.ICRCBad {
			o.VCRC.Expected = layers.VCRCWire(v.Expected)
		}
	}
	for _, fd := range findings {
		o.FindingKinds = append(o.FindingKinds, string(fd.Kind))
	}
	o.Wraps = wrapObjects(p.Wraps)
	if p.Priority >= 0 {
		o.Priority = ptr(int(p.Priority))
	}
}
