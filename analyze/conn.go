package analyze

import (
	"github.com/roce-dissect/roce-dissect/cm"
)

// connTable pairs CM messages into connections.
type connTable struct {
	list    []*Connection    // in Analyzer.slab (slabs)
	byComm  map[commKey]int  // either side's CommID → connection
	byFlow  map[mapKey]int32 // data flow (packed key: 48 bytes a slot, not 80) → connection
	reqAt   []flowKey        // requester → responder flow key (tunnel too) without QP, per connection
	mad     cm.MAD
	req     cm.ConnectRequest // REQ and REP as captured (cut or whole)
	rep     cm.ConnectReply
	orphans []cmOrphan
	stats   cmStats // bounds of the table (cmcap.go)
	// maxOrphans bounds orphans: min(maxCMOrphans, Options.MaxConnections).
	maxOrphans int
	orphaned   uint64 // messages that became orphans, kept or not (for combineShards)
	names      connNames
}

// connNames interns the strings connections repeat: the few hosts and
// services of a fabric name its thousands of connections, each of which
// allocated its own copies. The strings are never changed, so the
// connections share them.
type connNames struct {
	gids       map[cm.GID]*string
	ips        map[Addr]string
	services   map[cm.ServiceID]*string
	transports map[cm.TransportServiceType]*string
}

func (n *connNames) gid(g cm.GID) *string { return interned(&n.gids, g, g.String) }

// interned returns the string m keeps for k, made by name the first time.
func interned[K comparable](m *map[K]*string, k K, name func() string) *string {
	if s, ok := (*m)[k]; ok {
		return s
	}
	if *m == nil {
		*m = map[K]*string{}
	}
	s := ptrTo(name())
	(*m)[k] = s
	return s
}

// ip names an address as an endpoint's IP.
func (n *connNames) ip(a Addr) string {
	if s, ok := n.ips[a]; ok {
		return s
	}
	if n.ips == nil {
		n.ips = map[Addr]string{}
	}
	var s string
	switch {
	case a.IsLID:
		s = a.String()
	case a.IP.IsValid():
		s = a.IP.Unmap().String()
	}
	n.ips[a] = s
	return s
}

func (n *connNames) service(id cm.ServiceID) *string { return interned(&n.services, id, id.String) }

func (n *connNames) transport(t cm.TransportServiceType) *string {
	return interned(&n.transports, t, t.String)
}

func newConnTable() connTable {
	return connTable{byComm: make(map[commKey]int), byFlow: make(map[mapKey]int32)}
}

// commKey is a CommID in the tunnel its message arrived in (flowTunnel):
// tenants of an overlay choose their CommIDs apart from each other's.
type commKey struct {
	id  uint32
	tun flowTunnel
}

// cmKind names the CM messages that can arrive without their REQ.
type cmKind uint8

const (
	cmREP cmKind = iota
	cmRTU
	cmREJ
	cmDREQ
	cmDREP
)

// cmOrphan is a CM message whose connection's REQ was not in this
// capture (it may be in the part before: see Merge).
type cmOrphan struct {
	kind                  cmKind
	localComm, remoteComm uint32
	qpn, psn              uint32
	hasQPN, hasPSN        bool // the REP's LocalQPN and StartingPSN were captured
	reason                string
	frame                 uint64
	tun                   flowTunnel // the tunnel the message arrived in
}

// apply records on a connection a CM message that follows its REQ: the
// same whether the message came in the same capture or, through Merge, in
// the next part.
func (c *Connection) apply(o cmOrphan) {
	switch o.kind {
	case cmREP:
		c.RemoteCommID = o.localComm
		if o.hasQPN {
			c.Responder.QPN = ptrTo(o.qpn)
		}
		if o.hasPSN {
			c.Responder.StartingPSN = ptrTo(o.psn)
		}
		if c.Frames.REP == 0 {
			c.Frames.REP = o.frame
		}
		c.setSendPSNs()
		if c.State == StateRequested {
			c.State = StateEstablished
		}
	case cmRTU:
		if c.Frames.RTU == 0 {
			c.Frames.RTU = o.frame
		}
		if c.State == StateRequested {
			c.State = StateEstablished
		}
	case cmREJ:
		c.State, c.RejectReason = StateRejected, o.reason
		if c.Frames.REJ == 0 {
			c.Frames.REJ = o.frame
		}
	case cmDREQ:
		if c.Frames.DREQ == 0 {
			c.Frames.DREQ = o.frame
		}
	case cmDREP:
		if c.Frames.DREP == 0 {
			c.Frames.DREP = o.frame
		}
		if c.State != StateRejected {
			c.State = StateDisconnected
		}
	}
}

