// Package export writes an analysis as Parquet tables (docs/parquet.md):
// packets (one row per RDMA packet, written as the packets are fed),
// flows, connections, findings and pause (written from the report), and the
// NCCL collectives, their links and arrivals (nccl.Result). Columns are
// Snappy-compressed (zstd cost several times the analysis; docs/parquet.md); strings that repeat (addresses, opcode names, kinds)
// are dictionary-encoded.
package export

import (
	"fmt"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/filename"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// Table file names in the export directory. Packets go to one file per
// capture (or per range of one with -j): PacketsFile(file, part).
const (
	FlowsFile       = "flows.parquet"
	ConnectionsFile = "connections.parquet"
	FindingsFile    = "findings.parquet"
	PauseFile       = "pause.parquet"
	// CollectivesFile, CollectiveLinksFile and CollectiveArrivalsFile
	// hold the NCCL collectives (nccl.Result's), their links and their
	// ranks' arrivals.
	CollectivesFile        = "collectives.parquet"
	CollectiveLinksFile    = "collective_links.parquet"
	CollectiveArrivalsFile = "collective_arrivals.parquet"
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

func options() []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.Compression(&parquet.Snappy),
		parquet.MaxRowsPerRowGroup(rowGroupRows),
		parquet.CreatedBy("roce-dissect", "", ""),
	}
}

// PacketRow is one row of the packets table: one RDMA frame (RoCE v2,
// RoCE v1 or native IB; malformed ones too, with Error set). Header
// columns are null when the frame had no such header. PacketRow defines
// the table's schema; PacketWriter writes its columns directly.
type PacketRow struct {
	File        string  `parquet:"file,dict"`
	Frame       uint64  `parquet:"frame"`
	Time        int64   `parquet:"time,timestamp(nanosecond:local)"`
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
	// Encapsulation is the chain of wraps the frame arrived in
	// ("erspan3/vxlan", as the JSON report's capture.encapsulations),
	// null when it arrived as sent; MirrorSrc and MirrorSession its
	// outermost ERSPAN session (the switch, the session ID: null for
	// ERSPAN I), TunnelID and TunnelIDName its innermost other wrap's
	// identifier (wraps.go).
	Encapsulation *string `parquet:"encapsulation,optional,dict"`
	MirrorSrc     *string `parquet:"mirror_src,optional,dict"`
	MirrorSession *uint32 `parquet:"mirror_session,optional"`
	TunnelID      *uint32 `parquet:"tunnel_id,optional"`
	TunnelIDName  *string `parquet:"tunnel_id_name,optional,dict"`
	// Priority is the 802.1p priority the frame travelled in (its VLAN
	// PCP, else its DSCP as --dscp-priority maps it; analyze.Packet),
	// null for neither (native IB).
	Priority *int32 `parquet:"priority,optional"`
	// ICRCValue, IPID and TTL match a packet across captures (as the
	// capture points analysis does, package points): the ICRC as
	// Wireshark shows it (layers.ICRC.WireValue: its bytes as on the
	// wire; null when not captured), the IPv4 identification or else
	// the IPv6 or GRH flow label, and the IPv4 TTL or IPv6/GRH hop
	// limit (both null without an IP header or GRH).
	ICRCValue *uint32 `parquet:"icrc_value,optional"`
	IPID      *uint32 `parquet:"ip_id,optional"`
	TTL       *uint8  `parquet:"ttl,optional"`
	// ICRCOriginalSrcPort is the UDP source port the ICRC verified with
	// when the capture tool rewrote it (icrc_port_rewritten: the
	// analyzer's analyze.Packet.OriginalSrcPort), null otherwise.
	ICRCOriginalSrcPort *uint16 `parquet:"icrc_original_src_port,optional"`
}

