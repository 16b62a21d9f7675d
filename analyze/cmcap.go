package analyze

import (
	"fmt"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
)

// The CM connection table is bounded like the flow table: a REQ with a new
// CommID is a connection only while Options.MaxConnections (and the run's
// Budget) allow; further ones are counted in
// Capture.ConnectionsDropped and a connection_table_full finding. Every
// structure of the table is bounded by the cap:
//
//   - list and reqAt: one entry per connection;
//   - byComm: at most two CommIDs per connection (its REQ's and its first
//     REP's);
//   - byFlow: at most two data flows per connection, bound by its first REP;
//   - orphans: at most min(conn.MaxOrphans, MaxConnections).
//
// A REP for a connection that already has one changes nothing (a
// retransmitted REP repeats it; one with another CommID or QPN collides
// with it), so a REP flood grows no state. CM messages beyond what the
// connections explain are a cm_flood finding (conn.Flooded).

// defaultMaxConnections is the default Options.MaxConnections.
const defaultMaxConnections = 100_000

// admitConnection reports whether a REQ with a new CommID may become a
// connection, and counts it when it may not.
func (a *Analyzer) admitConnection(p *Packet) bool {
	t := &a.conns
	a.shard.noteConnGrew()
	if len(t.List) < a.opts.MaxConnections && a.opts.connBudget.take() {
		return true
	}
	a.capture.ConnectionsDropped++
	if t.Stats.First == 0 { // capsExact's too
		t.Stats.First, t.Stats.FirstAt = p.Frame, p.Time
	}
	return false
}

// countCM counts a CM message and notes where the messages first outnumber
// what the connections explain.
func (a *Analyzer) countCM(p *Packet) {
	s := &a.conns.Stats
	s.Messages++
	a.shard.noteCM(p)
	if s.FloodAt == 0 && a.cmFlood() {
		s.FloodAt, s.FloodT = p.Frame, p.Time
	}
}

// cmFlood reports whether the CM messages outnumber what the connections
// (tracked and refused) explain.
func (a *Analyzer) cmFlood() bool {
	return conn.Flooded(a.conns.Stats.Messages, uint64(len(a.conns.List))+a.capture.ConnectionsDropped)
}

// maxOrphans is how many CM messages without their REQ are kept.
func (a *Analyzer) maxOrphans() int { return min(conn.MaxOrphans, a.opts.MaxConnections) }

// cmFindings returns the findings of the CM table's bounds: REQs refused
// by the connection cap, and a flood of CM messages.
func (a *Analyzer) cmFindings() []Finding {
	var out []Finding
	s := &a.conns.Stats
	if n := a.capture.ConnectionsDropped; n > 0 {
		out = append(out, Finding{Frame: s.First, Time: s.FirstAt, Kind: KindConnectionTableFull, Severity: SeverityWarning, File: a.opts.File,
			Detail: fmt.Sprintf("connection table full: %d REQs with a new CommID counted but not tracked (--max-connections %d)", n, a.opts.MaxConnections)})
	}
	if s.FloodAt != 0 {
		conns := uint64(len(a.conns.List)) + a.capture.ConnectionsDropped
		out = append(out, Finding{Frame: s.FloodAt, Time: s.FloodT, Kind: KindCMFlood, Severity: SeverityWarning, File: a.opts.File,
			Detail: fmt.Sprintf("CM flood: %d CM messages for %d connections (retries explain at most %d per connection); %d of them changed nothing", s.Messages, conns, conn.MessagesPerConnection, s.Ignored)})
	}
	return out
}
