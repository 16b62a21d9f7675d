// Package export writes an analysis as Parquet tables (docs/parquet.md):
// packets (one row per RDMA packet, written as the packets are fed),
// flows, connections and findings (written from the report). Columns are
// Snappy-compressed (zstd cost 4× the analysis; docs/parquet.md); strings that repeat (addresses, opcode names, kinds)
// are dictionary-encoded.
package export

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// Table file names in the export directory. Packets go to one file per
// capture (or per range of one with -j): PacketsFile(file, part).
const (
	FlowsFile       = "flows.parquet"
	ConnectionsFile = "connections.parquet"
	FindingsFile    = "findings.parquet"
)

// PacketsFile is the name of the packets file of an export for part part
// (a range with -j, else 0) of the run's file-th capture (from 0): in
// name order, the files hold the packets in capture and frame order.
func PacketsFile(file, part int) string {
	return fmt.Sprintf("packets-%05d-%03d.parquet", file, part)
}

// rowGroupRows bounds the rows of a row group, and so the memory of a
// packets writer: a row group is held until it is full.
const rowGroupRows = 1 << 16

// batchRows is how many rows a PacketWriter collects before handing them
// to the Parquet writer.
const batchRows = 1024

func options() []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(&parquet.Snappy),
		parquet.MaxRowsPerRowGroup(rowGroupRows),
		parquet.CreatedBy("roce-dissect", "", ""),
	}
}

// PacketRow is one row of the packets table: one RDMA frame (RoCE v2,
// RoCE v1 or native IB; malformed ones too, with Error set). Header
// columns are null when the frame had no such header.
type PacketRow struct {
	File        string  `parquet:"file,dict"`
	Frame       uint64  `parquet:"frame"`
	Time        int64   `parquet:"time,timestamp(nanosecond)"`
	Encap       string  `parquet:"encap,dict"`
	Src         string  `parquet:"src,dict"`
	Dst         string  `parquet:"dst,dict"`
	VLAN        *int32  `parquet:"vlan,optional"`
	ECN         uint8   `parquet:"ecn"`
	Length      int32   `parquet:"length"`
	CapLength   int32   `parquet:"cap_length"`
	DestQP      *uint32 `parquet:"dest_qp,optional"`
	Opcode      *uint8  `parquet:"opcode,optional"`
	OpcodeName  *string `parquet:"opcode_name,optional,dict"`
	PSN         *uint32 `parquet:"psn,optional"`
	AckReq      *bool   `parquet:"ack_req,optional"`
	SE          *bool   `parquet:"se,optional"`
	FECN        *bool   `parquet:"fecn,optional"`
	BECN        *bool   `parquet:"becn,optional"`
	PKey        *uint16 `parquet:"pkey,optional"`
	PayloadLen  *int32  `parquet:"payload_len,optional"`
	AETHType    *string `parquet:"aeth_type,optional,dict"`
	AETHMSN     *uint32 `parquet:"aeth_msn,optional"`
	RETHLength  *uint32 `parquet:"reth_dma_length,optional"`
	ICRC        *string `parquet:"icrc,optional,dict"`
	PortRewrite bool    `parquet:"icrc_port_rewritten"`
	Truncated   bool    `parquet:"truncated"`
	Findings    int32   `parquet:"findings"`
	Error       *string `parquet:"error,optional"`

	v values // what the optional columns point to: no allocation per row
}

// values backs the optional columns of a PacketRow.
type values struct {
	vlan, payloadLen                int32
	destQP, psn, msn, dmaLen        uint32
	opcode                          uint8
	opcodeName, icrc, aethType, err string
	ackReq, se, fecn, becn          bool
	pkey                            uint16
}

// PacketWriter streams the packets table of one capture (or range) to a
// file: rows are batched and written a row group at a time, so memory
// stays bounded whatever the capture's length.
type PacketWriter struct {
	addrs map[analyze.Addr]string // the addresses' text, made once each
	f     *os.File
	w     *parquet.GenericWriter[PacketRow]
	file  string
	batch []PacketRow
	err   error
}

// NewPacketWriter creates path and writes the packets of the capture file
// named file to it.
func NewPacketWriter(path, file string) (*PacketWriter, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	return &PacketWriter{addrs: map[analyze.Addr]string{}, f: f, w: parquet.NewGenericWriter[PacketRow](f, options()...), file: file, batch: make([]PacketRow, 0, batchRows)}, nil
}