// setSendPSNs sets where each side's requests start: the StartingPSN
// field of the other side's CM message (Linux cm.c: the active side's
// sq_psn comes from the REP, the passive side's from the REQ).
func (c *Connection) setSendPSNs() {
	c.Requester.SendPSN, c.Responder.SendPSN = nil, nil
	if c.Frames.REP != 0 && c.Responder.StartingPSN != nil {
		c.Requester.SendPSN = ptrTo(*c.Responder.StartingPSN)
	}
	if c.Frames.REQ != 0 && c.Requester.StartingPSN != nil {
		c.Responder.SendPSN = ptrTo(*c.Requester.StartingPSN)
	}
}

// maxCMOrphans bounds the orphans kept.
const maxCMOrphans = 1024

func (t *connTable) orphan(o cmOrphan) {
	t.orphaned++
	if len(t.orphans) < t.maxOrphans {
		t.orphans = append(t.orphans, o)
		return
	}
	t.stats.ignored++
}

// reqValues holds the values a connection's REQ sets and its report points
// to: one allocation for all of them. They are never changed once set
// (a later CM message points to new values), so that a report's copy of
// the connection keeps what it showed.
type reqValues struct {
	requester, responder endpointValues
	pathMTU              int
}

// endpointValues holds the values an Endpoint points to.
type endpointValues struct {
	lid              uint16
	lidPlaceholder   bool
	qpn, startingPSN uint32
}

// endpointOf fills an endpoint from the packet address and what the REQ
// captured of its GID and LID (and, for the requester, QPN and PSN),
// pointing into v.
func (n *connNames) endpointOf(addr Addr, req *cm.ConnectRequest, got cm.Captured, local bool, v *endpointValues) Endpoint {
	gidF, lidF, gid, lid := cm.ReqPrimaryRemoteGID, cm.ReqPrimaryRemoteLID, req.PrimaryRemoteGID, req.PrimaryRemoteLID
	if local {
		gidF, lidF, gid, lid = cm.ReqPrimaryLocalGID, cm.ReqPrimaryLocalLID, req.PrimaryLocalGID, req.PrimaryLocalLID
	}
	var e Endpoint
	if got.Has(gidF) {
		e.GID = n.gid(gid)
	}
	if got.Has(lidF) {
		v.lid, v.lidPlaceholder = uint16(lid), lid.IsPlaceholder()
		e.LID, e.LIDPlaceholder = &v.lid, &v.lidPlaceholder
	}
	if local && got.Has(cm.ReqLocalQPN) {
		v.qpn = req.LocalQPN
		e.QPN = &v.qpn
	}
	if local && got.Has(cm.ReqStartingPSN) {
		v.startingPSN = req.StartingPSN
		e.StartingPSN = &v.startingPSN
	}
	if got.Has(gidF) && gid.IsIPv4Mapped() {
		e.IP = n.ip(Addr{IP: gid.Addr().Unmap()})
	} else {
		e.IP = n.ip(addr)
	}
	return e
}

func ptrTo[T any](v T) *T { return &v }

// The REQ and REP fields a connection shows: a message cut before any of
// them is named in Connection.CutMessages.
const (
	reqUsed = 1<<cm.ReqLocalCommID | 1<<cm.ReqServiceID | 1<<cm.ReqLocalQPN | 1<<cm.ReqTransportServiceType |
		1<<cm.ReqStartingPSN | 1<<cm.ReqPathMTU | 1<<cm.ReqPrimaryLocalLID | 1<<cm.ReqPrimaryRemoteLID |
		1<<cm.ReqPrimaryLocalGID | 1<<cm.ReqPrimaryRemoteGID
	repUsed = 1<<cm.RepLocalCommID | 1<<cm.RepRemoteCommID | 1<<cm.RepLocalQPN | 1<<cm.RepStartingPSN
)

