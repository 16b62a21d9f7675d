package conn

import (
	"time"

	"github.com/gopacket/gopacket"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
	"github.com/roce-dissect/roce-dissect/cm"
)

// Table pairs CM messages into connections: a REQ opens one, the REP,
// REJ, RTU, DREQ and DREP that name its CommIDs (in the tunnel it
// arrived in) follow it, and a message whose REQ the table has not seen
// is kept as an Orphan for the part before (ApplyOrphans).
//
// Feed it each MAD: Message decodes it; for a REQ with a new CommID
// (NewREQ) the caller decides whether the table has room; Apply then
// records it and returns what the caller acts on (a Fact).
type Table struct {
	// List is the connections in the order of their REQs; a Connection's
	// ID is its place in it, from 1.
	List []*Connection
	// Orphans are the CM messages without their REQ, in frame order, at
	// most MaxOrphans of them; Orphaned counts them all, kept or not.
	Orphans    []Orphan
	Orphaned   uint64
	MaxOrphans int
	// Stats are the table's bounds; the caller counts Messages, First
	// and the flood in it, the table Ignored.
	Stats Stats

	byComm map[commKey]int // either side's CommID → connection
	mad    cm.MAD
	req    cm.ConnectRequest // REQ and REP as captured (cut or whole)
	rep    cm.ConnectReply
	names  names
	// The message Message decoded, for NewREQ and Apply.
	msg cm.Message
	got cm.Captured
	tun decode.FlowTunnel
}

// Stats counts what the CM table saw and what it did not keep.
type Stats struct {
	Messages uint64 // CM messages decoded
	Ignored  uint64 // messages that changed nothing: REPs to an answered connection, orphans beyond the cap
	First    uint64 // frame of the first REQ refused by the cap
	FirstAt  time.Time
	FloodAt  uint64 // frame of the first CM message past the flood threshold
	FloodT   time.Time
}

// MaxOrphans bounds the orphans a table keeps (with the connection cap).
const MaxOrphans = 1024

// NewTable returns an empty table; set its MaxOrphans.
func NewTable() Table {
	return Table{byComm: make(map[commKey]int)}
}

// commKey is a CommID in the tunnel its message arrived in: tenants of
// an overlay choose their CommIDs apart from each other's.
type commKey struct {
	id  uint32
	tun decode.FlowTunnel
}

// FactKind is what a CM message did to the table.
type FactKind uint8

// What a CM message did.
const (
	// Nothing the caller acts on.
	Nothing FactKind = iota
	// Opened: a REQ opened connection Fact.Index.
	Opened
	// Answered: a REP named connection Fact.Index's responder QP; its
	// data flows are now known.
	Answered
	// Rejected: a REJ (reason Fact.Reason) ended connection Fact.Index.
	Rejected
)

// Fact is what Apply did: Kind, the connection's index in List, and a
// REJ's reason.
type Fact struct {
	Kind   FactKind
	Index  int
	Reason string
}

// Message decodes p's MAD into the table (p.MADLayer points to it) and
// reports whether it is a CM message to Apply: a REQ or REP decoded from
// what was captured of it, or another CM message; not a REQ or REP cut
// before the CommIDs that pair it.
func (t *Table) Message(p *decode.Packet) bool {
	_ = t.mad.DecodeFromBytes(p.MAD, gopacket.NilDecodeFeedback)
	t.msg = nil
	if len(p.MAD) < cm.HeaderLen {
		return false
	}
	p.MADLayer = &t.mad
	t.msg, t.got = t.cmMessage()
	if t.msg == nil {
		return false
	}
	t.tun = p.Tunnel()
	return true
}

// cmMessage returns the CM message of the decoded MAD, with the mask of
// the fields a REQ or REP has.
func (t *Table) cmMessage() (cm.Message, cm.Captured) {
	if t.mad.Header.MgmtClass != cm.ClassCM {
		return nil, 0
	}
	switch t.mad.Header.AttributeID {
	case cm.AttrConnectRequest:
		got, _ := t.req.DecodePartial(t.mad.Data)
		if !got.Has(cm.ReqLocalCommID) {
			return nil, 0
		}
		return &t.req, got
	case cm.AttrConnectReply:
		got, _ := t.rep.DecodePartial(t.mad.Data)
		if !got.Has(cm.RepRemoteCommID) {
			return nil, 0
		}
		return &t.rep, got
	}
	return t.mad.CM(), 0
}

// NewREQ reports whether the message is a REQ with a CommID the table
// does not know: a connection if the caller admits it.
func (t *Table) NewREQ() bool {
	m, ok := t.msg.(*cm.ConnectRequest)
	if !ok {
		return false
	}
	_, known := t.byComm[commKey{m.LocalCommID, t.tun}]
	return !known
}

