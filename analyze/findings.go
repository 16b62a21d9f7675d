package analyze

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Adding a finding kind: a Kind constant below, one entry in Kinds (the
// kind, each severity it is reported with, what it means), and the same
// row in docs/analysis.md's table of findings (TestKindsMatchDocs checks
// that the two agree). Report it from the hot path with Analyzer.finding,
// which checks the cap before the detail is formatted.

// Kind names what a finding reports; its string is the JSON "kind".
type Kind string

// Finding kinds (Kinds says what each means).
const (
	KindPSNGap              Kind = "psn_gap"
	KindRetransmission      Kind = "retransmission"
	KindDuplicate           Kind = "duplicate"
	KindOutOfOrder          Kind = "out_of_order"
	KindNAK                 Kind = "nak"
	KindRNRNAK              Kind = "rnr_nak"
	KindCNP                 Kind = "cnp"
	KindECNCE               Kind = "ecn_ce"
	KindBadICRC             Kind = "bad_icrc"
	KindMalformed           Kind = "malformed"
	KindMTUAbove            Kind = "mtu_above_negotiated"
	KindMTUMismatch         Kind = "mtu_mismatch"
	KindIncomplete          Kind = "incomplete_message"
	KindDMALength           Kind = "dma_length_mismatch"
	KindCMReject            Kind = "cm_reject"
	KindUnknownOpcode       Kind = "unknown_opcode"
	KindBadOriginalLength   Kind = "bad_original_length"
	KindToolCutFrames       Kind = "tool_cut_frames"
	KindConnectionTableFull Kind = "connection_table_full"
	KindCMFlood             Kind = "cm_flood"
	KindCaptureGap          Kind = "capture_gap"
	KindPSNBeforeStart      Kind = "psn_before_start"
	KindBadDMALength        Kind = "bad_dma_length"
	KindGoBackN             Kind = "go_back_n_violation"
	KindRNREarly            Kind = "rnr_early"
	KindCNPTooClose         Kind = "cnp_too_close"
	KindCNPNoSlowdown       Kind = "cnp_no_slowdown"
	KindPauseStorm          Kind = "pause_storm"
)

// KindInfo is one row of the table of findings: a kind, a severity it is
// reported with, and what it means.
type KindInfo struct {
	Kind     Kind
	Severity Severity
	Meaning  string
}

// Kinds returns the table of findings: every kind at every severity an
// Analyzer reports it with, worst first (docs/analysis.md has the same
// table).
func Kinds() []KindInfo {
	return []KindInfo{
		{KindPSNGap, SeverityError, "a request jumped over PSNs that were lost (NAKed or resent)"},
		{KindNAK, SeverityError, "an AETH NAK"},
		{KindBadICRC, SeverityError, "ICRC (or VCRC) differs from the computed one"},
		{KindMalformed, SeverityError, "an RDMA frame, or a frame in a damaged mirror or tunnel header, that could not be decoded"},
		{KindMTUAbove, SeverityError, "payload above the negotiated path MTU"},
		{KindDMALength, SeverityError, "RDMA WRITE size ≠ RETH DMALength"},
		{KindCMReject, SeverityError, "a CM REJ"},
		{KindGoBackN, SeverityError, "a resend after a NAK that restarted at another PSN than the NAKed one, or skipped PSNs sent before"},
		{KindRNREarly, SeverityError, "a resend sooner after an RNR NAK than the timer it advertised"},
		{KindPSNGap, SeverityWarning, "a request jumped over PSNs of unknown fate"},
		{KindRetransmission, SeverityWarning, "a request PSN seen before"},
		{KindDuplicate, SeverityWarning, "a request repeated byte for byte"},
		{KindOutOfOrder, SeverityWarning, "a request filling a hole"},
		{KindRNRNAK, SeverityWarning, "an RNR NAK"},
		{KindMTUMismatch, SeverityWarning, "FIRST/MIDDLE sizes differ, or differ from the negotiated MTU"},
		{KindIncomplete, SeverityWarning, "a message with a missing packet"},
		{KindPSNBeforeStart, SeverityWarning, "a flow's first request PSN is before its connection's send_psn"},
		{KindUnknownOpcode, SeverityWarning, "an opcode outside the IBTA table"},
		{KindBadDMALength, SeverityWarning, "an RDMA READ request's DMALength above 2^31 bytes"},
		{KindConnectionTableFull, SeverityWarning, "REQs with a new CommID beyond the connection cap"},
		{KindCMFlood, SeverityWarning, "more CM messages than the connections explain"},
		{KindBadOriginalLength, SeverityWarning, "a record header's original length above the largest frame"},
		{KindCNPTooClose, SeverityWarning, "a CNP closer to the previous CNP of its QP than half the NIC's own minimum interval"},
		{KindCNPNoSlowdown, SeverityWarning, "the sender's rate after a CNP was not below its rate before"},
		{KindToolCutFrames, SeverityWarning, "frames the capture tool cut, and a later frame longer than the cut length"},
		{KindPauseStorm, SeverityWarning, "a priority paused by one sender without a break for longer than the storm threshold"},
		{KindIncomplete, SeverityInfo, "a message whose only missing packets the capture missed but the responder acknowledged"},
		{KindCNP, SeverityInfo, "a congestion notification packet"},
		{KindECNCE, SeverityInfo, "a CE-marked packet"},
		{KindCaptureGap, SeverityInfo, "per flow: request PSNs the capture missed although the responder acknowledged them"},
		{KindToolCutFrames, SeverityInfo, "the capture tool cut frames without recording their length"},
	}
}

// Severity ranks a finding; a smaller Severity is worse (SeverityError <
// SeverityWarning < SeverityInfo). Its string is the JSON "severity". The
// zero Severity is not one.
type Severity uint8

// Severities of findings, worst first.
const (
	SeverityError Severity = iota + 1
	SeverityWarning
	SeverityInfo
)

// String names the severity: "error", "warning" or "info".
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInfo:
		return "info"
	}
	return fmt.Sprintf("Severity(%d)", uint8(s))
}