// FlowRow is one row of the flows table (see analyze.Flow and
// docs/json.md for each figure).
type FlowRow struct {
	Capture            string  `parquet:"capture,dict"`
	Src                string  `parquet:"src,dict"`
	Dst                string  `parquet:"dst,dict"`
	DestQP             uint32  `parquet:"dest_qp"`
	Transport          string  `parquet:"transport,dict"`
	Connection         *int32  `parquet:"connection,optional"`
	Packets            uint64  `parquet:"packets"`
	WireBytes          uint64  `parquet:"wire_bytes"`
	PayloadBytes       uint64  `parquet:"payload_bytes"`
	FirstTime          int64   `parquet:"first_time,timestamp(nanosecond:local)"`
	LastTime           int64   `parquet:"last_time,timestamp(nanosecond:local)"`
	RequestPackets     uint64  `parquet:"request_packets"`
	PSNFirst           *uint32 `parquet:"psn_first,optional"`
	PSNLast            *uint32 `parquet:"psn_last,optional"`
	Missing            uint64  `parquet:"missing"`
	MissingNotCaptured uint64  `parquet:"missing_not_captured"`
	MissingLost        uint64  `parquet:"missing_lost"`
	Gaps               uint32  `parquet:"gaps"`
	Retransmitted      uint64  `parquet:"retransmitted"`
	// RetransmitCausesNAK, …RNR and …Timeout split Retransmitted by what
	// preceded each resend (JSON requests.retransmit_causes): a NAK or a
	// timeout is a loss the NIC recovered, whether or not the capture
	// missed the packet.
	RetransmitCausesNAK     uint64   `parquet:"retransmit_causes_nak"`
	RetransmitCausesRNR     uint64   `parquet:"retransmit_causes_rnr"`
	RetransmitCausesTimeout uint64   `parquet:"retransmit_causes_timeout"`
	Duplicates              uint64   `parquet:"duplicates"`
	OutOfOrder              uint64   `parquet:"out_of_order"`
	ResponsePackets         uint64   `parquet:"response_packets"`
	ACKs                    uint64   `parquet:"acks"`
	NAKs                    uint64   `parquet:"naks"`
	RNRNAKs                 uint64   `parquet:"rnr_naks"`
	ReadResponses           uint64   `parquet:"read_responses"`
	AtomicACKs              uint64   `parquet:"atomic_acks"`
	RTTSamples              uint64   `parquet:"rtt_samples"`
	RTTMinNs                *int64   `parquet:"rtt_min_ns,optional"`
	RTTMedianNs             *int64   `parquet:"rtt_median_ns,optional"`
	RTTMaxNs                *int64   `parquet:"rtt_max_ns,optional"`
	Messages                uint64   `parquet:"messages"`
	MessageBytes            uint64   `parquet:"message_bytes"`
	Incomplete              uint64   `parquet:"incomplete_messages"`
	MTUInferred             *int32   `parquet:"mtu_inferred,optional"`
	MTUNegotiated           *int32   `parquet:"mtu_negotiated,optional"`
	ECNCE                   uint64   `parquet:"ecn_ce"`
	FECN                    uint64   `parquet:"fecn"`
	BECN                    uint64   `parquet:"becn"`
	CNPs                    uint64   `parquet:"cnps"`
	ICRCOK                  uint64   `parquet:"icrc_ok"`
	ICRCBad                 uint64   `parquet:"icrc_bad"`
	ICRCUnverifiable        uint64   `parquet:"icrc_unverifiable"`
	ThroughputBps           *float64 `parquet:"throughput_bps,optional"`
	// Priority is the flow's 802.1p priority and PausedNs how long pause
	// frames paused it while the flow was active (0: never), as the JSON
	// report's; both null when the capture holds no pause frames
	// (analyze.Flow.PausedTime).
	Priority *int32 `parquet:"priority,optional"`
	PausedNs *int64 `parquet:"paused_ns,optional"`
	// ICRCPortRewritten counts the packets of icrc_ok whose ICRC verified
	// only with a source port other than the captured 4791 (JSON
	// icrc.port_rewritten); the packets table has each one's port.
	ICRCPortRewritten uint64 `parquet:"icrc_port_rewritten"`
	// TunnelKind, TunnelID and TunnelIDName are the tunnel that is part of
	// the flow's key (analyze.Flow.Tunnel: a VXLAN or GENEVE VNI, NVGRE
	// VSID or ERSPAN session); null for a flow in none.
	TunnelKind   *string `parquet:"tunnel_kind,optional,dict"`
	TunnelID     *uint32 `parquet:"tunnel_id,optional"`
	TunnelIDName *string `parquet:"tunnel_id_name,optional,dict"`
	// OpsSend … OpsOther count the flow's packets by operation (JSON
	// ops, analyze.Ops); MessageSizeBuckets is its messages by size
	// (analyze.SizeBucketsText: "min-max:count" space-separated, "" for
	// none).
	OpsSend            uint64 `parquet:"ops_send"`
	OpsWrite           uint64 `parquet:"ops_write"`
	OpsWriteImm        uint64 `parquet:"ops_write_imm"`
	OpsReadRequest     uint64 `parquet:"ops_read_request"`
	OpsReadResponse    uint64 `parquet:"ops_read_response"`
	OpsAtomic          uint64 `parquet:"ops_atomic"`
	OpsAtomicACK       uint64 `parquet:"ops_atomic_ack"`
	OpsACK             uint64 `parquet:"ops_ack"`
	OpsCNP             uint64 `parquet:"ops_cnp"`
	OpsOther           uint64 `parquet:"ops_other"`
	MessageSizeBuckets string `parquet:"message_size_buckets"`
	// ActiveNs and ActiveThroughputBps are the time the flow's messages
	// were on the wire and its rate in it (analyze.Flow.ActiveNs).
	ActiveNs            int64    `parquet:"active_ns"`
	ActiveThroughputBps *float64 `parquet:"active_throughput_bps,optional"`
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
	// REQFile, REPFile and DREQFile name the file of each frame above
	// when the capture is several files read as one (JSON frames.files):
	// the frames are then numbered in their files. Null for one file.
	REQFile  *string `parquet:"req_file,optional,dict"`
	REPFile  *string `parquet:"rep_file,optional,dict"`
	DREQFile *string `parquet:"dreq_file,optional,dict"`
}

