package analyze

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPeerSearchBounded: ACKs that match no request flow stop searching
// after maxPairTries, and a search looks at the reverse-direction flows
// only, at most maxPairCandidates of them.
func TestPeerSearchBounded(t *testing.T) {
	a := New(Options{})
	x, y := Addr{IP: netip.MustParseAddr("10.0.0.1")}, Addr{IP: netip.MustParseAddr("10.0.0.2")}
	mk := func(k flowKey) *flowState {
		hk := hostsOf(k.src, k.dst, k.tun)
		d := a.dirs[hk]
		if d == nil {
			d = &hostDir{src: k.src, dst: k.dst, tun: k.tun}
			a.dirs[hk] = d
		}
		f := &flowState{dir: d, qp: k.qp, index: int32(len(a.flowList)), peer: -1, conn: -1}
		a.flowList = append(a.flowList, f)
		d.flows = append(d.flows, f.index)
		return f
	}
	for qp := range uint32(1000) {
		mk(flowKey{src: x, dst: y, qp: 100 + qp}) // request flows with nothing pending
	}
	ack := mk(flowKey{src: y, dst: x, qp: 7})
	for range 3 * maxPairTries {
		assert.Nil(t, a.peerOf(ack, 42))
	}
	assert.Equal(t, uint8(maxPairTries), ack.pairTries)

	// A request flow waiting for PSN 42 among the first candidates pairs.
	req := a.flowList[0]
	req.pending.push(pendingReq{psn: 42})
	ack2 := mk(flowKey{src: y, dst: x, qp: 8})
	assert.Same(t, req, a.peerOf(ack2, 42))
	assert.Equal(t, ack2.index, req.peer)
}
