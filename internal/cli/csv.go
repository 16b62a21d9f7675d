package cli

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
)

var flowCSVHeader = []string{
	"src", "dst", "dest_qp", "transport", "connection", "packets", "wire_bytes", "payload_bytes",
	"first_time", "last_time", "duration_seconds", "throughput_bps", "wire_bps",
	"mtu_inferred", "mtu_negotiated", "mtu_max_payload",
	"requests", "psn_first", "psn_last", "missing", "retransmitted", "duplicates", "out_of_order",
	"acks", "naks", "rnr_naks", "read_responses", "atomic_acks", "rtt_median_ns",
	"messages", "message_bytes", "incomplete_messages",
	"ecn_ce", "fecn", "becn", "cnps", "icrc_ok", "icrc_bad", "icrc_unverifiable",
}

func optU32(v *uint32) string {
	if v == nil {
		return ""
	}
	return strconv.FormatUint(uint64(*v), 10)
}

func optF(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 0, 64)
}

func optIntCSV(v *int) string {
	if v == nil {
		return ""
	}
	return strconv.Itoa(*v)
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }

// writeFlowsCSV writes the flow table.
func writeFlowsCSV(w io.Writer, rep *analyze.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(flowCSVHeader); err != nil {
		return err
	}
	for i := range rep.Flows {
		_ = cw.Write(flowCSVRow(&rep.Flows[i]))
	}
	cw.Flush()
	return cw.Error()
}

// flowCSVRow is the row of a flow in the flow table.
func flowCSVRow(f *analyze.Flow) []string {
	conn := ""
	if f.Connection != nil {
		conn = strconv.Itoa(*f.Connection)
	}
	rtt := ""
	if f.Responses.RTT != nil {
		rtt = strconv.FormatInt(f.Responses.RTT.MedianNs, 10)
	}
	return []string{
		f.Src, f.Dst, u(uint64(f.DestQP)), f.Transport, conn, u(f.Packets), u(f.WireBytes), u(f.PayloadBytes),
		f.FirstTime.UTC().Format(time.RFC3339Nano), f.LastTime.UTC().Format(time.RFC3339Nano),
		strconv.FormatFloat(f.LastTime.Sub(f.FirstTime).Seconds(), 'f', 9, 64), optF(f.ThroughputBps), optF(f.WireBps),
		optIntCSV(f.MTU.Inferred), optIntCSV(f.MTU.Negotiated), strconv.Itoa(f.MTU.MaxPayload),
		u(f.Requests.Packets), optU32(f.Requests.PSNFirst), optU32(f.Requests.PSNLast), u(f.Requests.Missing),
		u(f.Requests.Retransmitted), u(f.Requests.Duplicates), u(f.Requests.OutOfOrder),
		u(f.Responses.ACKs), u(f.Responses.NAKs), u(f.Responses.RNRNAKs), u(f.Responses.ReadResponses), u(f.Responses.AtomicACKs), rtt,
		u(f.Messages.Count), u(f.Messages.Bytes), u(f.Messages.Incomplete),
		u(f.Congestion.ECNCE), u(f.Congestion.FECN), u(f.Congestion.BECN), u(f.Congestion.CNPs),
		u(f.ICRC.OK), u(f.ICRC.Bad), u(f.ICRC.Unverifiable),
	}
}

var packetCSVHeader = []string{
	"frame", "time", "src", "dst", "opcode", "opcode_name", "dest_qp", "psn", "ack_req", "fecn", "becn", "pkey",
	"reth_va", "reth_rkey", "reth_dma_length", "aeth_syndrome", "aeth_msn", "deth_qkey", "deth_src_qp",
	"immdt", "ieth", "payload_len", "icrc_status", "mad_attribute", "error", "findings",
}

// packetCSVExtraHeader are the columns added after packetCSVHeader's:
// the time since the file's first frame, the file (several files), the
// ECN field and the kinds of the frame's findings (space-separated).
var packetCSVExtraHeader = []string{"time_relative_seconds", "file", "ecn", "finding_kinds"}

func packetCSVExtra(p *analyze.Packet, rel time.Duration, file string, findings []analyze.Finding) []string {
	ecn := ""
	if p.Encap == analyze.EncapRoCEv2 || p.GRH != nil {
		ecn = ecnShort(p.ECN)
	}
	kinds := make([]string, 0, len(findings))
	for _, fd := range findings {
		kinds = append(kinds, string(fd.Kind))
	}
	return []string{strconv.FormatFloat(rel.Seconds(), 'f', 9, 64), file, ecn, strings.Join(kinds, " ")}
}

func packetCSVRow(p *analyze.Packet, rel time.Duration) []string {
	row := make([]string, len(packetCSVHeader))
	row[0] = u(p.Frame)
	row[1] = p.Time.UTC().Format(time.RFC3339Nano) // as -o json; time_relative_seconds is relative
	row[2], row[3] = p.Src.String(), p.Dst.String()
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