// Apply records the message Message decoded from p; admitted says
// whether a new REQ (NewREQ) may become a connection.
func (t *Table) Apply(p *decode.Packet, admitted bool) Fact {
	tun := t.tun
	switch m := t.msg.(type) {
	case *cm.ConnectRequest:
		return t.request(p, m, admitted)
	case *cm.ConnectReply:
		return t.reply(p, m)
	case *cm.ConnectReject:
		ev := Orphan{Kind: REJ, LocalComm: m.LocalCommID, RemoteComm: m.RemoteCommID, Reason: m.Reason.String(), Frame: p.Frame, Tunnel: tun}
		idx, ok := t.byComm[commKey{m.RemoteCommID, tun}]
		if !ok {
			idx, ok = t.byComm[commKey{m.LocalCommID, tun}]
		}
		if !ok {
			t.orphan(ev)
			return Fact{}
		}
		t.List[idx].apply(ev)
		return Fact{Kind: Rejected, Index: idx, Reason: ev.Reason}
	case *cm.ReadyToUse:
		t.follow(Orphan{Kind: RTU, LocalComm: m.LocalCommID, RemoteComm: m.RemoteCommID, Frame: p.Frame, Tunnel: tun})
	case *cm.DisconnectRequest:
		t.follow(Orphan{Kind: DREQ, LocalComm: m.LocalCommID, RemoteComm: m.RemoteCommID, Frame: p.Frame, Tunnel: tun})
	case *cm.DisconnectReply:
		t.follow(Orphan{Kind: DREP, LocalComm: m.LocalCommID, RemoteComm: m.RemoteCommID, Frame: p.Frame, Tunnel: tun})
	}
	return Fact{}
}

// request records a REQ: a new connection when admitted, else the first
// frame of a known one.
func (t *Table) request(p *decode.Packet, m *cm.ConnectRequest, admitted bool) Fact {
	k := commKey{m.LocalCommID, t.tun}
	idx, ok := t.byComm[k]
	if !ok && !admitted {
		return Fact{}
	}
	f := Fact{}
	if !ok {
		idx = len(t.List)
		c := new(Connection)
		*c = t.names.requested(idx+1, p, t.tun, m, t.got)
		t.List = append(t.List, c)
		t.byComm[k] = idx
		f = Fact{Kind: Opened, Index: idx}
	}
	if c := t.List[idx]; c.Frames.REQ == 0 {
		c.Frames.REQ = p.Frame
		c.setSendPSNs()
	}
	return f
}

// reply records a REP: the first for its connection names the
// responder's CommID and QP.
func (t *Table) reply(p *decode.Packet, m *cm.ConnectReply) Fact {
	got, tun := t.got, t.tun
	ev := Orphan{Kind: REP, LocalComm: m.LocalCommID, RemoteComm: m.RemoteCommID, QPN: m.LocalQPN, PSN: m.StartingPSN,
		HasQPN: got.Has(cm.RepLocalQPN), HasPSN: got.Has(cm.RepStartingPSN), Frame: p.Frame, Tunnel: tun}
	idx, ok := t.byComm[commKey{m.RemoteCommID, tun}]
	if !ok {
		t.orphan(ev)
		return Fact{}
	}
	c := t.List[idx]
	if c.Frames.REP != 0 {
		// Answered already: a retransmitted REP repeats the first, any
		// other collides with it. Neither grows the table.
		t.Stats.Ignored++
		return Fact{}
	}
	c.apply(ev)
	if got&repUsed != repUsed && !c.cut("REP") {
		c.Truncated, c.CutMessages = true, append(c.CutMessages, "REP")
	}
	if got.Has(cm.RepLocalCommID) {
		t.byComm[commKey{m.LocalCommID, tun}] = idx
	}
	return Fact{Kind: Answered, Index: idx}
}

// follow applies a message sent by either side of a known connection
// (its sender's CommID is known), or keeps it as an orphan.
func (t *Table) follow(ev Orphan) {
	if idx, ok := t.byComm[commKey{ev.LocalComm, ev.Tunnel}]; ok {
		t.List[idx].apply(ev)
		return
	}
	t.orphan(ev)
}

func (t *Table) orphan(o Orphan) {
	t.Orphaned++
	if len(t.Orphans) < t.MaxOrphans {
		t.Orphans = append(t.Orphans, o)
		return
	}
	t.Stats.Ignored++
}

// CommIDs is how many CommIDs the table pairs by: at most two per
// connection (its REQ's and its first REP's).
func (t *Table) CommIDs() int { return len(t.byComm) }
