package analyze_test

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// The CM MADs of these tests are written byte by byte from IBTA 12.6 (the
// offsets are from the start of the MAD data, after its 24-byte header),
// not with package cm, and carried on QP1 in RoCE v2 frames.

var (
	cmActive  = net.IPv4(10, 0, 0, 1)
	cmPassive = net.IPv4(10, 0, 0, 2)
)

// cmMAD returns a 256-byte CM MAD: the common header (base version 1,
// class 0x07, class version 2, method Send) and the message data.
func cmMAD(attr uint16, data []byte) []byte {
	mad := make([]byte, 256)
	mad[0], mad[1], mad[2], mad[3] = 1, 0x07, 2, 0x03
	binary.BigEndian.PutUint64(mad[8:], 0x1234)
	binary.BigEndian.PutUint16(mad[16:], attr)
	copy(mad[24:], data)
	return mad
}

func mappedGID(ip net.IP) []byte { return ip.To16() }

// reqData is a REQ (attribute 0x0010): RC, path MTU 1024.
func reqData(localComm, qpn, psn uint32, src, dst net.IP) []byte {
	d := make([]byte, 232)
	binary.BigEndian.PutUint32(d[0:], localComm)
	binary.BigEndian.PutUint64(d[8:], 0x0000000000001234) // ServiceID
	binary.BigEndian.PutUint32(d[32:], qpn<<8)            // LocalQPN(24), ResponderResources(8)
	binary.BigEndian.PutUint32(d[44:], psn<<8)            // StartingPSN(24), timeouts
	d[50] = 3 << 4                                        // PathMTU 1024
	copy(d[56:72], mappedGID(src))
	copy(d[72:88], mappedGID(dst))
	return d
}

// repData is a REP (attribute 0x0013).
func repData(localComm, remoteComm, qpn, psn uint32) []byte {
	d := make([]byte, 232)
	binary.BigEndian.PutUint32(d[0:], localComm)
	binary.BigEndian.PutUint32(d[4:], remoteComm)
	binary.BigEndian.PutUint32(d[12:], qpn<<8)
	binary.BigEndian.PutUint32(d[20:], psn<<8)
	return d
}

// rejData is a REJ (attribute 0x0012): MessageRejected in the top two
// bits of byte 8, the reason at byte 10.
func rejData(localComm, remoteComm uint32, rejected uint8, reason uint16) []byte {
	d := make([]byte, 232)
	binary.BigEndian.PutUint32(d[0:], localComm)
	binary.BigEndian.PutUint32(d[4:], remoteComm)
	d[8] = rejected << 6
	binary.BigEndian.PutUint16(d[10:], reason)
	return d
}

// commData is an RTU (0x0014), DREQ (0x0015) or DREP (0x0016): the two
// communication IDs first.
func commData(localComm, remoteComm uint32) []byte {
	d := make([]byte, 232)
	binary.BigEndian.PutUint32(d[0:], localComm)
	binary.BigEndian.PutUint32(d[4:], remoteComm)
	return d
}

// madFrame carries a MAD from src to dst QP1 in a RoCE v2 UD SEND ONLY
// with a correct ICRC.
func madFrame(t *testing.T, src, dst net.IP, mad []byte) []byte {
	t.Helper()
	eth := &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: src, DstIP: dst}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: 4791}
	require.NoError(t, udp.SetNetworkLayerForChecksum(ip))
	bth := &layers.BTH{Opcode: layers.OpcodeUDSendOnly, PKey: 0xFFFF, DestQP: 1, PSN: 7}
	require.NoError(t, bth.SetNetworkLayerForChecksum(ip, udp))
	deth := &layers.DETH{QKey: layers.QKeyGSI, SrcQP: 1}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	require.NoError(t, gopacket.SerializeLayers(buf, opts, eth, ip, udp, bth, deth, gopacket.Payload(mad), &layers.ICRC{}))
	return buf.Bytes()
}