// cmMessage returns the CM message of the decoded MAD: a REQ or REP
// decoded from what was captured of it (with the mask of the fields it
// has), or the message MAD decoded. It returns nil when there is none,
// or when a REQ or REP was cut before the CommIDs that pair it.
func (t *connTable) cmMessage() (cm.Message, cm.Captured) {
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

// requested is connection id as the REQ m of packet p sets it up, with the
// fields got says the REQ held.
func (t *connTable) requested(id int, p *Packet, m *cm.ConnectRequest, got cm.Captured) Connection {
	v := &reqValues{}
	c := Connection{
		ID:          id,
		Requester:   t.names.endpointOf(p.Src, m, got, true, &v.requester),
		Responder:   t.names.endpointOf(p.Dst, m, got, false, &v.responder),
		State:       StateRequested,
		LocalCommID: m.LocalCommID,
		Tunnel:      flowTunnelOf(p.Wraps).report(),
	}
	if got.Has(cm.ReqServiceID) {
		c.ServiceID = t.names.service(m.ServiceID)
		if m.ServiceID.IsRDMACM() {
			c.RDMACMPortSpace = m.ServiceID.PortSpace().String()
			c.RDMACMPort = m.ServiceID.Port()
		}
	}
	if got.Has(cm.ReqTransportServiceType) {
		c.Transport = t.names.transport(m.TransportServiceType)
	}
	if got.Has(cm.ReqPathMTU) {
		v.pathMTU = m.PathMTU.Bytes()
		c.PathMTU = &v.pathMTU
	}
	c.ackTimeout, c.ackTimeoutKnown = m.PrimaryLocalACKTimeout, got.Has(cm.ReqPrimaryLocalACKTimeout)
	if got&reqUsed != reqUsed {
		c.Truncated, c.CutMessages = true, []string{"REQ"}
	}
	return c
}

// handleMAD follows the CM handshake.
func (a *Analyzer) handleMAD(p *Packet) {
	t := &a.conns
	_ = t.mad.DecodeFromBytes(p.MAD, &a.fb)
	if len(p.MAD) < cm.HeaderLen {
		return
	}
	p.MADLayer = &t.mad
	msg, got := t.cmMessage()
	if msg != nil {
		a.countCM(p)
	}
	tun := flowTunnelOf(p.Wraps)
	switch m := msg.(type) {
	case *cm.ConnectRequest:
		idx, ok := t.byComm[commKey{m.LocalCommID, tun}]
		if !ok && !a.admitConnection(p) {
			return
		}
		if !ok {
			idx = len(t.list)
			c := a.slab.conns.get()
			*c = t.requested(idx+1, p, m, got)
			t.list = append(t.list, c)
			t.reqAt = append(t.reqAt, flowKey{src: p.Src, dst: p.Dst, tun: tun})
			t.byComm[commKey{m.LocalCommID, tun}] = idx
		}
		if t.list[idx].Frames.REQ == 0 {
			t.list[idx].Frames.REQ = p.Frame
			t.list[idx].setSendPSNs()
		}
	case *cm.ConnectReply:
		ev := cmOrphan{kind: cmREP, localComm: m.LocalCommID, remoteComm: m.RemoteCommID, qpn: m.LocalQPN, psn: m.StartingPSN,
			hasQPN: got.Has(cm.RepLocalQPN), hasPSN: got.Has(cm.RepStartingPSN), frame: p.Frame, tun: tun}
		idx, ok := t.byComm[commKey{m.RemoteCommID, tun}]
		if !ok {
			t.orphan(ev)
			return
		}
		c := t.list[idx]
		if c.Frames.REP != 0 {
			// Answered already: a retransmitted REP repeats the first, any
			// other collides with it. Neither grows the table.
			t.stats.ignored++
			return
		}
		c.apply(ev)
		if got&repUsed != repUsed && !c.cut("REP") {
			c.Truncated, c.CutMessages = true, append(c.CutMessages, "REP")
		}
		if got.Has(cm.RepLocalCommID) {
			t.byComm[commKey{m.LocalCommID, tun}] = idx
		}
		a.bindConnection(idx)
	case *cm.ConnectReject:
		ev := cmOrphan{kind: cmREJ, localComm: m.LocalCommID, remoteComm: m.RemoteCommID, reason: m.Reason.String(), frame: p.Frame, tun: tun}
		idx, ok := t.byComm[commKey{m.RemoteCommID, tun}]
		if !ok {
			idx, ok = t.byComm[commKey{m.LocalCommID, tun}]
		}
		if !ok {
			t.orphan(ev)
			return
		}
		c := t.list[idx]
		c.apply(ev)
		if fd := a.finding(p, KindCMReject, SeverityError, nil); fd != nil {
			fd.Connection, fd.Detail = c.ID, "CM REJ: "+m.Reason.String()
		}
	case *cm.ReadyToUse:
		t.follow(cmOrphan{kind: cmRTU, localComm: m.LocalCommID, remoteComm: m.RemoteCommID, frame: p.Frame, tun: tun})
	case *cm.DisconnectRequest:
		t.follow(cmOrphan{kind: cmDREQ, localComm: m.LocalCommID, remoteComm: m.RemoteCommID, frame: p.Frame, tun: tun})
	case *cm.DisconnectReply:
		t.follow(cmOrphan{kind: cmDREP, localComm: m.LocalCommID, remoteComm: m.RemoteCommID, frame: p.Frame, tun: tun})
	}
}

// cut reports whether the message named was cut.
func (c *Connection) cut(msg string) bool {
	for _, m := range c.CutMessages {
		if m == msg {
			return true
		}
	}
	return false
}

// bindConnection links the two data flows of a connection, those of its
// QPNs that were captured, to it and to each other.
func (a *Analyzer) bindConnection(idx int) {
	c := a.conns.list[idx]
	k := a.conns.reqAt[idx]
	switch {
	case c.Responder.QPN != nil && c.Requester.QPN != nil:
		a.bindFlows(idx, flowKey{src: k.src, dst: k.dst, tun: k.tun, qp: *c.Responder.QPN}, flowKey{src: k.dst, dst: k.src, tun: k.tun, qp: *c.Requester.QPN})
	case c.Responder.QPN != nil:
		a.bindFlow(idx, flowKey{src: k.src, dst: k.dst, tun: k.tun, qp: *c.Responder.QPN})
	case c.Requester.QPN != nil:
		a.bindFlow(idx, flowKey{src: k.dst, dst: k.src, tun: k.tun, qp: *c.Requester.QPN})
	}
}

// bindFlow links one data flow of a connection to it.
func (a *Analyzer) bindFlow(idx int, k flowKey) {
	a.conns.byFlow[k.packed()] = int32(idx)
	if i, ok := a.flowOf(k); ok {
		a.flowList[i].conn = int32(idx)
	}
}

// follow applies a message sent by either side of a known connection
// (its sender's CommID is known), or keeps it as an orphan for Merge.
func (t *connTable) follow(ev cmOrphan) {
	if idx, ok := t.byComm[commKey{ev.localComm, ev.tun}]; ok {
		t.list[idx].apply(ev)
		return
	}
	t.orphan(ev)
}

// bindFlows links the two data flows of a connection to it and to each
// other.
func (a *Analyzer) bindFlows(idx int, fwd, rev flowKey) {
	t := &a.conns
	t.byFlow[fwd.packed()], t.byFlow[rev.packed()] = int32(idx), int32(idx)
	var ff, rf *flowState
	if i, ok := a.flowOf(fwd); ok {
		ff = a.flowList[i]
		ff.conn = int32(idx)
	}
	if i, ok := a.flowOf(rev); ok {
		rf = a.flowList[i]
		rf.conn = int32(idx)
	}
	if ff != nil && rf != nil {
		ff.peer, rf.peer = rf.index, ff.index
	}
}

// linkConnection links a new flow to its connection and peer flow.
func (a *Analyzer) linkConnection(f *flowState) {
	i, ok := a.conns.byFlow[f.key().packed()]
	if !ok {
		return
	}
	idx := int(i)
	f.conn = int32(idx)
	c := a.conns.list[idx]
	k := a.conns.reqAt[idx]
	var rev flowKey
	var qp *uint32
	if f.dir.src == k.src {
		rev, qp = flowKey{src: k.dst, dst: k.src, tun: k.tun}, c.Requester.QPN
	} else {
		rev, qp = flowKey{src: k.src, dst: k.dst, tun: k.tun}, c.Responder.QPN
	}
	if qp == nil {
		return
	}
	rev.qp = *qp
	if i, ok := a.flowOf(rev); ok {
		f.peer = i
		a.flowList[i].peer = f.index
	}
}

// pathMTU is the negotiated path MTU in bytes, 0 when not captured.
func (c *Connection) pathMTU() int {
	if c.PathMTU == nil {
		return 0
	}
	return *c.PathMTU
}
