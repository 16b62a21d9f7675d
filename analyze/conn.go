package analyze

import (
	"fmt"

	"github.com/roce-dissect/roce-dissect/cm"
)

// connTable pairs CM messages into connections.
type connTable struct {
	list    []Connection
	byComm  map[uint32]int  // either side's CommID → connection
	byFlow  map[flowKey]int // data flow → connection
	reqAt   []flowKey       // requester → responder flow key without QP, per connection
	mad     cm.MAD
	req     cm.ConnectRequest // prefixes of truncated MADs
	rep     cm.ConnectReply
	orphans []cmOrphan
}

func newConnTable() connTable {
	return connTable{byComm: make(map[uint32]int), byFlow: make(map[flowKey]int)}
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
	psnKnown              bool // psn (REP StartingPSN) was captured
	reason                string
	frame                 uint64
}

// apply records on a connection a CM message that follows its REQ: the
// same whether the message came in the same capture or, through Merge, in
// the next part.
func (c *Connection) apply(o cmOrphan) {
	switch o.kind {
	case cmREP:
		c.Responder.QPN, c.Responder.StartingPSN, c.RemoteCommID = o.qpn, o.psn, o.localComm
		c.Responder.psnKnown = o.psnKnown
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
	if c.Frames.REP != 0 && c.Responder.psnKnown {
		v := c.Responder.StartingPSN
		c.Requester.SendPSN = &v
	}
	if c.Frames.REQ != 0 && c.Requester.psnKnown {
		v := c.Requester.StartingPSN
		c.Responder.SendPSN = &v
	}
}

// maxCMOrphans bounds the orphans kept.
const maxCMOrphans = 1024

func (t *connTable) orphan(o cmOrphan) {
	if len(t.orphans) < maxCMOrphans {
		t.orphans = append(t.orphans, o)
	}
}

// endpointOf fills an endpoint from a GID, a LID and the packet address.
func endpointOf(addr Addr, gid cm.GID, lid cm.LID, qpn, psn uint32) Endpoint {
	e := Endpoint{GID: gid.String(), LID: uint16(lid), LIDPlaceholder: lid.IsPlaceholder(), QPN: qpn, StartingPSN: psn}
	switch {
	case gid.IsIPv4Mapped():
		e.IP = gid.Addr().String()
	case addr.IsLID:
		e.IP = addr.String()
	case !addr.IP.IsValid():
		e.IP = ""
	default:
		e.IP = addr.IP.Unmap().String()
	}
	return e
}

// handleMAD follows the CM handshake.
func (a *Analyzer) handleMAD(p *Packet) {
	t := &a.conns
	err := t.mad.DecodeFromBytes(p.MAD, &a.fb)
	if len(p.MAD) >= cm.HeaderLen {
		p.MADLayer = &t.mad
	}
	msg := t.mad.CM()
	truncated, psnKnown := false, true
	if err != nil && msg == nil {
		// Cut inside the fixed fields: use what was captured.
		if len(p.MAD) < cm.HeaderLen || t.mad.Header.MgmtClass != cm.ClassCM {
			return
		}
		var ok bool
		switch t.mad.Header.AttributeID {
		case cm.AttrConnectRequest:
			ok, truncated = prefixREQ(t.mad.Data, &t.req)
			msg, psnKnown = &t.req, has(t.mad.Data, 44, 3)
		case cm.AttrConnectReply:
			ok, truncated = prefixREP(t.mad.Data, &t.rep)
			msg, psnKnown = &t.rep, has(t.mad.Data, 20, 3)
		}
		if !ok {
			return
		}
	}
	switch m := msg.(type) {
	case *cm.ConnectRequest:
		idx, ok := t.byComm[m.LocalCommID]
		if !ok {
			idx = len(t.list)
			c := Connection{
				ID:          idx + 1,
				Requester:   endpointOf(p.Src, m.PrimaryLocalGID, m.PrimaryLocalLID, m.LocalQPN, m.StartingPSN),
				Responder:   endpointOf(p.Dst, m.PrimaryRemoteGID, m.PrimaryRemoteLID, 0, 0),
				ServiceID:   m.ServiceID.String(),
				Transport:   m.TransportServiceType.String(),
				PathMTU:     m.PathMTU.Bytes(),
				State:       StateRequested,
				LocalCommID: m.LocalCommID,
				Truncated:   truncated,
			}
			c.Requester.psnKnown = psnKnown
			c.ackTimeout, c.ackTimeoutKnown = m.PrimaryLocalACKTimeout, has(t.mad.Data, 95, 1)
			if m.ServiceID.IsRDMACM() {
				c.RDMACMPortSpace = m.ServiceID.PortSpace().String()
				c.RDMACMPort = m.ServiceID.Port()
			}
			t.list = append(t.list, c)
			t.reqAt = append(t.reqAt, flowKey{src: p.Src, dst: p.Dst})
			t.byComm[m.LocalCommID] = idx
		}
		if t.list[idx].Frames.REQ == 0 {
			t.list[idx].Frames.REQ = p.Frame
			t.list[idx].setSendPSNs()
		}
	case *cm.ConnectReply:
		ev := cmOrphan{kind: cmREP, localComm: m.LocalCommID, remoteComm: m.RemoteCommID, qpn: m.LocalQPN, psn: m.StartingPSN, psnKnown: psnKnown, frame: p.Frame}
		idx, ok := t.byComm[m.RemoteCommID]
		if !ok {
			t.orphan(ev)
			return
		}
		c := &t.list[idx]
		c.apply(ev)
		c.Truncated = c.Truncated || truncated
		t.byComm[m.LocalCommID] = idx
		k := t.reqAt[idx]
		a.bindFlows(idx, flowKey{src: k.src, dst: k.dst, qp: c.Responder.QPN}, flowKey{src: k.dst, dst: k.src, qp: c.Requester.QPN})
	case *cm.ConnectReject:
		ev := cmOrphan{kind: cmREJ, localComm: m.LocalCommID, remoteComm: m.RemoteCommID, reason: m.Reason.String(), frame: p.Frame}
		idx, ok := t.byComm[m.RemoteCommID]
		if !ok {
			idx, ok = t.byComm[m.LocalCommID]
		}
		if !ok {
			t.orphan(ev)
			return
		}
		c := &t.list[idx]
		c.apply(ev)
		a.addFinding(p, KindCMReject, SeverityError, fmt.Sprintf("connection %d", c.ID), "CM REJ: "+m.Reason.String())
	case *cm.ReadyToUse:
		t.follow(cmOrphan{kind: cmRTU, localComm: m.LocalCommID, remoteComm: m.RemoteCommID, frame: p.Frame})
	case *cm.DisconnectRequest:
		t.follow(cmOrphan{kind: cmDREQ, localComm: m.LocalCommID, remoteComm: m.RemoteCommID, frame: p.Frame})
	case *cm.DisconnectReply:
		t.follow(cmOrphan{kind: cmDREP, localComm: m.LocalCommID, remoteComm: m.RemoteCommID, frame: p.Frame})
	}
}

// follow applies a message sent by either side of a known connection
// (its sender's CommID is known), or keeps it as an orphan for Merge.
func (t *connTable) follow(ev cmOrphan) {
	if idx, ok := t.byComm[ev.localComm]; ok {
		t.list[idx].apply(ev)
		return
	}
	t.orphan(ev)
}

// bindFlows links the two data flows of a connection to it and to each
// other.
func (a *Analyzer) bindFlows(idx int, fwd, rev flowKey) {
	t := &a.conns
	t.byFlow[fwd], t.byFlow[rev] = idx, idx
	var ff, rf *flowState
	if i, ok := a.flows[fwd.packed()]; ok {
		ff = a.flowList[i]
		ff.conn = idx
	}
	if i, ok := a.flows[rev.packed()]; ok {
		rf = a.flowList[i]
		rf.conn = idx
	}
	if ff != nil && rf != nil {
		ff.peer, rf.peer = rf.index, ff.index
	}
}

// linkConnection links a new flow to its connection and peer flow.
func (a *Analyzer) linkConnection(f *flowState) {
	idx, ok := a.conns.byFlow[f.key]
	if !ok {
		return
	}
	f.conn = idx
	c := &a.conns.list[idx]
	k := a.conns.reqAt[idx]
	var rev flowKey
	if f.key.src == k.src {
		rev = flowKey{src: k.dst, dst: k.src, qp: c.Requester.QPN}
	} else {
		rev = flowKey{src: k.src, dst: k.dst, qp: c.Responder.QPN}
	}
	if i, ok := a.flows[rev.packed()]; ok {
		f.peer = i
		a.flowList[i].peer = f.index
	}
}
