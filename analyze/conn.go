package analyze

import (
	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
)

// connTable is the connections stage (package analyze/internal/conn)
// and the links of its connections to the flow table.
type connTable struct {
	conn.Table
	byFlow map[mapKey]int32 // data flow (packed key: 48 bytes a slot, not 80) → connection
	reqAt  []flowKey        // requester → responder flow key (tunnel too) without QP, per connection
}

func newConnTable() connTable {
	return connTable{Table: conn.NewTable(), byFlow: make(map[mapKey]int32)}
}

// handleMAD follows the CM handshake.
func (a *Analyzer) handleMAD(p *Packet) {
	t := &a.conns
	if !t.Message(p) {
		return
	}
	a.countCM(p)
	admitted := t.NewREQ() && a.admitConnection(p)
	switch f := t.Apply(p, admitted); f.Kind {
	case conn.Opened:
		t.reqAt = append(t.reqAt, flowKey{src: p.Src, dst: p.Dst, tun: flowTunnelOf(p.Wraps)})
	case conn.Answered:
		a.bindConnection(f.Index)
	case conn.Rejected:
		if fd := a.finding(p, KindCMReject, SeverityError, nil); fd != nil {
			fd.Connection, fd.Detail = t.List[f.Index].ID, "CM REJ: "+f.Reason
		}
	}
}

// bindConnection links the two data flows of a connection, those of its
// QPNs that were captured, to it and to each other.
func (a *Analyzer) bindConnection(idx int) {
	c := a.conns.List[idx]
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
	c := a.conns.List[idx]
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
