package analyze

import (
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
	"github.com/roce-dissect/roce-dissect/analyze/internal/pfc"
)

// Report is the analysis of one or more captures. It marshals to JSON with
// the snake_case keys documented in docs/json.md; those keys are a public
// contract. Times are RFC 3339 with nanoseconds; 64-bit identifiers are
// "0x…" strings.
type Report struct {
	Capture     Capture      `json:"capture"`
	Connections []Connection `json:"connections"`
	Flows       []Flow       `json:"flows"`
	Findings    []Finding    `json:"findings"`
	// Pause is what PFC and 802.3x PAUSE frames did, per sender and
	// priority (pause.go); absent when the capture holds none.
	Pause []Pause `json:"pause,omitempty"`
	// FindingsDropped counts findings beyond Options.MaxFindings, counted
	// but not listed. It is the last key, as -o json writes it (a report
	// streamed knows it only at its end).
	FindingsDropped uint64 `json:"findings_dropped"`

	pause *pfc.Track // the pause frames, for Merge and combineShards

	cmOrphans []conn.Orphan // CM messages without their REQ, for Merge
	merge     bool          // made by an Analyzer: the unexported state Merge needs is here

	shard *shardInfo // Options.shard: what combineShards needs
}

// Capture holds the totals of the frames read.
type Capture struct {
	// Frames read. Frames = RoCEPackets + OtherPackets + Malformed.
	Frames uint64 `json:"frames"`
	// RoCEPackets counts frames decoded as RoCE v1, RoCE v2 or native IB.
	RoCEPackets uint64 `json:"roce_packets"`
	// OtherPackets counts frames that are not RDMA traffic (TCP, ARP, …).
	OtherPackets uint64 `json:"other_packets"`
	// OtherProtocols counts those frames by protocol (OtherProtocol):
	// the 8 of the most frames, most first; absent without other frames.
	// At most 256 protocols are counted, the smallest (link types, then
	// EtherTypes, IP protocols, TCP ports, UDP ports, each by number),
	// so that shards and merged files count as one capture does.
	OtherProtocols []OtherProtocol `json:"other_protocols,omitempty"`
	// OtherFramesUnlisted counts the other frames of the protocols not
	// listed.
	OtherFramesUnlisted uint64      `json:"other_frames_unlisted,omitempty"`
	others              otherCounts // every protocol counted, for Merge and combineShards
	// Malformed counts RDMA frames that could not be decoded, and frames
	// whose mirror or tunnel header is cut or invalid (ErrBadTunnel).
	Malformed uint64 `json:"malformed"`
	// MalformedFrames lists them (up to Options.MaxFindings).
	MalformedFrames []Malformed `json:"malformed_frames"`
	// Bytes is the sum of the frames' original (wire) lengths.
	Bytes uint64 `json:"bytes"`
	// FirstTime and LastTime are the timestamps of the first and last frame.
	FirstTime *time.Time `json:"first_time"`
	LastTime  *time.Time `json:"last_time"`
	// DurationSeconds is LastTime − FirstTime.
	DurationSeconds float64 `json:"duration_seconds"`
	// FlowsDropped estimates (by linear counting, within about 1 %) the
	// number of distinct flows beyond Options.MaxFlows, whose packets are
	// counted in RoCEPackets but not tracked.
	FlowsDropped uint64 `json:"flows_dropped"`
	// PacketsOfDroppedFlows counts the packets of those flows.
	PacketsOfDroppedFlows uint64 `json:"packets_of_dropped_flows"`
	// NotCaptured is the sum of the flows' Requests.MissingNotCaptured:
	// request PSNs the capture missed although the responder received
	// them (capture-side drops, not network loss).
	NotCaptured uint64 `json:"not_captured"`
	// ICRCPortRewritten counts the RoCE v2 packets captured with UDP
	// source port 4791 whose ICRC verified with another source port, the
	// one the capture tool (NIC sniffer) overwrote.
	ICRCPortRewritten uint64 `json:"icrc_port_rewritten"`
	// OriginalLengthsClamped counts frames whose original length was
	// above MaxOriginalLength, counted as their captured length.
	OriginalLengthsClamped uint64 `json:"original_lengths_clamped"`
	// CutFrames counts RDMA frames the capture tool cut without saying
	// so (original length = captured length, shorter than the frame's
	// IP/UDP, GRH or LRH length): counted like snap-length cuts, with the
	// wire length their headers give (Bytes includes it).
	CutFrames uint64 `json:"cut_frames"`
	// ConnectionsDropped counts the CM REQs with a new CommID beyond
	// Options.MaxConnections (or the run's Budget): counted, not
	// tracked as connections.
	ConnectionsDropped uint64 `json:"connections_dropped"`
	// Encapsulations counts the frames that arrived inside other packets
	// (a switch mirror's ERSPAN, an overlay's VXLAN, GENEVE or NVGRE,
	// QinQ, MPLS), by chain of encapsulations, most frames first; absent
	// when every frame was captured as sent. Up to 64 chains are listed.
	Encapsulations []Encapsulation `json:"encapsulations,omitempty"`
	// EncapsulationFramesUnlisted counts the frames of the chains beyond
	// those listed.
	EncapsulationFramesUnlisted uint64 `json:"encapsulation_frames_unlisted,omitempty"`
	// Tunnels are the mirror sessions, tunnels, S-VLANs and labels those
	// frames came through, each with its frames (a frame nested in two
	// counts in both), up to 1,024 of them.
	Tunnels []Tunnel `json:"tunnels,omitempty"`
	// TunnelFramesUnlisted counts the frames of the tunnels beyond those
	// listed.
	TunnelFramesUnlisted uint64 `json:"tunnel_frames_unlisted,omitempty"`
	// LinkSpeedBps is the link speed the pause quanta were timed at
	// (Options.LinkSpeed); absent when the capture holds no pause frames.
	LinkSpeedBps float64 `json:"link_speed_bps,omitempty"`
	// PauseFramesUnlisted counts the pause frames of senders and
	// priorities beyond the 1,024 Report.Pause lists.
	PauseFramesUnlisted uint64 `json:"pause_frames_unlisted,omitempty"`
	// Files lists the files read one after another as this one capture
	// (the pieces of a rotation, see Pieces), in the order read; absent
	// for one file. Set by the reader of the files, not the Analyzer.
	Files []CaptureFile `json:"files,omitempty"`
	// FilesMerged says that the Files were merged by time (their times
	// overlap: each next frame is the earliest of the files' next frames,
	// as mergecap merges them) rather than read one after another.
	FilesMerged bool `json:"files_merged,omitempty"`
	// Interrupted says the reading was stopped (Ctrl-C) before the end of
	// the input: the report covers only the Frames read. Set by the
	// reader of the files, not the Analyzer; absent when the input was
	// read to its end.
	Interrupted bool `json:"interrupted,omitempty"`
}

