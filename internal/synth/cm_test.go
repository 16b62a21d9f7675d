package synth

import (
	"fmt"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCMMessages decodes the generated CM MADs with package cm and checks
// them against the truth's connections.
func TestCMMessages(t *testing.T) {
	for _, enc := range allEncaps {
		for _, sc := range []string{ScenarioWriteBW, ScenarioMix} {
			t.Run(sc+"/"+enc.String(), func(t *testing.T) {
				capture, tr, infos := generate(t, Config{Scenario: sc, Encap: enc, Messages: 3, Packets: 500, QPs: 5})
				lt, recs := readCapture(t, capture)
				byReq := map[uint32]*Connection{}
				for i := range tr.Connections {
					byReq[*tr.Connections[i].Requester.QPN] = &tr.Connections[i]
				}
				byComm := map[uint32]*Connection{} // requester's LocalCommID
				seen := map[string]int{}
				for i, rec := range recs {
					fi := infos[i]
					if fi.CM == "" {
						continue
					}
					msg := fmt.Sprintf("frame %d %s", i+1, fi.CM)
					p := gopacket.NewPacket(rec.data, lt, gopacket.Default)
					require.Nil(t, p.ErrorLayer(), msg)
					mad, ok := p.Layer(cm.LayerTypeMAD).(*cm.MAD)
					require.True(t, ok, msg)
					assert.Equal(t, cm.ClassCM, mad.Header.MgmtClass, msg)
					assert.Equal(t, cm.MethodSend, mad.Header.Method, msg)
					seen[fi.CM]++
					checkCMMessage(t, mad.Message, enc, byReq, byComm, msg)
				}
				n := len(tr.Connections)
				assert.Equal(t, map[string]int{"REQ": n, "REP": n, "RTU": n, "DREQ": n, "DREP": n}, seen)
				checkRequestsStartAtREP(t, tr, infos)
			})
		}
	}
}

// checkCMMessage checks a decoded CM message against the truth's
// connections, by the requester's QPN (byReq) or by the requester's
// LocalCommID (byComm, which a REQ fills).
func checkCMMessage(t *testing.T, message cm.Message, enc Encap, byReq, byComm map[uint32]*Connection, msg string) {
	t.Helper()
	switch m := message.(type) {
	case *cm.ConnectRequest:
		c := byReq[m.LocalQPN]
		require.NotNil(t, c, msg)
		byComm[m.LocalCommID] = c
		checkConnectRequest(t, m, c, enc, msg)
	case *cm.ConnectReply:
		c := byComm[m.RemoteCommID]
		require.NotNil(t, c, msg)
		assert.Equal(t, *c.Responder.QPN, m.LocalQPN, msg)
		assert.Equal(t, *c.Responder.StartingPSN, m.StartingPSN, msg)
	case *cm.ReadyToUse:
		assert.NotNil(t, byComm[m.LocalCommID], msg)
	case *cm.DisconnectRequest:
		c := byComm[m.LocalCommID]
		require.NotNil(t, c, msg)
		assert.Equal(t, *c.Responder.QPN, m.RemoteQPN, msg)
	case *cm.DisconnectReply:
		assert.NotNil(t, byComm[m.RemoteCommID], msg)
	default:
		t.Fatalf("%s: message %T", msg, message)
	}
}

// checkConnectRequest checks a REQ against its connection c: the
// requester's starting PSN, the path MTU, RC, the endpoints (LIDs on
// native IB, else GIDs) and, over RoCE v2, the IP addresses of its
// private data.
func checkConnectRequest(t *testing.T, m *cm.ConnectRequest, c *Connection, enc Encap, msg string) {
	t.Helper()
	assert.Equal(t, *c.Requester.StartingPSN, m.StartingPSN, msg)
	assert.Equal(t, *c.PathMTU, m.PathMTU.Bytes(), msg)
	assert.Equal(t, cm.TransportServiceType(0), m.TransportServiceType, msg)
	if enc.Native() {
		assert.Equal(t, c.Requester.IP, fmt.Sprintf("LID %d", m.PrimaryLocalLID), msg)
		assert.Equal(t, c.Responder.IP, fmt.Sprintf("LID %d", m.PrimaryRemoteLID), msg)
	} else {
		assert.Equal(t, c.Requester.IP, m.PrimaryLocalGID.String(), msg)
		assert.Equal(t, c.Responder.IP, m.PrimaryRemoteGID.String(), msg)
	}
	ip, ok := m.IPPrivateData()
	require.True(t, ok, msg)
	if enc.RoCEv2() {
		assert.Equal(t, c.Requester.IP, ip.SourceIP.String(), msg)
		assert.Equal(t, c.Responder.IP, ip.DestinationIP.String(), msg)
	}
}

// checkRequestsStartAtREP checks that, as real stacks do (Linux cm.c),
// the requester's requests start at the REP's StartingPSN: the first
// request to each responder QP carries it, and each side's send PSN is
// the other's starting PSN.
func checkRequestsStartAtREP(t *testing.T, tr *Truth, infos []FrameInfo) {
	t.Helper()
	repPSN := map[uint32]uint32{} // responder QPN → REP StartingPSN
	for _, c := range tr.Connections {
		require.NotNil(t, c.Responder.QPN)
		require.NotNil(t, c.Responder.StartingPSN)
		require.NotNil(t, c.Requester.StartingPSN)
		repPSN[*c.Responder.QPN] = *c.Responder.StartingPSN
		require.NotNil(t, c.Requester.SendPSN)
		assert.Equal(t, *c.Responder.StartingPSN, *c.Requester.SendPSN)
		require.NotNil(t, c.Responder.SendPSN)
		assert.Equal(t, *c.Requester.StartingPSN, *c.Responder.SendPSN)
	}
	firstReq := map[uint32]bool{}
	for _, fi := range infos {
		want, ok := repPSN[fi.DestQP]
		if fi.CM != "" || !fi.Opcode.IsRequest() || !ok || firstReq[fi.DestQP] {
			continue
		}
		firstReq[fi.DestQP] = true
		assert.Equal(t, want, fi.PSN, "first request to QP 0x%x", fi.DestQP)
	}
	assert.NotEmpty(t, firstReq)
}
