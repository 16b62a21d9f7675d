package conn

import (
	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
	"github.com/roce-dissect/roce-dissect/cm"
)

// names interns the strings connections repeat: the few hosts and
// services of a fabric name its thousands of connections, each of which
// allocated its own copies. The strings are never changed, so the
// connections share them.
type names struct {
	gids       map[cm.GID]*string
	ips        map[decode.Addr]string
	services   map[cm.ServiceID]*string
	transports map[cm.TransportServiceType]*string
}

func (n *names) gid(g cm.GID) *string { return interned(&n.gids, g, g.String) }

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
func (n *names) ip(a decode.Addr) string {
	if s, ok := n.ips[a]; ok {
		return s
	}
	if n.ips == nil {
		n.ips = map[decode.Addr]string{}
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

func (n *names) service(id cm.ServiceID) *string { return interned(&n.services, id, id.String) }

func (n *names) transport(t cm.TransportServiceType) *string {
	return interned(&n.transports, t, t.String)
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
func (n *names) endpointOf(addr decode.Addr, req *cm.ConnectRequest, got cm.Captured, local bool, v *endpointValues) Endpoint {
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
		e.IP = n.ip(decode.Addr{IP: gid.Addr().Unmap()})
	} else {
		e.IP = n.ip(addr)
	}
	return e
}

// The REQ and REP fields a connection shows: a message cut before any of
// them is named in Connection.CutMessages.
const (
	reqUsed = 1<<cm.ReqLocalCommID | 1<<cm.ReqServiceID | 1<<cm.ReqLocalQPN | 1<<cm.ReqTransportServiceType |
		1<<cm.ReqStartingPSN | 1<<cm.ReqPathMTU | 1<<cm.ReqPrimaryLocalLID | 1<<cm.ReqPrimaryRemoteLID |
		1<<cm.ReqPrimaryLocalGID | 1<<cm.ReqPrimaryRemoteGID
	repUsed = 1<<cm.RepLocalCommID | 1<<cm.RepRemoteCommID | 1<<cm.RepLocalQPN | 1<<cm.RepStartingPSN
)

// requested is connection id as the REQ m of packet p (arrived in tunnel
// tun) sets it up, with the fields got says the REQ held.
func (n *names) requested(id int, p *decode.Packet, tun decode.FlowTunnel, m *cm.ConnectRequest, got cm.Captured) Connection {
	v := &reqValues{}
	c := Connection{
		ID:          id,
		Requester:   n.endpointOf(p.Src, m, got, true, &v.requester),
		Responder:   n.endpointOf(p.Dst, m, got, false, &v.responder),
		State:       StateRequested,
		LocalCommID: m.LocalCommID,
	}
	if tun != (decode.FlowTunnel{}) {
		c.Tunnel = &tun
	}
	if got.Has(cm.ReqServiceID) {
		c.ServiceID = n.service(m.ServiceID)
		if m.ServiceID.IsRDMACM() {
			c.RDMACMPortSpace = m.ServiceID.PortSpace().String()
			c.RDMACMPort = m.ServiceID.Port()
		}
	}
	if got.Has(cm.ReqTransportServiceType) {
		c.Transport = n.transport(m.TransportServiceType)
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