// CaptureFile is one file of a capture read as several (Capture.Files).
type CaptureFile struct {
	File      string     `json:"file"`
	Frames    uint64     `json:"frames"`
	FirstTime *time.Time `json:"first_time"`
	LastTime  *time.Time `json:"last_time"`
}

// Malformed is one frame that could not be decoded.
type Malformed struct {
	Frame  uint64 `json:"frame"`
	Reason string `json:"reason"`
	// File is the file the frame is in, when the capture is several
	// files read as one (Pieces); Frame is then its number there.
	File string `json:"file,omitempty"`
}

// Endpoint is one side of a CM connection. The fields a header-only
// capture did not capture (the REQ or REP cut before them, or a REP not
// seen) are nil: null in JSON.
type Endpoint = conn.Endpoint

// ConnFrames holds the frame numbers of a connection's CM messages (0 when
// not seen).
type ConnFrames = conn.ConnFrames

// ConnFrameFiles names the file of each of a connection's CM message
// frames (ConnFrames.Files).
type ConnFrameFiles = conn.ConnFrameFiles

// Connection is a CM handshake: REQ, then REP/REJ, RTU, DREQ, DREP; or an
// RC QP pair the packets showed without one (StateInferred). The
// connections stage (package analyze/internal/conn) pairs the messages.
type Connection = conn.Connection

// Connection states.
const (
	StateRequested    = conn.StateRequested
	StateRejected     = conn.StateRejected
	StateEstablished  = conn.StateEstablished
	StateDisconnected = conn.StateDisconnected
)

