package analyze

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// madFrame builds a RoCE v2 UD SEND ONLY to QP1 carrying a 256-byte CM
// MAD of msg (its ICRC is right only until the frame is patched).
func madFrame(t testing.TB, src, dst net.IP, msg cm.Message) []byte {
	t.Helper()
	eth := &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: src, DstIP: dst}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: 4791}
	require.NoError(t, udp.SetNetworkLayerForChecksum(ip))
	bth := &layers.BTH{Opcode: layers.OpcodeUDSendOnly, PKey: 0xFFFF, DestQP: 1}
	require.NoError(t, bth.SetNetworkLayerForChecksum(ip, udp))
	mad := &cm.MAD{Header: cm.Header{BaseVersion: 1, MgmtClass: cm.ClassCM, ClassVersion: 2, Method: 3}, Message: msg}
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true},
		eth, ip, udp, bth, &layers.DETH{QKey: 0x80010000, SrcQP: 1}, mad, &layers.ICRC{}))
	return append([]byte(nil), buf.Bytes()...)
}

// cmDataOffset is where the CM message starts in madFrame's frames:
// Ethernet 14, IPv4 20, UDP 8, BTH 12, DETH 8, MAD header 24.
const cmDataOffset = 14 + 20 + 8 + 12 + 8 + cm.HeaderLen

// cmFlood feeds n copies of frame, patch(i, frame) changing each.
func cmFlood(a *Analyzer, frame []byte, n int, patch func(i int, b []byte)) {
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		if patch != nil {
			patch(i, frame[cmDataOffset:])
		}
		a.Feed(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(frame), Length: len(frame)}, gplayers.LinkTypeEthernet, frame)
	}
}

func kindsOf(r *Report) map[Kind]int {
	out := map[Kind]int{}
	for _, f := range r.Findings {
		out[f.Kind]++
	}
	return out
}

// TestCMTableBounded: floods of CM messages grow no CM state beyond the
// connection cap, are counted and are findings. Before the cap, a REQ
// flood of new CommIDs made as many connections as packets (1M: 1.43 GiB)
// and a REP flood of colliding CommIDs grew byComm and byFlow by one entry
// each per REP, with "No problems found".
func TestCMTableBounded(t *testing.T) {
	const n = 20_000
	req := &cm.ConnectRequest{LocalCommID: 1, LocalQPN: 0x100, StartingPSN: 7, PathMTU: cm.MTU4096, TransportServiceType: cm.TransportRC}
	rep := &cm.ConnectReply{LocalCommID: 2, RemoteCommID: 1, LocalQPN: 0x200, StartingPSN: 9}
	commID := func(i int, b []byte) { binary.BigEndian.PutUint32(b[0:], uint32(i+1)) }
	tests := []struct {
		name      string
		max       int
		feed      func(a *Analyzer)
		conns     int
		dropped   uint64
		kinds     map[Kind]int
		maxComm   int
		maxFlows  int
		maxOrphan int
	}{
		{"REQ flood of new CommIDs", 1000, func(a *Analyzer) {
			cmFlood(a, madFrame(t, hostA, hostB, req), n, commID)
		}, 1000, n - 1000, map[Kind]int{KindConnectionTableFull: 1}, 1000, 0, 0},
		{"REQ flood under the cap", n, func(a *Analyzer) {
			cmFlood(a, madFrame(t, hostA, hostB, req), n, commID)
		}, n, 0, map[Kind]int{}, n, 0, 0},
		{"REQ retransmitted", 1000, func(a *Analyzer) {
			cmFlood(a, madFrame(t, hostA, hostB, req), n, nil)
		}, 1, 0, map[Kind]int{KindCMFlood: 1}, 1, 0, 0},
		{"REP flood with colliding CommIDs and QPNs", 1000, func(a *Analyzer) {
			cmFlood(a, madFrame(t, hostA, hostB, req), 1, nil)
			cmFlood(a, madFrame(t, hostB, hostA, rep), n, func(i int, b []byte) {
				binary.BigEndian.PutUint32(b[0:], uint32(i+2))  // LocalCommID
				binary.BigEndian.PutUint32(b[12:], uint32(i+3)) // LocalQPN (24 bits, reserved byte after)
			})
		}, 1, 0, map[Kind]int{KindCMFlood: 1}, 2, 2, 0},
		{"REPs without their REQ", 1000, func(a *Analyzer) {
			cmFlood(a, madFrame(t, hostB, hostA, rep), n, func(i int, b []byte) {
				binary.BigEndian.PutUint32(b[4:], uint32(i+1)) // RemoteCommID
			})
		}, 0, 0, map[Kind]int{KindCMFlood: 1}, 0, 0, min(conn.MaxOrphans, 1000)},
		{"orphans bounded by a small cap", 10, func(a *Analyzer) {
			cmFlood(a, madFrame(t, hostB, hostA, rep), 100, func(i int, b []byte) {
				binary.BigEndian.PutUint32(b[4:], uint32(i+1))
			})
		}, 0, 0, map[Kind]int{}, 0, 0, 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := New(Options{NoICRC: true, MaxConnections: tt.max})
			tt.feed(a)
			assert.Len(t, a.conns.List, tt.conns)
			assert.Len(t, a.conns.reqAt, tt.conns)
			assert.LessOrEqual(t, a.conns.CommIDs(), tt.maxComm)
			assert.LessOrEqual(t, len(a.conns.byFlow), tt.maxFlows)
			assert.Equal(t, tt.maxOrphan, len(a.conns.Orphans))
			r := a.Finish()
			assert.Len(t, r.Connections, tt.conns)
			assert.Equal(t, tt.dropped, r.Capture.ConnectionsDropped)
			got := kindsOf(r)
			for _, k := range []Kind{KindConnectionTableFull, KindCMFlood} {
				assert.Equal(t, tt.kinds[k], got[k], k)
			}
		})
	}
}