// Add writes p as a row when it is an RDMA packet, and ignores it
// otherwise. Errors are kept for Close.
func (pw *PacketWriter) Add(p *analyze.Packet) {
	if !p.IsRDMA || pw.err != nil {
		return
	}
	pw.batch = pw.batch[:len(pw.batch)+1]
	pw.packetRow(&pw.batch[len(pw.batch)-1], p)
	if len(pw.batch) == cap(pw.batch) {
		pw.flush()
	}
}

func (pw *PacketWriter) flush() {
	if len(pw.batch) == 0 || pw.err != nil {
		return
	}
	_, pw.err = pw.w.Write(pw.batch)
	clear(pw.batch)
	pw.batch = pw.batch[:0]
}

// Close writes the rows still batched and the file's footer.
func (pw *PacketWriter) Close() error {
	pw.flush()
	if err := pw.w.Close(); err != nil && pw.err == nil {
		pw.err = err
	}
	if err := pw.f.Close(); err != nil && pw.err == nil {
		pw.err = err
	}
	return pw.err
}

func ptr[T any](v T) *T { return &v }

// addr returns the text of a, from the writer's cache (a capture has
// few addresses; String allocates).
func (pw *PacketWriter) addr(a analyze.Addr) string {
	s, ok := pw.addrs[a]
	if !ok {
		s = a.String()
		if len(pw.addrs) < 1<<16 {
			pw.addrs[a] = s
		}
	}
	return s
}

// packetRow fills r, an element of the batch, with the analyzer's view of
// a frame; its optional columns point into r itself.
func (pw *PacketWriter) packetRow(r *PacketRow, p *analyze.Packet) {
	*r = PacketRow{
		File: pw.file, Frame: p.Frame, Time: p.Time.UnixNano(), Encap: p.Encap.String(),
		Src: pw.addr(p.Src), Dst: pw.addr(p.Dst), ECN: p.ECN,
		Length: int32(p.Length), CapLength: int32(p.CapLength),
		PortRewrite: p.SrcPortRewritten, Truncated: p.Truncated, Findings: int32(p.Findings),
	}
	v := &r.v
	if p.VLAN >= 0 {
		v.vlan = int32(p.VLAN)
		r.VLAN = &v.vlan
	}
	if b := p.BTH; b != nil {
		v.destQP, v.opcode, v.opcodeName, v.psn = b.DestQP, uint8(b.Opcode), b.OpcodeName(), b.PSN
		v.ackReq, v.se, v.fecn, v.becn, v.pkey = b.AckReq, b.SolicitedEvent, b.FECN, b.BECN, b.PKey
		v.icrc = p.ICRC.Status.String()
		r.DestQP, r.Opcode, r.OpcodeName, r.PSN = &v.destQP, &v.opcode, &v.opcodeName, &v.psn
		r.AckReq, r.SE, r.FECN, r.BECN, r.PKey = &v.ackReq, &v.se, &v.fecn, &v.becn, &v.pkey
		r.ICRC = &v.icrc
	}
	if p.PayloadLen >= 0 {
		v.payloadLen = int32(p.PayloadLen)
		r.PayloadLen = &v.payloadLen
	}
	if a := p.AETH; a != nil {
		v.aethType, v.msn = a.Type().String(), a.MSN
		r.AETHType, r.AETHMSN = &v.aethType, &v.msn
	}
	if p.RETH != nil {
		v.dmaLen = p.RETH.DMALength
		r.RETHLength = &v.dmaLen
	}
	if p.Err != nil {
		v.err = p.Err.Error()
		r.Error = &v.err
	}
}