// FindingRow is one row of the findings table.
type FindingRow struct {
	Capture  string `parquet:"capture,dict"`
	File     string `parquet:"file,dict"`
	Frame    uint64 `parquet:"frame"`
	Time     int64  `parquet:"time,timestamp(nanosecond:local)"`
	Kind     string `parquet:"kind,dict"`
	Severity string `parquet:"severity,dict"`
	Flow     string `parquet:"flow,dict"`
	Detail   string `parquet:"detail"`
	// Connection is the JSON finding's connection (null: none).
	Connection *int32 `parquet:"connection,optional"`
}

// PauseRow is one row of the pause table: what one sender's PFC or
// 802.3x PAUSE frames did to one priority (analyze.Pause, the JSON
// report's pause array), timed at LinkSpeedBps (--link-speed).
type PauseRow struct {
	Capture        string  `parquet:"capture,dict"`
	SrcMAC         string  `parquet:"src_mac,dict"`
	Kind           string  `parquet:"kind,dict"`
	Priority       *int32  `parquet:"priority,optional"` // null: 802.3x, every priority
	Frames         uint64  `parquet:"frames"`
	XOFFFrames     uint64  `parquet:"xoff_frames"`
	XONFrames      uint64  `parquet:"xon_frames"`
	Quanta         uint64  `parquet:"quanta"`
	PausedNs       int64   `parquet:"paused_ns"`
	LongestPauseNs int64   `parquet:"longest_pause_ns"`
	LinkSpeedBps   float64 `parquet:"link_speed_bps"`
}

// CollectiveRow is one row of the collectives table: one NCCL collective
// (nccl.Collective, the JSON report's nccl.collectives), its straggler's
// columns null when none stands out.
type CollectiveRow struct {
	Capture    string   `parquet:"capture,dict"`
	Index      int32    `parquet:"index"`
	Kind       string   `parquet:"kind,dict"`
	Algorithm  string   `parquet:"algorithm,dict"`
	Protocol   string   `parquet:"protocol,dict"`
	SizeBytes  *uint64  `parquet:"size_bytes,optional"`
	Start      int64    `parquet:"start,timestamp(nanosecond:local)"`
	End        int64    `parquet:"end,timestamp(nanosecond:local)"`
	DurationNs int64    `parquet:"duration_ns"`
	BusyNs     *int64   `parquet:"busy_ns,optional"`
	AlgBWBps   *float64 `parquet:"algbw_bps,optional"`
	BusBWBps   *float64 `parquet:"busbw_bps,optional"`
	// StragglerRank … StragglerWhy are the JSON straggler's rank, kind,
	// late_ns, receiver_rank (a link's) and why.
	StragglerRank         *int32  `parquet:"straggler_rank,optional"`
	StragglerKind         *string `parquet:"straggler_kind,optional,dict"`
	StragglerLateNs       *int64  `parquet:"straggler_late_ns,optional"`
	StragglerReceiverRank *int32  `parquet:"straggler_receiver_rank,optional"`
	StragglerWhy          *string `parquet:"straggler_why,optional"`
}