// MarshalText renders the severity as its name.
func (s Severity) MarshalText() ([]byte, error) {
	if s < SeverityError || s > SeverityInfo {
		return nil, fmt.Errorf("analyze: no severity %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	for v := SeverityError; v <= SeverityInfo; v++ {
		if string(b) == v.String() {
			*s = v
			return nil
		}
	}
	return fmt.Errorf("analyze: unknown severity %q", b)
}

// FlowID names a flow as Flow does: network source, network destination,
// destination QP, and the tunnel that tells it apart (Flow.Tunnel's
// String, "" for none).
type FlowID struct {
	Src, Dst string
	DestQP   uint32
	Tunnel   string
}

// ID returns the flow's FlowID.
func (f *Flow) ID() FlowID {
	return FlowID{Src: f.Src, Dst: f.Dst, DestQP: f.DestQP, Tunnel: f.Tunnel.String()}
}

// flowArrow, flowQP and flowIn separate the parts of a FlowID's string.
const (
	flowArrow = " → "
	flowQP    = " QP 0x"
	flowIn    = " in "
)

// String renders the flow as findings name it, "src → dst QP 0x00000b",
// then " in vxlan VNI 100" for a flow in a tunnel; "" for the zero
// FlowID.
func (k FlowID) String() string {
	if k == (FlowID{}) {
		return ""
	}
	s := fmt.Sprintf("%s%s%s%s%06x", k.Src, flowArrow, k.Dst, flowQP, k.DestQP)
	if k.Tunnel != "" {
		s += flowIn + k.Tunnel
	}
	return s
}

// parseFlowID reads what FlowID.String wrote.
func parseFlowID(s string) (FlowID, bool) {
	src, rest, ok := strings.Cut(s, flowArrow)
	if !ok {
		return FlowID{}, false
	}
	i := strings.LastIndex(rest, flowQP)
	if i < 0 {
		return FlowID{}, false
	}
	qpText, tunnel, _ := strings.Cut(rest[i+len(flowQP):], flowIn)
	qp, err := strconv.ParseUint(qpText, 16, 32)
	if err != nil {
		return FlowID{}, false
	}
	return FlowID{Src: src, Dst: rest[:i], DestQP: uint32(qp), Tunnel: tunnel}, true
}

// Finding is one anomaly, with the frame to look at in Wireshark. It
// marshals to the JSON object docs/json.md describes, whose "flow" is
// FlowName.
type Finding struct {
	Frame    uint64
	Time     time.Time
	Kind     Kind
	Severity Severity
	// Flow is the flow the finding is about; zero when it is about none
	// (a malformed frame, the capture, the CM table, a CM REJ).
	Flow FlowID
	// Connection is the ID of the CM connection the finding names: the
	// connection a cm_reject finding is about (its Flow is zero), the
	// connection whose send PSN a psn_before_start finding's flow began
	// before; 0 otherwise. Merge and Sharded renumber it with the
	// connections (withConnection), and the detail with it.
	Connection int
	Detail     string
	File       string

	// startPSNs: a psn_before_start finding's first request PSN and its
	// connection's send PSN, for its detail (psnBeforeStartDetail).
	startPSNs [2]uint32
}

// withConnection returns fd naming connection id instead of the one it
// names (0: none), its detail said again with the new number.
func (fd Finding) withConnection(id int) Finding {
	fd.Connection = id
	if fd.Kind == KindPSNBeforeStart && id != 0 {
		fd.Detail = psnBeforeStartDetail(fd.startPSNs[0], fd.startPSNs[1], id)
	}
	return fd
}

// psnBeforeStartDetail is a psn_before_start finding's detail.
func psnBeforeStartDetail(first, send uint32, conn int) string {
	return fmt.Sprintf("first request PSN %d is before PSN %d, where connection %d said this side's requests start", first, send, conn)
}

// connectionPrefix begins the flow name of a finding about a connection.
const connectionPrefix = "connection "

// FlowName names what the finding is about: its flow ("src → dst QP
// 0x…"), else "connection N", or "".
func (f *Finding) FlowName() string {
	if f.Flow == (FlowID{}) && f.Connection != 0 {
		return fmt.Sprintf("%s%d", connectionPrefix, f.Connection)
	}
	return f.Flow.String()
}

// findingJSON is the JSON form of a Finding (a public contract: keys in
// this order).
type findingJSON struct {
	Frame    uint64    `json:"frame"`
	Time     time.Time `json:"time"`
	Kind     Kind      `json:"kind"`
	Severity Severity  `json:"severity"`
	Flow     string    `json:"flow"`
	// Connection is Finding.Connection, absent when 0.
	Connection int    `json:"connection,omitempty"`
	Detail     string `json:"detail"`
	File       string `json:"file,omitempty"`
}

// MarshalJSON writes the finding with its flow as FlowName.
func (f Finding) MarshalJSON() ([]byte, error) {
	return json.Marshal(findingJSON{Frame: f.Frame, Time: f.Time, Kind: f.Kind, Severity: f.Severity, Flow: f.FlowName(), Connection: f.Connection, Detail: f.Detail, File: f.File})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (f *Finding) UnmarshalJSON(b []byte) error {
	var j findingJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*f = Finding{Frame: j.Frame, Time: j.Time, Kind: j.Kind, Severity: j.Severity, Connection: j.Connection, Detail: j.Detail, File: j.File}
	if j.Flow != "" && (j.Connection == 0 || j.Flow != f.FlowName()) {
		id, ok := parseFlowID(j.Flow)
		if !ok {
			return fmt.Errorf("analyze: finding flow %q is not \"src → dst QP 0x…\"", j.Flow)
		}
		f.Flow = id
	}
	return nil
}

// flowID is the flow's FlowID.
func (f *flowState) flowID() FlowID {
	src, dst, tunnel := f.dir.names()
	return FlowID{Src: src, Dst: dst, DestQP: f.qp, Tunnel: tunnel}
}

// finding lists a finding of the packet's frame about flow f (nil: about
// no flow) and returns it for the caller to fill in its Detail; it
// returns nil when the cap leaves no room (findingList), so that the
// detail of a finding that is not listed is never formatted.
func (a *Analyzer) finding(p *Packet, kind Kind, sev Severity, f *flowState) *Finding {
	p.Findings++
	return a.findingAt(p.Frame, p.Time, kind, sev, f)
}

// findingAt is finding for an earlier frame.
func (a *Analyzer) findingAt(frame uint64, t time.Time, kind Kind, sev Severity, f *flowState) *Finding {
	fd := a.findings.add(sev)
	if fd == nil {
		return nil
	}
	a.shard.noteFinding(a.pkt.Frame)
	*fd = Finding{Frame: frame, Time: t, Kind: kind, Severity: sev, File: a.opts.File}
	if f != nil {
		fd.Flow = f.flowID()
	}
	return fd
}

// sortFindings orders findings by file, then frame.
func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		if fs[i].File != fs[j].File {
			return fs[i].File < fs[j].File
		}
		return fs[i].Frame < fs[j].Frame
	})
}