// TestCMFirstREPKept: the first REP of a connection sets its responder;
// a later one with another CommID and QPN changes nothing.
func TestCMFirstREPKept(t *testing.T) {
	a := New(Options{NoICRC: true})
	cmFlood(a, madFrame(t, hostA, hostB, &cm.ConnectRequest{LocalCommID: 1, LocalQPN: 0x100, TransportServiceType: cm.TransportRC}), 1, nil)
	cmFlood(a, madFrame(t, hostB, hostA, &cm.ConnectReply{LocalCommID: 2, RemoteCommID: 1, LocalQPN: 0x200, StartingPSN: 9}), 1, nil)
	cmFlood(a, madFrame(t, hostB, hostA, &cm.ConnectReply{LocalCommID: 3, RemoteCommID: 1, LocalQPN: 0x300, StartingPSN: 5}), 1, nil)
	r := a.Finish()
	require.Len(t, r.Connections, 1)
	c := r.Connections[0]
	assert.Equal(t, uint32(2), c.RemoteCommID)
	require.NotNil(t, c.Responder.QPN)
	assert.Equal(t, uint32(0x200), *c.Responder.QPN)
	assert.Equal(t, uint64(2), c.Frames.REP)
}

// TestConnectionBudgetShared: a Budget caps the connections of all the
// Analyzers of a run together, as it caps their flows.
func TestConnectionBudgetShared(t *testing.T) {
	budget := NewBudget(0, 1000)
	frame := madFrame(t, hostA, hostB, &cm.ConnectRequest{LocalCommID: 1, LocalQPN: 0x100, TransportServiceType: cm.TransportRC})
	var conns int
	var dropped uint64
	for file := range 2 {
		a := budget.New(Options{NoICRC: true})
		cmFlood(a, frame, 800, func(i int, b []byte) { binary.BigEndian.PutUint32(b[0:], uint32(file*1000+i+1)) })
		r := a.Finish()
		conns += len(r.Connections)
		dropped += r.Capture.ConnectionsDropped
	}
	assert.Equal(t, 1000, conns)
	assert.Equal(t, uint64(600), dropped)
	assert.True(t, budget.Refused())
}

var (
	hostA, hostB = net.IPv4(10, 0, 0, 1).To4(), net.IPv4(10, 0, 0, 2).To4()
	hostC, hostD = net.IPv4(10, 0, 0, 3).To4(), net.IPv4(10, 0, 0, 4).To4()
)

// hostPairREQs are n CM REQs, each of a host pair of its own (10.0.h.1
// → 10.0.h.2) and CommID h+1: a flow each.
func hostPairREQs(tb testing.TB, n int) [][]byte {
	frames := make([][]byte, n)
	for h := range frames {
		frames[h] = madFrame(tb, net.IPv4(10, 0, byte(h), 1).To4(), net.IPv4(10, 0, byte(h), 2).To4(),
			&cm.ConnectRequest{LocalCommID: uint32(h + 1), LocalQPN: 0x100, TransportServiceType: cm.TransportRC})
	}
	return frames
}

// feedOneAndSharded feeds frames (Ethernet, 1 µs apart) to one Analyzer
// and to a Sharded of n shards, both with opts, and returns their
// reports and the Sharded (finished).
func feedOneAndSharded(t *testing.T, frames [][]byte, opts Options, n int) (one, sharded *Report, s *Sharded) {
	t.Helper()
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a := New(opts)
	s = NewSharded(opts, n)
	for i, f := range frames {
		ci := gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(f), Length: len(f)}
		a.Feed(ci, gplayers.LinkTypeEthernet, f)
		s.Feed(ci, gplayers.LinkTypeEthernet, f)
	}
	sharded, err := s.Finish()
	require.NoError(t, err)
	return a.Finish(), sharded, s
}