// Flow is the traffic from one network source to one destination QP.
// Its JSON, and that of the objects in it, writes no null and no empty
// list: a nil pointer or an empty list is absent (docs/json.md).
type Flow struct {
	Src    string `json:"src"`
	Dst    string `json:"dst"`
	DestQP uint32 `json:"dest_qp"`
	// Tunnel is the tunnel the flow's packets arrived in that tells it
	// apart from flows of the same addresses and QP (FlowTunnel); nil
	// (absent) for a flow captured as sent or in a wrap that keys no flow.
	Tunnel *FlowTunnel `json:"tunnel,omitempty"`
	// Transport is RC, UC, RD, DC, UD, XRC, CNP (a flow of only CNPs) or
	// unknown (a flow of only opcodes outside the IBTA table).
	Transport string `json:"transport"`
	// Connection is the ID of the CM connection this flow belongs to.
	Connection *int `json:"connection,omitempty"`
	// Packets, WireBytes (original frame lengths; of the frames a mirror
	// or tunnel carried, without its headers: Packet.CarriedLength) and PayloadBytes (IB
	// payload: no headers, pad or ICRC).
	Packets      uint64    `json:"packets"`
	WireBytes    uint64    `json:"wire_bytes"`
	PayloadBytes uint64    `json:"payload_bytes"`
	FirstTime    time.Time `json:"first_time"`
	LastTime     time.Time `json:"last_time"`

	Requests  Requests  `json:"requests"`
	Responses Responses `json:"responses"`
	Messages  Messages  `json:"messages"`
	// Ops is what the flow carried: its packets by operation.
	Ops        Ops        `json:"ops"`
	MTU        MTU        `json:"mtu"`
	Congestion Congestion `json:"congestion"`
	ICRC       ICRCCounts `json:"icrc"`
	// Priority is the 802.1p priority the flow travelled in (the VLAN
	// PCP of its first packet that is not a CNP, else its DSCP mapped by
	// Options.DSCPPriority), and PausedNs how long PFC or 802.3x PAUSE
	// frames paused that priority between the flow's first and last
	// packet (pause.go); both absent when the capture holds no pause
	// frames, PausedNs also when 0.
	Priority *int   `json:"priority,omitempty"`
	PausedNs *int64 `json:"paused_ns,omitempty"`

	// ThroughputBps and WireBps are payload and wire bits per second over
	// the flow's duration; nil (absent in JSON) for a flow shorter
	// than two packets.
	ThroughputBps *float64 `json:"throughput_bps,omitempty"`
	WireBps       *float64 `json:"wire_bps,omitempty"`
	// ActiveNs is the time the flow's multi-packet messages were on the
	// wire: the sum of the gaps before each MIDDLE and LAST packet, from
	// the flow's packet before it, of at most one interval
	// (Options.Interval) each. ActiveThroughputBps is the payload bits of
	// those packets per second of that time: the rate the flow got while
	// it sent, where ThroughputBps averages over its idle time too. Both
	// absent when no such gap was seen (a flow of one-packet messages).
	ActiveNs            int64    `json:"active_ns,omitempty"`
	ActiveThroughputBps *float64 `json:"active_throughput_bps,omitempty"`
	// Series is the throughput per interval (non-empty intervals only).
	IntervalSeconds float64  `json:"interval_seconds"`
	Series          []Sample `json:"series,omitempty"`
	// NIC is the NIC behaviour of the request flow of an RC/UC QP pair
	// (docs/analysis.md, "NIC behaviour"); absent on other flows.
	NIC *NIC `json:"nic,omitempty"`

	rtt *rttHist // for Merge
	// activeBytes is the payload sent in ActiveNs, for Merge.
	activeBytes uint64
	prio        int8 // Priority, -1 unknown: for Merge and combineShards

	// Messages cut by the start or end of the capture, for Merge.
	reqOrphan, respOrphan seamMessage
	reqOpen, respOpen     seamMessage
}

// Requests describes the requester's PSN stream of a flow.
type Requests struct {
	Packets  uint64  `json:"packets"`
	PSNFirst *uint32 `json:"psn_first,omitempty"`
	PSNLast  *uint32 `json:"psn_last,omitempty"`
	// Missing is the number of PSNs never seen between PSNFirst and
	// PSNLast, or from the send PSN of the flow's side of its connection
	// when the connection was set up in the capture.
	Missing uint64 `json:"missing"`
	// MissingNotCaptured counts the missing PSNs a later response of the
	// responder covers and nobody resent: the capture missed them.
	MissingNotCaptured uint64 `json:"missing_not_captured"`
	// MissingLost counts the missing PSNs the responder NAKed or the
	// requester resent: lost before the responder. The rest of Missing
	// is of unknown fate.
	MissingLost   uint64 `json:"missing_lost"`
	Gaps          []Gap  `json:"gaps,omitempty"`
	Retransmitted uint64 `json:"retransmitted"`
	// RetransmitCauses splits Retransmitted by what preceded each resend.
	RetransmitCauses RetransmitCauses `json:"retransmit_causes"`
	Duplicates       uint64           `json:"duplicates"`
	OutOfOrder       uint64           `json:"out_of_order"`

	next       uint32 // PSN expected after PSNLast, for Merge
	low        uint32 // lowest PSN seen, for Merge
	head       []headReq
	headMsgs   []headMsg
	lastKey    reqKey
	hasLast    bool
	pendingTo  []uint32 // LAST PSNs of messages still waiting for their FIRST
	firstFrame uint64   // frame of the first request, for Merge
	ev         lossEvidence
}