// TestCMReject: a REJ moves its connection to the rejected state, keeps
// the reason and its frame, and is an error finding; a REJ of no known
// connection changes nothing.
func TestCMReject(t *testing.T) {
	const (
		activeComm, passiveComm = 0x11111111, 0x22222222
		activeQPN, passiveQPN   = 0x000d1, 0x000d2
	)
	req := func() []byte {
		return madFrame(t, cmActive, cmPassive, cmMAD(0x0010, reqData(activeComm, activeQPN, 100, cmActive, cmPassive)))
	}
	rep := func() []byte {
		return madFrame(t, cmPassive, cmActive, cmMAD(0x0013, repData(passiveComm, activeComm, passiveQPN, 200)))
	}
	rej := func(from, to net.IP, local, remote uint32, rejected uint8, reason uint16) []byte {
		return madFrame(t, from, to, cmMAD(0x0012, rejData(local, remote, rejected, reason)))
	}
	drep := func() []byte {
		return madFrame(t, cmPassive, cmActive, cmMAD(0x0016, commData(passiveComm, activeComm)))
	}
	tests := []struct {
		name   string
		frames [][]byte
		// want: one connection in this state (none when state is ""),
		// with this reason and REJ frame; findings of kind cm_reject at
		// these frames.
		state       string
		reason      string
		rejFrame    uint64
		findingsAt  []uint64
		connections int
	}{
		{
			name:   "passive side rejects the REQ (consumer reject)",
			frames: [][]byte{req(), rej(cmPassive, cmActive, passiveComm, activeComm, 0, 28)},
			state:  analyze.StateRejected, reason: "consumer reject", rejFrame: 2, findingsAt: []uint64{2}, connections: 1,
		},
		{
			name:   "passive side rejects the REQ before choosing a CommID (invalid service ID)",
			frames: [][]byte{req(), rej(cmPassive, cmActive, 0, activeComm, 0, 8)},
			state:  analyze.StateRejected, reason: "invalid service ID", rejFrame: 2, findingsAt: []uint64{2}, connections: 1,
		},
		{
			name:   "active side rejects the REP (stale connection)",
			frames: [][]byte{req(), rep(), rej(cmActive, cmPassive, activeComm, passiveComm, 1, 10)},
			state:  analyze.StateRejected, reason: "stale connection", rejFrame: 3, findingsAt: []uint64{3}, connections: 1,
		},
		{
			name:   "a DREP after the REJ leaves it rejected",
			frames: [][]byte{req(), rej(cmPassive, cmActive, passiveComm, activeComm, 0, 28), drep()},
			state:  analyze.StateRejected, reason: "consumer reject", rejFrame: 2, findingsAt: []uint64{2}, connections: 1,
		},
		{
			name:   "without a REJ the REQ and REP establish",
			frames: [][]byte{req(), rep()},
			state:  analyze.StateEstablished, connections: 1,
		},
		{
			name:   "a REJ of an unknown connection",
			frames: [][]byte{rej(cmPassive, cmActive, 0x33333333, 0x44444444, 0, 28)},
		},
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := analyze.New(analyze.Options{})
			for i, f := range tc.frames {
				a.Feed(gopacket.CaptureInfo{Timestamp: start.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(f), Length: len(f)}, gplayers.LinkTypeEthernet, f)
			}
			r := a.Report()
			assert.Equal(t, uint64(len(tc.frames)), r.Capture.RoCEPackets)
			require.Len(t, r.Connections, tc.connections)
			if tc.connections > 0 {
				c := r.Connections[0]
				assert.Equal(t, tc.state, c.State)
				assert.Equal(t, tc.reason, c.RejectReason)
				assert.Equal(t, tc.rejFrame, c.Frames.REJ)
				assert.Equal(t, uint64(1), c.Frames.REQ)
				assert.Equal(t, uint32(activeComm), c.LocalCommID)
				require.NotNil(t, c.Requester.QPN)
				assert.Equal(t, uint32(activeQPN), *c.Requester.QPN)
				require.NotNil(t, c.Requester.StartingPSN)
				assert.Equal(t, uint32(100), *c.Requester.StartingPSN)
				require.NotNil(t, c.PathMTU)
				assert.Equal(t, 1024, *c.PathMTU)
			}
			var at []uint64
			for _, f := range r.Findings {
				if f.Kind == analyze.KindCMReject {
					at = append(at, f.Frame)
					assert.Equal(t, analyze.SeverityError, f.Severity)
					assert.Contains(t, f.Detail, tc.reason)
				}
			}
			assert.Equal(t, tc.findingsAt, at)
		})
	}
}

