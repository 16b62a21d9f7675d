package report

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/filename"
)

// FlowCSVHeader is the header of the CSV flow table (-o csv). Columns
// are only ever added at the end: consumers index them by position.
func FlowCSVHeader() []string { return slices.Clone(flowCSVHeader) }

var flowCSVHeader = []string{
	"src", "dst", "dest_qp", "transport", "connection", "packets", "wire_bytes", "payload_bytes",
	"first_time", "last_time", "duration_seconds", "throughput_bps", "wire_bps",
	"mtu_inferred", "mtu_negotiated", "mtu_max_payload",
	"requests", "psn_first", "psn_last", "missing", "retransmitted", "duplicates", "out_of_order",
	"acks", "naks", "rnr_naks", "read_responses", "atomic_acks", "rtt_median_ns",
	"messages", "message_bytes", "incomplete_messages",
	"ecn_ce", "fecn", "becn", "cnps", "icrc_ok", "icrc_bad", "icrc_unverifiable",
	"priority", "paused_ns", "icrc_port_rewritten", "icrc_original_src_ports",
	"tunnel_kind", "tunnel_id", "tunnel_id_name",
	"ops_send", "ops_write", "ops_write_imm", "ops_read_request", "ops_read_response",
	"ops_atomic", "ops_atomic_ack", "ops_ack", "ops_cnp", "ops_other", "message_size_buckets",
	"active_ns", "active_throughput_bps",
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

// WriteFlowsCSV writes the flow table as CSV, as -o csv does.
func WriteFlowsCSV(w io.Writer, rep *analyze.Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(flowCSVHeader); err != nil {
		return err
	}
	var row []string
	for i := range rep.Flows {
		row = AppendFlowCSVRow(row[:0], &rep.Flows[i])
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

// AppendFlowCSVRow appends the cells of a flow's row in the CSV flow
// table to row and returns it: a writer of many flows passes the row of
// the flow before, emptied (a new row of 41 cells was 704 bytes of
// garbage a flow).
func AppendFlowCSVRow(row []string, f *analyze.Flow) []string {
	conn := ""
	if f.Connection != nil {
		conn = strconv.Itoa(*f.Connection)
	}
	rtt := ""
	if f.Responses.RTT != nil {
		rtt = strconv.FormatInt(f.Responses.RTT.MedianNs, 10)
	}
	// Empty without pause frames in the capture; paused_ns 0 when they
	// never paused the flow's priority while it was active.
	prio, paused := "", ""
	if ns, ok := f.PausedTime(); ok {
		prio, paused = strconv.Itoa(*f.Priority), strconv.FormatInt(ns, 10)
	}
	// Empty for a flow in no tunnel that keys flows (Flow.Tunnel).
	tunKind, tunID, tunIDName := "", "", ""
	if t := f.Tunnel; t != nil {
		tunKind, tunID, tunIDName = t.Kind, u(uint64(t.ID)), t.IDName
	}
	return append(row,
		CSVText(f.Src), CSVText(f.Dst), u(uint64(f.DestQP)), f.Transport, conn, u(f.Packets), u(f.WireBytes), u(f.PayloadBytes),
		f.FirstTime.UTC().Format(time.RFC3339Nano), f.LastTime.UTC().Format(time.RFC3339Nano),
		strconv.FormatFloat(f.LastTime.Sub(f.FirstTime).Seconds(), 'f', 9, 64), optF(f.ThroughputBps), optF(f.WireBps),
		optIntCSV(f.MTU.Inferred), optIntCSV(f.MTU.Negotiated), strconv.Itoa(f.MTU.MaxPayload),
		u(f.Requests.Packets), optU32(f.Requests.PSNFirst), optU32(f.Requests.PSNLast), u(f.Requests.Missing),
		u(f.Requests.Retransmitted), u(f.Requests.Duplicates), u(f.Requests.OutOfOrder),
		u(f.Responses.ACKs), u(f.Responses.NAKs), u(f.Responses.RNRNAKs), u(f.Responses.ReadResponses), u(f.Responses.AtomicACKs), rtt,
		u(f.Messages.Count), u(f.Messages.Bytes), u(f.Messages.Incomplete),
		u(f.Congestion.ECNCE), u(f.Congestion.FECN), u(f.Congestion.BECN), u(f.Congestion.CNPs),
		u(f.ICRC.OK), u(f.ICRC.Bad), u(f.ICRC.Unverifiable),
		prio, paused, u(f.ICRC.PortRewritten), srcPortList(f, " "),
		tunKind, tunID, tunIDName,
		u(f.Ops.Send), u(f.Ops.Write), u(f.Ops.WriteImm), u(f.Ops.ReadRequest), u(f.Ops.ReadResponse),
		u(f.Ops.Atomic), u(f.Ops.AtomicACK), u(f.Ops.ACK), u(f.Ops.CNP), u(f.Ops.Other),
		analyze.SizeBucketsText(f.Messages.SizeBuckets),
		strconv.FormatInt(f.ActiveNs, 10), optF(f.ActiveThroughputBps),
	)
}

// CSVText is s as a CSV cell that a spreadsheet reads as text, never as
// a formula: a cell that begins with =, +, -, @, a tab or a carriage
// return gets a ' before it (OWASP, "CSV Injection"), and bytes that
// are not valid UTF-8 are U+FFFD, as in JSON (filename.UTF8).
// Capture-derived text (file names, addresses) goes through it; numbers
// do not.
func CSVText(s string) string {
	s = filename.UTF8(s)
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