// FlowRow is one row of the flows table (see analyze.Flow and
// docs/json.md for each figure).
type FlowRow struct {
	Capture            string   `parquet:"capture,dict"`
	Src                string   `parquet:"src,dict"`
	Dst                string   `parquet:"dst,dict"`
	DestQP             uint32   `parquet:"dest_qp"`
	Transport          string   `parquet:"transport,dict"`
	Connection         *int32   `parquet:"connection,optional"`
	Packets            uint64   `parquet:"packets"`
	WireBytes          uint64   `parquet:"wire_bytes"`
	PayloadBytes       uint64   `parquet:"payload_bytes"`
	FirstTime          int64    `parquet:"first_time,timestamp(nanosecond)"`
	LastTime           int64    `parquet:"last_time,timestamp(nanosecond)"`
	RequestPackets     uint64   `parquet:"request_packets"`
	PSNFirst           *uint32  `parquet:"psn_first,optional"`
	PSNLast            *uint32  `parquet:"psn_last,optional"`
	Missing            uint64   `parquet:"missing"`
	MissingNotCaptured uint64   `parquet:"missing_not_captured"`
	MissingLost        uint64   `parquet:"missing_lost"`
	Gaps               uint32   `parquet:"gaps"`
	Retransmitted      uint64   `parquet:"retransmitted"`
	Duplicates         uint64   `parquet:"duplicates"`
	OutOfOrder         uint64   `parquet:"out_of_order"`
	ResponsePackets    uint64   `parquet:"response_packets"`
	ACKs               uint64   `parquet:"acks"`
	NAKs               uint64   `parquet:"naks"`
	RNRNAKs            uint64   `parquet:"rnr_naks"`
	ReadResponses      uint64   `parquet:"read_responses"`
	AtomicACKs         uint64   `parquet:"atomic_acks"`
	RTTSamples         uint64   `parquet:"rtt_samples"`
	RTTMinNs           *int64   `parquet:"rtt_min_ns,optional"`
	RTTMedianNs        *int64   `parquet:"rtt_median_ns,optional"`
	RTTMaxNs           *int64   `parquet:"rtt_max_ns,optional"`
	Messages           uint64   `parquet:"messages"`
	MessageBytes       uint64   `parquet:"message_bytes"`
	Incomplete         uint64   `parquet:"incomplete_messages"`
	MTUInferred        *int32   `parquet:"mtu_inferred,optional"`
	MTUNegotiated      *int32   `parquet:"mtu_negotiated,optional"`
	ECNCE              uint64   `parquet:"ecn_ce"`
	FECN               uint64   `parquet:"fecn"`
	BECN               uint64   `parquet:"becn"`
	CNPs               uint64   `parquet:"cnps"`
	ICRCOK             uint64   `parquet:"icrc_ok"`
	ICRCBad            uint64   `parquet:"icrc_bad"`
	ICRCUnverifiable   uint64   `parquet:"icrc_unverifiable"`
	ThroughputBps      *float64 `parquet:"throughput_bps,optional"`
}

// ConnectionRow is one row of the connections table.
type ConnectionRow struct {
	Capture      string  `parquet:"capture,dict"`
	ID           int32   `parquet:"id"`
	State        string  `parquet:"state,dict"`
	Transport    *string `parquet:"transport,optional,dict"`
	ServiceID    *string `parquet:"service_id,optional"`
	RequesterIP  string  `parquet:"requester_ip,dict"`
	RequesterQPN *uint32 `parquet:"requester_qpn,optional"`
	// RequesterSendPSN and ResponderSendPSN are where each side's
	// requests start (JSON send_psn).
	RequesterSendPSN *uint32 `parquet:"requester_send_psn,optional"`
	ResponderIP      string  `parquet:"responder_ip,dict"`
	ResponderQPN     *uint32 `parquet:"responder_qpn,optional"`
	ResponderSendPSN *uint32 `parquet:"responder_send_psn,optional"`
	PathMTU          *int32  `parquet:"path_mtu,optional"`
	RejectReason     *string `parquet:"reject_reason,optional"`
	REQFrame         *uint64 `parquet:"req_frame,optional"`
	REPFrame         *uint64 `parquet:"rep_frame,optional"`
	DREQFrame        *uint64 `parquet:"dreq_frame,optional"`
	LocalCommID      uint32  `parquet:"local_comm_id"`
	RemoteCommID     uint32  `parquet:"remote_comm_id"`
}

// FindingRow is one row of the findings table.
type FindingRow struct {
	Capture  string `parquet:"capture,dict"`
	File     string `parquet:"file,dict"`
	Frame    uint64 `parquet:"frame"`
	Time     int64  `parquet:"time,timestamp(nanosecond)"`
	Kind     string `parquet:"kind,dict"`
	Severity string `parquet:"severity,dict"`
	Flow     string `parquet:"flow,dict"`
	Detail   string `parquet:"detail"`
}

// WriteReport writes the flows, connections and findings tables of rep to
// dir. capture names the run's input (its file, or files) in every row;
// file names the capture in findings of a one-file run (several files'
// findings carry their own).
func WriteReport(dir, capture, file string, rep *analyze.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	flows := make([]FlowRow, 0, len(rep.Flows))
	for i := range rep.Flows {
		flows = append(flows, flowRow(capture, &rep.Flows[i]))
	}
	if err := writeTable(filepath.Join(dir, FlowsFile), flows); err != nil {
		return err
	}
	conns := make([]ConnectionRow, 0, len(rep.Connections))
	for i := range rep.Connections {
		conns = append(conns, connectionRow(capture, &rep.Connections[i]))
	}
	if err := writeTable(filepath.Join(dir, ConnectionsFile), conns); err != nil {
		return err
	}
	finds := make([]FindingRow, 0, len(rep.Findings))
	for _, f := range rep.Findings {
		fr := FindingRow{Capture: capture, File: f.File, Frame: f.Frame, Time: unixNano(f.Time), Kind: string(f.Kind), Severity: f.Severity.String(), Flow: f.FlowName(), Detail: f.Detail}
		if fr.File == "" {
			fr.File = file
		}
		finds = append(finds, fr)
	}
	return writeTable(filepath.Join(dir, FindingsFile), finds)
}