// CollectiveLinkRow is one row of the collective_links table: one
// sender rank's data to one receiver rank in collective Index
// (nccl.Link); a rank is null when unknown.
type CollectiveLinkRow struct {
	Capture      string `parquet:"capture,dict"`
	Index        int32  `parquet:"index"`
	SenderRank   *int32 `parquet:"sender_rank,optional"`
	ReceiverRank *int32 `parquet:"receiver_rank,optional"`
	Bytes        uint64 `parquet:"bytes"`
	Messages     uint64 `parquet:"messages"`
	Steps        uint64 `parquet:"steps"`
}

// CollectiveArrivalRow is one row of the collective_arrivals table: when
// Rank joined collective Index (nccl.Arrival); each figure null as the
// JSON's.
type CollectiveArrivalRow struct {
	Capture   string `parquet:"capture,dict"`
	Index     int32  `parquet:"index"`
	Rank      int32  `parquet:"rank"`
	FirstCTS  *int64 `parquet:"first_cts,optional,timestamp(nanosecond:local)"`
	FirstData *int64 `parquet:"first_data,optional,timestamp(nanosecond:local)"`
	LateNs    *int64 `parquet:"late_ns,optional"`
}

// WriteReport writes the flows, connections, findings and pause tables
// of rep, and the collectives tables of res (nil: no NCCL traffic), to
// dir, through a ReportWriter. capture names the run's input
// (its file, or files) in every row; file names the capture in findings
// of a one-file run (several files' findings carry their own). The names
// are written as valid UTF-8 (filename.UTF8), as JSON writes them.
func WriteReport(dir, capture, file string, rep *analyze.Report, res *nccl.Result) error {
	rw, err := NewReportWriter(dir, capture, file)
	if err != nil {
		return err
	}
	rw.Head(rep)
	rw.NCCL(res)
	for i := range rep.Flows {
		rw.Flow(&rep.Flows[i])
	}
	for i := range rep.Findings {
		rw.Finding(&rep.Findings[i])
	}
	return rw.Close()
}

// findingRow is f's row; file names the capture when f does not.
func findingRow(capture, file string, f *analyze.Finding) FindingRow {
	fr := FindingRow{Capture: capture, File: filename.UTF8(f.File), Frame: f.Frame, Time: unixNano(f.Time), Kind: string(f.Kind), Severity: f.Severity.String(), Flow: f.FlowName(), Detail: f.Detail}
	if fr.File == "" {
		fr.File = file
	}
	if f.Connection != 0 {
		fr.Connection = ptr(int32(f.Connection))
	}
	return fr
}

// unixNano is t in nanoseconds since 1970, 0 for the zero time.
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// tableBatch is how many rows of a report table a ReportWriter converts
// at a time: the table's rows are never all held (163,840 flows made 65
// MB of rows).
const tableBatch = 1024

func ptr[T any](v T) *T { return &v }

