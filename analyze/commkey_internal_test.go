package analyze

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/cm"
)

// TestCommIDsPerHostPair: two connections of other hosts with the same
// CommIDs (their CM agents chose alike) are two connections, each REP,
// RTU and DREQ paired with its own host pair's REQ; before, the second
// REQ was taken for a retransmission of the first, its REP for a
// collision, and the shards of the capture had to fall back to one
// Analyzer. On 2 shards the report is one Analyzer's.
func TestCommIDsPerHostPair(t *testing.T) {
	req := func(qpn uint32) *cm.ConnectRequest {
		return &cm.ConnectRequest{LocalCommID: 7, LocalQPN: qpn, StartingPSN: 100, PathMTU: cm.MTU4096, TransportServiceType: cm.TransportRC}
	}
	rep := func(qpn uint32) *cm.ConnectReply {
		return &cm.ConnectReply{LocalCommID: 9, RemoteCommID: 7, LocalQPN: qpn, StartingPSN: 200}
	}
	frames := [][]byte{
		madFrame(t, hostA, hostB, req(0x100)),
		madFrame(t, hostC, hostD, req(0x300)),
		madFrame(t, hostD, hostC, rep(0x400)),
		madFrame(t, hostB, hostA, rep(0x200)),
		madFrame(t, hostA, hostB, &cm.ReadyToUse{LocalCommID: 7, RemoteCommID: 9}),
		madFrame(t, hostC, hostD, &cm.ReadyToUse{LocalCommID: 7, RemoteCommID: 9}),
		madFrame(t, hostD, hostC, &cm.DisconnectRequest{LocalCommID: 9, RemoteCommID: 7}),
	}
	want, sharded, s := feedOneAndSharded(t, frames, Options{}, 2)
	require.Len(t, want.Connections, 2)
	for i, c := range []struct {
		requester, responder string
		reqQPN, repQPN       uint32
		frames               ConnFrames
	}{
		{"10.0.0.1", "10.0.0.2", 0x100, 0x200, ConnFrames{REQ: 1, REP: 4, RTU: 5}},
		{"10.0.0.3", "10.0.0.4", 0x300, 0x400, ConnFrames{REQ: 2, REP: 3, RTU: 6, DREQ: 7}},
	} {
		got := want.Connections[i]
		assert.Equal(t, c.requester, got.Requester.IP, "connection %d", i+1)
		assert.Equal(t, c.responder, got.Responder.IP, "connection %d", i+1)
		require.NotNil(t, got.Requester.QPN)
		require.NotNil(t, got.Responder.QPN)
		assert.Equal(t, c.reqQPN, *got.Requester.QPN, "connection %d", i+1)
		assert.Equal(t, c.repQPN, *got.Responder.QPN, "connection %d", i+1)
		assert.Equal(t, c.frames, got.Frames, "connection %d", i+1)
	}
	assert.Empty(t, want.cmOrphans)
	assert.Equal(t, want.Connections, sharded.Connections)
	assert.Equal(t, s.Frames()[0] > 0 && s.Frames()[1] > 0, true, "the two host pairs in two shards: %v", s.Frames())
}