// unixNano is t in nanoseconds since 1970, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func writeTable[T any](path string, rows []T) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[T](f, options()...)
	for len(rows) > 0 {
		n := min(len(rows), rowGroupRows)
		if _, err := w.Write(rows[:n]); err != nil {
			f.Close()
			return err
		}
		rows = rows[n:]
	}
	if err := w.Close(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func flowRow(capture string, f *analyze.Flow) FlowRow {
	r := FlowRow{
		Capture: capture, Src: f.Src, Dst: f.Dst, DestQP: f.DestQP, Transport: f.Transport,
		Packets: f.Packets, WireBytes: f.WireBytes, PayloadBytes: f.PayloadBytes,
		FirstTime: unixNano(f.FirstTime), LastTime: unixNano(f.LastTime),
		RequestPackets: f.Requests.Packets, PSNFirst: f.Requests.PSNFirst, PSNLast: f.Requests.PSNLast,
		Missing: f.Requests.Missing, MissingNotCaptured: f.Requests.MissingNotCaptured, MissingLost: f.Requests.MissingLost,
		Gaps: uint32(len(f.Requests.Gaps)), Retransmitted: f.Requests.Retransmitted,
		Duplicates: f.Requests.Duplicates, OutOfOrder: f.Requests.OutOfOrder,
		ResponsePackets: f.Responses.Packets, ACKs: f.Responses.ACKs, NAKs: f.Responses.NAKs,
		RNRNAKs: f.Responses.RNRNAKs, ReadResponses: f.Responses.ReadResponses, AtomicACKs: f.Responses.AtomicACKs,
		Messages: f.Messages.Count, MessageBytes: f.Messages.Bytes, Incomplete: f.Messages.Incomplete,
		ECNCE: f.Congestion.ECNCE, FECN: f.Congestion.FECN, BECN: f.Congestion.BECN, CNPs: f.Congestion.CNPs,
		ICRCOK: f.ICRC.OK, ICRCBad: f.ICRC.Bad, ICRCUnverifiable: f.ICRC.Unverifiable,
		ThroughputBps: f.ThroughputBps,
	}
	if f.Connection != nil {
		r.Connection = ptr(int32(*f.Connection))
	}
	if rtt := f.Responses.RTT; rtt != nil {
		r.RTTSamples = rtt.Samples
		r.RTTMinNs, r.RTTMedianNs, r.RTTMaxNs = ptr(rtt.MinNs), ptr(rtt.MedianNs), ptr(rtt.MaxNs)
	}
	if f.MTU.Inferred != nil {
		r.MTUInferred = ptr(int32(*f.MTU.Inferred))
	}
	if f.MTU.Negotiated != nil {
		r.MTUNegotiated = ptr(int32(*f.MTU.Negotiated))
	}
	return r
}

func connectionRow(capture string, c *analyze.Connection) ConnectionRow {
	r := ConnectionRow{
		Capture: capture, ID: int32(c.ID), State: c.State, Transport: c.Transport, ServiceID: c.ServiceID,
		RequesterIP: c.Requester.IP, RequesterQPN: c.Requester.QPN, RequesterSendPSN: c.Requester.SendPSN,
		ResponderIP: c.Responder.IP, ResponderQPN: c.Responder.QPN, ResponderSendPSN: c.Responder.SendPSN,
		LocalCommID: c.LocalCommID, RemoteCommID: c.RemoteCommID,
	}
	if c.PathMTU != nil {
		r.PathMTU = ptr(int32(*c.PathMTU))
	}
	if c.RejectReason != "" {
		r.RejectReason = ptr(c.RejectReason)
	}
	frame := func(n uint64) *uint64 {
		if n == 0 {
			return nil
		}
		return ptr(n)
	}
	r.REQFrame, r.REPFrame, r.DREQFrame = frame(c.Frames.REQ), frame(c.Frames.REP), frame(c.Frames.DREQ)
	return r
}
