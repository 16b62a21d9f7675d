package analyze

import (
	"sort"
	"time"
)

// addFinding records an anomaly.
func (a *Analyzer) addFinding(p *Packet, kind, severity, flow, detail string) {
	p.Findings++
	if len(a.findings) >= a.opts.MaxFindings {
		a.dropped++
		return
	}
	a.findings = append(a.findings, Finding{Frame: p.Frame, Time: p.Time, Kind: kind, Severity: severity, Flow: flow, Detail: detail, File: a.opts.File})
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

// SeverityRank orders severities, worst first (error 0, warning 1, info 2).
func SeverityRank(s string) int {
	switch s {
	case SeverityError:
		return 0
	case SeverityWarning:
		return 1
	}
	return 2
}

// Finding kinds.
const (
	KindPSNGap         = "psn_gap"
	KindRetransmission = "retransmission"
	KindDuplicate      = "duplicate"
	KindOutOfOrder     = "out_of_order"
	KindNAK            = "nak"
	KindRNRNAK         = "rnr_nak"
	KindCNP            = "cnp"
	KindECNCE          = "ecn_ce"
	KindBadICRC        = "bad_icrc"
	KindMalformed      = "malformed"
	KindMTUAbove       = "mtu_above_negotiated"
	KindMTUMismatch    = "mtu_mismatch"
	KindIncomplete     = "incomplete_message"
	KindDMALength      = "dma_length_mismatch"
	KindCMReject       = "cm_reject"
	KindUnknownOpcode  = "unknown_opcode"
	// KindBadOriginalLength: a frame's original length is above
	// MaxOriginalLength (it is counted as its captured length).
	KindBadOriginalLength = "bad_original_length"
	KindToolCutFrames     = "tool_cut_frames"
	// KindConnectionTableFull: REQs with a new CommID were refused by the
	// connection cap (Options.MaxConnections).
	KindConnectionTableFull = "connection_table_full"
	// KindCMFlood: more CM messages than the connections explain.
	KindCMFlood = "cm_flood"
)

// Severities of findings, worst first.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	SeverityInfo    = "info"
)

// Finding is one anomaly, with the frame to look at in Wireshark.
type Finding struct {
	Frame    uint64    `json:"frame"`
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"`
	Severity string    `json:"severity"`
	Flow     string    `json:"flow"`
	Detail   string    `json:"detail"`
	File     string    `json:"file,omitempty"`
}