// Gap is a range of PSNs never seen; Frame is the frame where the jump
// over it was seen.
type Gap struct {
	From  uint32 `json:"from"`
	To    uint32 `json:"to"`
	Count uint32 `json:"count"`
	Frame uint64 `json:"frame"`
	// File is the file Frame is in, when the capture is several files
	// read as one (Pieces); Frame is then its number there.
	File string `json:"file,omitempty"`
}

// Responses describes the responder's packets in a flow (ACK, NAK, READ
// responses, atomic ACKs), which carry the peer's PSNs.
type Responses struct {
	Packets       uint64            `json:"packets"`
	ACKs          uint64            `json:"acks"`
	NAKs          uint64            `json:"naks"`
	NAKCodes      map[string]uint64 `json:"nak_codes,omitempty"`
	RNRNAKs       uint64            `json:"rnr_naks"`
	RNRTimers     map[string]uint64 `json:"rnr_timers,omitempty"`
	ReadResponses uint64            `json:"read_responses"`
	AtomicACKs    uint64            `json:"atomic_acks"`
	// RTT is the request→ACK round-trip time, measured on this flow's
	// requests against the ACKs of the reverse flow.
	RTT *RTT `json:"rtt,omitempty"`
	// RTTAt names the capture RTT was measured in when several capture
	// points saw the flow: the one nearest its requester, where its
	// requests leave and their ACKs arrive. Set by the reader of the
	// points, not the Analyzer.
	RTTAt string `json:"rtt_at,omitempty"`
}

// RTT summarises round-trip samples in nanoseconds.
type RTT struct {
	Samples  uint64 `json:"samples"`
	MinNs    int64  `json:"min_ns"`
	MedianNs int64  `json:"median_ns"`
	MaxNs    int64  `json:"max_ns"`
}

// Messages describes messages reassembled from FIRST/MIDDLE/LAST/ONLY.
type Messages struct {
	Count      uint64 `json:"count"`
	Bytes      uint64 `json:"bytes"`
	MinSize    uint64 `json:"min_size"`
	MaxSize    uint64 `json:"max_size"`
	Incomplete uint64 `json:"incomplete"`
	// DMALengthMismatches counts RDMA WRITE messages whose size differs
	// from their RETH DMALength.
	DMALengthMismatches uint64 `json:"dma_length_mismatches"`
	// SizeBuckets counts the messages by size, in power-of-two buckets
	// from the smallest (SizeBucket); only buckets that hold a message,
	// absent without messages.
	SizeBuckets []SizeBucket `json:"size_buckets,omitempty"`
}

// MTU is what the flow says about the path MTU.
type MTU struct {
	// Inferred is the payload size of FIRST/MIDDLE packets; nil when only
	// ONLY/LAST packets were seen.
	Inferred *int `json:"inferred,omitempty"`
	// MaxPayload is the largest payload of any packet.
	MaxPayload int `json:"max_payload"`
	// Negotiated is the path MTU of the CM connection, if known.
	Negotiated *int `json:"negotiated,omitempty"`
	// AboveNegotiated counts packets whose payload exceeds Negotiated.
	AboveNegotiated uint64 `json:"above_negotiated"`
}

// Congestion counts congestion signals.
type Congestion struct {
	ECNCE uint64 `json:"ecn_ce"`
	FECN  uint64 `json:"fecn"`
	BECN  uint64 `json:"becn"`
	// CNPs counts CNP packets in this flow (sent by Src to DestQP).
	CNPs uint64 `json:"cnps"`
}

// ICRCCounts counts ICRC check results.
type ICRCCounts struct {
	OK           uint64 `json:"ok"`
	Bad          uint64 `json:"bad"`
	Unverifiable uint64 `json:"unverifiable"`
	// PortRewritten counts the packets counted in OK whose ICRC verified
	// only with a UDP source port other than the captured 4791: the
	// capture tool (NIC sniffer) rewrote the source port.
	PortRewritten uint64 `json:"port_rewritten"`
	// OriginalSrcPorts lists the source ports those ICRCs were computed
	// over (the ECMP entropy ports), distinct, first seen first, at most
	// 8; absent when none was recovered.
	OriginalSrcPorts []uint16 `json:"original_src_ports,omitempty"`
}

// Sample is one throughput interval.
type Sample struct {
	// Start is the interval's start.
	Start        time.Time `json:"start"`
	Packets      uint64    `json:"packets"`
	PayloadBytes uint64    `json:"payload_bytes"`
	WireBytes    uint64    `json:"wire_bytes"`
}