func flowRow(capture string, f *analyze.Flow) FlowRow {
	r := FlowRow{
		Capture: capture, Src: f.Src, Dst: f.Dst, DestQP: f.DestQP, Transport: f.Transport,
		Packets: f.Packets, WireBytes: f.WireBytes, PayloadBytes: f.PayloadBytes,
		FirstTime: unixNano(f.FirstTime), LastTime: unixNano(f.LastTime),
		RequestPackets: f.Requests.Packets, PSNFirst: f.Requests.PSNFirst, PSNLast: f.Requests.PSNLast,
		Missing: f.Requests.Missing, MissingNotCaptured: f.Requests.MissingNotCaptured, MissingLost: f.Requests.MissingLost,
		Gaps: uint32(len(f.Requests.Gaps)), Retransmitted: f.Requests.Retransmitted,
		RetransmitCausesNAK: f.Requests.RetransmitCauses.NAK, RetransmitCausesRNR: f.Requests.RetransmitCauses.RNR,
		RetransmitCausesTimeout: f.Requests.RetransmitCauses.Timeout,
		Duplicates:              f.Requests.Duplicates, OutOfOrder: f.Requests.OutOfOrder,
		ResponsePackets: f.Responses.Packets, ACKs: f.Responses.ACKs, NAKs: f.Responses.NAKs,
		RNRNAKs: f.Responses.RNRNAKs, ReadResponses: f.Responses.ReadResponses, AtomicACKs: f.Responses.AtomicACKs,
		Messages: f.Messages.Count, MessageBytes: f.Messages.Bytes, Incomplete: f.Messages.Incomplete,
		ECNCE: f.Congestion.ECNCE, FECN: f.Congestion.FECN, BECN: f.Congestion.BECN, CNPs: f.Congestion.CNPs,
		ICRCOK: f.ICRC.OK, ICRCBad: f.ICRC.Bad, ICRCUnverifiable: f.ICRC.Unverifiable, ICRCPortRewritten: f.ICRC.PortRewritten,
		ThroughputBps: f.ThroughputBps,
		OpsSend:       f.Ops.Send, OpsWrite: f.Ops.Write, OpsWriteImm: f.Ops.WriteImm,
		OpsReadRequest: f.Ops.ReadRequest, OpsReadResponse: f.Ops.ReadResponse,
		OpsAtomic: f.Ops.Atomic, OpsAtomicACK: f.Ops.AtomicACK, OpsACK: f.Ops.ACK, OpsCNP: f.Ops.CNP, OpsOther: f.Ops.Other,
		MessageSizeBuckets: analyze.SizeBucketsText(f.Messages.SizeBuckets),
		ActiveNs:           f.ActiveNs, ActiveThroughputBps: f.ActiveThroughputBps,
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
	if ns, ok := f.PausedTime(); ok {
		r.Priority, r.PausedNs = ptr(int32(*f.Priority)), &ns
	}
	if t := f.Tunnel; t != nil {
		r.TunnelKind, r.TunnelID, r.TunnelIDName = &t.Kind, &t.ID, &t.IDName
	}
	return r
}

// collectiveRow is c's row of the collectives table.
func collectiveRow(capture string, c *nccl.Collective) CollectiveRow {
	r := CollectiveRow{
		Capture: capture, Index: int32(c.Index), Kind: c.Kind, Algorithm: c.Algorithm, Protocol: c.Protocol,
		SizeBytes: c.SizeBytes, Start: unixNano(c.Start), End: unixNano(c.End), DurationNs: c.DurationNs,
		BusyNs: c.BusyNs, AlgBWBps: c.AlgBWBps, BusBWBps: c.BusBWBps,
	}
	if s := c.Straggler; s != nil {
		r.StragglerRank, r.StragglerKind, r.StragglerLateNs = ptr(int32(s.Rank)), &s.Kind, &s.LateNs
		r.StragglerReceiverRank = rank32(s.ReceiverRank)
		if s.Why != "" {
			r.StragglerWhy = &s.Why
		}
	}
	return r
}

// rank32 is rank as an int32 column, nil for nil.
func rank32(rank *int) *int32 {
	if rank == nil {
		return nil
	}
	return ptr(int32(*rank))
}

// timeNano is *t as unixNano, nil for nil.
func timeNano(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	return ptr(unixNano(*t))
}

func pauseRow(capture string, linkSpeedBps float64, p *analyze.Pause) PauseRow {
	r := PauseRow{
		Capture: capture, SrcMAC: p.SrcMAC, Kind: p.Kind, Frames: p.Frames, XOFFFrames: p.XOFFFrames, XONFrames: p.XONFrames,
		Quanta: p.Quanta, PausedNs: p.PausedNs, LongestPauseNs: p.LongestPauseNs, LinkSpeedBps: linkSpeedBps,
	}
	if p.Priority != nil {
		r.Priority = ptr(int32(*p.Priority))
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
	if f := c.Frames.Files; f != nil {
		file := func(s string) *string {
			if s == "" {
				return nil
			}
			return ptr(filename.UTF8(s))
		}
		r.REQFile, r.REPFile, r.DREQFile = file(f.REQ), file(f.REP), file(f.DREQ)
	}
	return r
}
