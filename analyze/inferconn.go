package analyze

import (
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"

	"github.com/roce-dissect/roce-dissect/layers"
)

// StateInferred is the State of a connection no CM handshake set up, whose
// two flows the packets paired: an RC QP's requests one way and the ACKs
// and responses that answered them (by PSN) the other. NCCL, perftest and
// UCCL exchange their QPNs out of band and never use CM.
const StateInferred = conn.StateInferred

// inferConnections lists in r the RC connections that the flows show
// without CM, after the CM connections: one for each request flow that
// no connection holds and whose ACKs' flow (its peer) none holds either,
// in the order of the flows. It returns each flow's inferred connection
// ID by flow index (0: none); the Analyzer's own tables are left as they
// are (Report may be called while frames are still fed).
func (a *Analyzer) inferConnections(r *Report) []int {
	var ids []int
	for i, f := range a.flowList {
		if f.conn >= 0 || f.peer < 0 || f.transport != layers.TransportRC || f.requestPackets() == 0 {
			continue
		}
		g := a.flowList[f.peer]
		if g.conn >= 0 || ids != nil && ids[g.index] != 0 {
			continue
		}
		if ids == nil {
			ids = make([]int, len(a.flowList))
		}
		src, dst, _ := f.dir.names()
		reqQPN, respQPN, rc := g.qp, f.qp, layers.TransportRC.String()
		c := Connection{
			ID:        len(r.Connections) + 1,
			Requester: Endpoint{IP: src, QPN: &reqQPN},
			Responder: Endpoint{IP: dst, QPN: &respQPN},
			Transport: &rc,
			State:     StateInferred,
			Tunnel:    f.dir.tun.report(),
		}
		conn.SetFlow(&c, int32(i))
		r.Connections = append(r.Connections, c)
		ids[i], ids[g.index] = c.ID, c.ID
	}
	return ids
}

// settleInferred gives a merged report one connection per RC pair: the
// flows of an inferred connection whose pair a CM connection of the
// report holds (its REQ and REP in another part) are the CM
// connection's, and the inferred connections no flow names then (those,
// and a pair another part inferred with its other side first) are
// removed, the rest numbered anew.
func (r *Report) settleInferred() {
	type side struct {
		ip  string
		qpn uint32
	}
	type pair struct {
		a, b side
		tun  FlowTunnel
	}
	pairOf := func(c *Connection) (pair, bool) {
		if c.Requester.QPN == nil || c.Responder.QPN == nil {
			return pair{}, false
		}
		p := pair{a: side{c.Requester.IP, *c.Requester.QPN}, b: side{c.Responder.IP, *c.Responder.QPN}}
		if p.b.ip < p.a.ip || p.b.ip == p.a.ip && p.b.qpn < p.a.qpn {
			p.a, p.b = p.b, p.a
		}
		if c.Tunnel != nil {
			p.tun = *c.Tunnel
		}
		return p, true
	}
	cm := map[pair]int{}
	for i := range r.Connections {
		if c := &r.Connections[i]; c.State != StateInferred {
			if p, ok := pairOf(c); ok {
				cm[p] = c.ID
			}
		}
	}
	for i := range r.Flows {
		f := &r.Flows[i]
		if f.Connection == nil || !r.inferred(*f.Connection) {
			continue
		}
		if p, ok := pairOf(&r.Connections[*f.Connection-1]); ok && cm[p] != 0 {
			id := cm[p]
			f.Connection = &id
		}
	}
	named := make(map[int]bool, len(r.Connections))
	for i := range r.Flows {
		if c := r.Flows[i].Connection; c != nil {
			named[*c] = true
		}
	}
	unnamed := func(c *Connection) bool { return c.State == StateInferred && !named[c.ID] }
	if !slices.ContainsFunc(r.Connections, func(c Connection) bool { return unnamed(&c) }) {
		return
	}
	remap := make(map[int]int, len(r.Connections)) // old ID → new
	kept := r.Connections[:0]
	for _, c := range r.Connections {
		if unnamed(&c) {
			continue
		}
		remap[c.ID] = len(kept) + 1
		c.ID = len(kept) + 1
		kept = append(kept, c)
	}
	r.Connections = kept
	for i := range r.Flows {
		if c := r.Flows[i].Connection; c != nil && remap[*c] != *c {
			id := remap[*c]
			r.Flows[i].Connection = &id
		}
	}
	for i, fd := range r.Findings {
		if fd.Connection != 0 {
			r.Findings[i] = fd.withConnection(remap[fd.Connection])
		}
	}
}

// inferred says whether connection id of r is an inferred one.
func (r *Report) inferred(id int) bool {
	return id >= 1 && id <= len(r.Connections) && r.Connections[id-1].ID == id && r.Connections[id-1].State == StateInferred
}
