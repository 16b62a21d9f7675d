package conn

import (
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
)

// Kind names the CM messages that can arrive without their REQ.
type Kind uint8

// The CM messages that can arrive without their REQ.
const (
	REP Kind = iota
	RTU
	REJ
	DREQ
	DREP
)

// Orphan is a CM message whose connection's REQ was not in this part of
// the capture (it may be in the part before: see ApplyOrphans).
type Orphan struct {
	Kind                  Kind
	LocalComm, RemoteComm uint32
	QPN, PSN              uint32
	HasQPN, HasPSN        bool // the REP's LocalQPN and StartingPSN were captured
	Reason                string
	Frame                 uint64
	Tunnel                decode.FlowTunnel // the tunnel the message arrived in (zero: none)
}

// CommIDs returns the CommIDs o claims for its part of the capture (n
// of them): a REP its requester's (RemoteComm), a REJ both (either side
// may send one), the others their sender's (LocalComm).
func (o *Orphan) CommIDs() (ids [2]uint32, n int) {
	switch o.Kind {
	case REP:
		return [2]uint32{o.RemoteComm}, 1
	case REJ:
		return [2]uint32{o.RemoteComm, o.LocalComm}, 2
	}
	return [2]uint32{o.LocalComm}, 1
}

// ApplyOrphans applies to the first part's connections the CM messages
// the second part saw without their REQ (a REP, RTU, DREQ or DREP after
// the seam). Each message goes to the first connection (in list order)
// in its tunnel one of whose CommIDs is the message's local or remote
// CommID (two tenants may use the same CommIDs). The connections are
// indexed by CommID once, so applying costs O(connections + orphans),
// not their product.
func ApplyOrphans(conns []Connection, orphans []Orphan) {
	if len(orphans) == 0 {
		return
	}
	ix := commIndex{conns: conns, head: make(map[uint32]int32, 2*len(conns)), rest: map[uint32][]int32{}}
	for i := range conns {
		if conns[i].State == StateInferred {
			continue // no CommID
		}
		ix.insert(conns[i].LocalCommID, i)
		if conns[i].RemoteCommID != 0 {
			ix.insert(conns[i].RemoteCommID, i)
		}
	}
	for _, o := range orphans {
		i := ix.first(o.LocalComm, o.Tunnel)
		if j := ix.first(o.RemoteComm, o.Tunnel); j >= 0 && (i < 0 || j < i) {
			i = j
		}
		if i < 0 {
			continue
		}
		c := &conns[i]
		remote := c.RemoteCommID
		c.apply(o)
		if c.RemoteCommID != remote && c.RemoteCommID != 0 {
			ix.insert(c.RemoteCommID, i) // a REP named the other side
		}
	}
}

// commIndex lists, for each CommID, the connections that have it (as
// their local or remote CommID) in ascending order: the first in head (one
// map entry, no allocation, for the usual CommID of one connection), any
// others in rest. An entry goes stale when a REP changes a connection's
// remote CommID; first skips it.
type commIndex struct {
	conns []Connection
	head  map[uint32]int32
	rest  map[uint32][]int32
}

// insert adds connection i under id.
func (ix *commIndex) insert(id uint32, i int) {
	h, ok := ix.head[id]
	n := int32(i)
	switch {
	case !ok:
		ix.head[id] = n
		return
	case h == n:
		return
	case n < h:
		ix.head[id], n = n, h
	}
	l := ix.rest[id]
	k, found := slices.BinarySearch(l, n)
	if found {
		return
	}
	ix.rest[id] = slices.Insert(l, k, n)
}

// first returns the first connection in tunnel tun (zero: none) that has
// CommID id, or -1.
func (ix *commIndex) first(id uint32, tun decode.FlowTunnel) int {
	has := func(i int32) bool {
		c := &ix.conns[i]
		return (id == c.LocalCommID || c.RemoteCommID != 0 && id == c.RemoteCommID) && inTunnel(c, tun)
	}
	h, ok := ix.head[id]
	if !ok {
		return -1
	}
	if has(h) {
		return int(h)
	}
	for _, i := range ix.rest[id] {
		if has(i) {
			return int(i)
		}
	}
	return -1
}

// inTunnel says whether c's REQ arrived in tunnel tun (zero: none).
func inTunnel(c *Connection, tun decode.FlowTunnel) bool {
	if c.Tunnel == nil || tun == (decode.FlowTunnel{}) {
		return c.Tunnel == nil && tun == decode.FlowTunnel{}
	}
	return *c.Tunnel == tun
}
