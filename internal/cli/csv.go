package cli

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/report"
)

// u writes an unsigned integer in decimal.
func u(v uint64) string { return strconv.FormatUint(v, 10) }

var packetCSVHeader = []string{
	"frame", "time", "src", "dst", "opcode", "opcode_name", "dest_qp", "psn", "ack_req", "fecn", "becn", "pkey",
	"reth_va", "reth_rkey", "reth_dma_length", "aeth_syndrome", "aeth_msn", "deth_qkey", "deth_src_qp",
	"immdt", "ieth", "payload_len", "icrc_status", "mad_attribute", "error", "findings",
}

// packetCSVExtraHeader are the columns added after packetCSVHeader's:
// the time since the file's first frame, the file (several files), the
// ECN field and the kinds of the frame's findings (space-separated).
var packetCSVExtraHeader = []string{"time_relative_seconds", "file", "ecn", "finding_kinds"}

// packetCSVExtra is the end of a packet's -P -o csv row: its time since
// the file's first frame (rel), its file (file: "" for one file), its ECN
// field and the kinds of its frame's findings.
func packetCSVExtra(p *analyze.Packet, rel time.Duration, file string, findings []analyze.Finding) []string {
	ecn := ""
	if p.Encap == analyze.EncapRoCEv2 || p.GRH != nil {
		ecn = ecnShort(p.ECN)
	}
	kinds := make([]string, 0, len(findings))
	for _, fd := range findings {
		kinds = append(kinds, string(fd.Kind))
	}
	return []string{strconv.FormatFloat(rel.Seconds(), 'f', 9, 64), report.CSVText(file), ecn, strings.Join(kinds, " ")}
}

// packetCSVICRCHeader are the last columns of -P -o csv, after
// packetCSVWrapHeader's: the ICRC's value as Wireshark shows it and the
// UDP source port it verified with when the capture tool rewrote the
// port (icrc_status is the verdict), as -P -o json's icrc object.
var packetCSVICRCHeader = []string{"icrc_value", "icrc_original_src_port"}

// packetCSVICRC is the end of p's -P -o csv row (packetCSVICRCHeader).
func packetCSVICRC(p *analyze.Packet) []string {
	row := make([]string, len(packetCSVICRCHeader))
	if p.BTH != nil {
		o := icrcObject(p)
		row[0] = o.Value
		if o.OriginalSrcPort != nil {
			row[1] = u(uint64(*o.OriginalSrcPort))
		}
	}
	return row
}

// packetCSVRow is the start of a packet's -P -o csv row (its headers'
// fields), rel its time since the file's first frame.
func packetCSVRow(p *analyze.Packet, rel time.Duration) []string {
	row := make([]string, len(packetCSVHeader))
	row[0] = u(p.Frame)
	row[1] = p.Time.UTC().Format(time.RFC3339Nano) // as -o json; time_relative_seconds is relative
	row[2], row[3] = report.CSVText(p.Src.String()), report.CSVText(p.Dst.String())
	if b := p.BTH; b != nil {
		row[4], row[5] = strconv.Itoa(int(b.Opcode)), b.OpcodeName()
		row[6], row[7] = u(uint64(b.DestQP)), u(uint64(b.PSN))
		row[8], row[9], row[10] = strconv.FormatBool(b.AckReq), strconv.FormatBool(b.FECN), strconv.FormatBool(b.BECN)
		row[11] = u(uint64(b.PKey))
		row[22] = p.ICRC.Status.String()
	}
	if h := p.RETH; h != nil {
		row[12], row[13], row[14] = hex64(h.VA), u(uint64(h.RKey)), u(uint64(h.DMALength))
	}
	if h := p.AETH; h != nil {
		row[15], row[16] = u(uint64(h.Syndrome)), u(uint64(h.MSN))
	}
	if h := p.DETH; h != nil {
		row[17], row[18] = u(uint64(h.QKey)), u(uint64(h.SrcQP))
	}
	if h := p.ImmDt; h != nil {
		row[19] = u(uint64(h.Immediate))
	}
	if h := p.IETH; h != nil {
		row[20] = u(uint64(h.RKey))
	}
	if p.PayloadLen >= 0 {
		row[21] = strconv.Itoa(p.PayloadLen)
	}
	if mad := p.MADLayer; mad != nil {
		row[23] = fmt.Sprintf("%s %s", mad.Header.MgmtClass, mad.Header.AttributeName())
	}
	if p.Err != nil {
		row[24] = p.Err.Error()
	}
	row[25] = strconv.Itoa(p.Findings)
	return row
}