// TestMergeRenumbersFindingConnections: file A establishes a connection,
// file B's REQ is rejected. After Merge, B's connection is #2, and the
// cm_reject finding (text, JSON and typed field) names #2, the rejected
// one, not A's established #1; so does a psn_before_start finding's
// detail. Merged in the other order, the numbers swap with the
// connections.
func TestMergeRenumbersFindingConnections(t *testing.T) {
	const commA, commB, passive = 0x11111111, 0x33333333, 0x22222222
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	analyzeFrames := func(file string, frames ...[]byte) *analyze.Report {
		a := analyze.New(analyze.Options{File: file})
		for i, f := range frames {
			a.Feed(gopacket.CaptureInfo{Timestamp: start.Add(time.Duration(i) * time.Millisecond), CaptureLength: len(f), Length: len(f)}, gplayers.LinkTypeEthernet, f)
		}
		return a.Finish()
	}
	// A: REQ and REP establish; the requester's first WRITE is at PSN
	// 90, before the 100 the REP said (psn_before_start names #1 in A).
	repA := analyzeFrames("a.pcap",
		madFrame(t, cmActive, cmPassive, cmMAD(0x0010, reqData(commA, 0xd1, 100, cmActive, cmPassive))),
		madFrame(t, cmPassive, cmActive, cmMAD(0x0013, repData(passive, commA, 0xd2, 100))),
		rcWrite(t, cmActive, cmPassive, 0xd2, 90))
	repB := analyzeFrames("b.pcap",
		madFrame(t, cmActive, cmPassive, cmMAD(0x0010, reqData(commB, 0xe1, 500, cmActive, cmPassive))),
		madFrame(t, cmPassive, cmActive, cmMAD(0x0012, rejData(0, commB, 0, 28))))
	kindOf := func(r *analyze.Report, k analyze.Kind) analyze.Finding {
		for _, f := range r.Findings {
			if f.Kind == k {
				return f
			}
		}
		t.Fatalf("no %s finding", k)
		return analyze.Finding{}
	}
	require.Equal(t, 1, kindOf(repB, analyze.KindCMReject).Connection, "B alone: its connection is #1")
	require.Equal(t, 1, kindOf(repA, analyze.KindPSNBeforeStart).Connection)

	tests := []struct {
		name                      string
		first, second             *analyze.Report
		rejectedID, establishedID int
	}{
		{"A then B", repA, repB, 2, 1},
		{"B then A", repB, repA, 1, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			merged := &analyze.Report{}
			require.NoError(t, merged.Merge(tc.first))
			require.NoError(t, merged.Merge(tc.second))
			require.Len(t, merged.Connections, 2)
			rejected := merged.Connections[tc.rejectedID-1]
			assert.Equal(t, analyze.StateRejected, rejected.State)
			assert.Equal(t, uint32(commB), rejected.LocalCommID)
			assert.Equal(t, analyze.StateEstablished, merged.Connections[tc.establishedID-1].State)

			rej := kindOf(merged, analyze.KindCMReject)
			assert.Equal(t, tc.rejectedID, rej.Connection)
			assert.Equal(t, fmt.Sprintf("connection %d", tc.rejectedID), rej.FlowName())
			b, err := json.Marshal(rej)
			require.NoError(t, err)
			assert.Contains(t, string(b), fmt.Sprintf(`"flow":"connection %d","connection":%d,`, tc.rejectedID, tc.rejectedID))

			before := kindOf(merged, analyze.KindPSNBeforeStart)
			assert.Equal(t, tc.establishedID, before.Connection)
			assert.Equal(t, "10.0.0.1 → 10.0.0.2 QP 0x0000d2", before.FlowName(), "a flow's finding keeps its flow as its name")
			assert.Equal(t, fmt.Sprintf("first request PSN 90 is before PSN 100, where connection %d said this side's requests start", tc.establishedID), before.Detail)
		})
	}
	// The reports merged are unchanged (Merge may be called again).
	assert.Equal(t, 1, kindOf(repB, analyze.KindCMReject).Connection)
	assert.Equal(t, 1, kindOf(repA, analyze.KindPSNBeforeStart).Connection)
}

// rcWrite is an RC RDMA WRITE ONLY of 64 bytes to QP qp at PSN psn.
func rcWrite(t *testing.T, src, dst net.IP, qp, psn uint32) []byte {
	return roceFrame(t, src, dst, &layers.BTH{Opcode: layers.OpcodeRCRDMAWriteOnly, PKey: 0xFFFF, DestQP: qp, PSN: psn},
		&layers.RETH{VA: 0x1000, RKey: 1, DMALength: 64}, gopacket.Payload(make([]byte, 64)))
}
