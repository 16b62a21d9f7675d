package cm

import (
	"bytes"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/testenv"
)

// reqWant pins the fields of a REQ seen in a real capture (the values
// tshark prints, see TestCaptureREQMatchesTshark).
type reqWant struct {
	frame            int
	localCommID      uint32
	serviceID        ServiceID
	localCAGUID      GUID
	localQPN         uint32
	startingPSN      uint32
	pathMTU          PathMTU
	primaryLocalLID  LID
	primaryRemoteLID LID
	primaryLocalGID  string
	primaryRemoteGID string
}

var captureREQs = map[string][]reqWant{
	"softroce/rdma_cm.pcap": {
		{1, 0x64c0c56d, 0x0000000001064853, 0x025056fffea77d03, 0x00003d, 0x7cc204, MTU1024, 0xFFFF, 0xFFFF, "10.1.16.62", "10.1.16.61"},
		{24, 0x65c0c56d, 0x0000000001064853, 0x025056fffea77d03, 0x00003e, 0xaf834f, MTU1024, 0xFFFF, 0xFFFF, "10.1.16.62", "10.1.16.61"},
	},
	"softroce/rping.pcap": {
		{1, 0x6ec0c56d, 0x0000000001061c06, 0x025056fffea77d03, 0x00002c, 0x003da6, MTU1024, 0xFFFF, 0xFFFF, "10.1.16.62", "10.1.16.61"},
	},
	"ib-erf/infiniband.pcap": {
		{7, 0xe9488627, 0x1000000000000404, 0x0002c9020024f634, 0x870408, 0x000000, MTU2048, 4, 1, "fe80::2:c902:24:f636", "fe80::2:c902:20:b4dd"},
		{27, 0x3fd19ebf, 0x1000000000000405, 0x0002c90300001894, 0x6c004a, 0x000000, MTU2048, 2, 4, "fe80::2:c903:0:1895", "fe80::2:c902:24:f636"},
		{34, 0xeb488627, 0x1000000000000048, 0x0002c9020024f634, 0x890408, 0x000000, MTU2048, 4, 2, "fe80::2:c902:24:f636", "fe80::2:c903:0:1895"},
	},
}

// decodeCaptureMAD decodes a MAD of a capture and requires a clean decode.
func decodeCaptureMAD(t *testing.T, name string, c capturedMAD) *MAD {
	t.Helper()
	m := &MAD{}
	require.NoError(t, m.Decode(c.mad), "%s frame %d", name, c.frame)
	return m
}

// TestCaptureCMMessages decodes every CM MAD of the Soft-RoCE captures and
// of the native IB capture, pins the REQ fields, checks the other
// handshake messages' IDs and QPNs, and re-encodes each message to the
// exact captured bytes.
func TestCaptureCMMessages(t *testing.T) {
	type msgWant struct {
		attr                      AttributeID
		localCommID, remoteCommID uint32
		qpn, psn                  uint32 // REP QPN/PSN, DREQ RemoteQPN
	}
	others := map[string]map[int]msgWant{
		"softroce/rdma_cm.pcap": {
			2:  {AttrConnectReply, 0x8988f456, 0x64c0c56d, 0x00003b, 0x727d6d},
			3:  {AttrReadyToUse, 0x64c0c56d, 0x8988f456, 0, 0},
			25: {AttrConnectReply, 0x8b88f456, 0x65c0c56d, 0x00003c, 0x7d2388},
			30: {AttrReadyToUse, 0x65c0c56d, 0x8b88f456, 0, 0},
			91: {AttrDisconnectRequest, 0x65c0c56d, 0x8b88f456, 0x00003c, 0},
			92: {AttrDisconnectRequest, 0x8b88f456, 0x65c0c56d, 0x00003e, 0},
			93: {AttrDisconnectReply, 0x8b88f456, 0x65c0c56d, 0, 0},
			94: {AttrDisconnectReply, 0x65c0c56d, 0x8b88f456, 0, 0},
			95: {AttrDisconnectRequest, 0x8988f456, 0x64c0c56d, 0x00003d, 0},
			96: {AttrDisconnectReply, 0x64c0c56d, 0x8988f456, 0, 0},
		},
		"softroce/rping.pcap": {
			2:  {AttrConnectReply, 0x9d88f456, 0x6ec0c56d, 0x00002b, 0xfebd3d},
			3:  {AttrReadyToUse, 0x6ec0c56d, 0x9d88f456, 0, 0},
			64: {AttrDisconnectRequest, 0x6ec0c56d, 0x9d88f456, 0x00002b, 0},
			65: {AttrDisconnectReply, 0x9d88f456, 0x6ec0c56d, 0, 0},
		},
		"ib-erf/infiniband.pcap": {
			8:  {AttrConnectReply, 0xf9024539, 0xe9488627, 0xfc0407, 0xd40a55},
			9:  {AttrReadyToUse, 0xe9488627, 0xf9024539, 0, 0},
			28: {AttrConnectReply, 0xea488627, 0x3fd19ebf, 0x890407, 0xbd15cb},
			29: {AttrReadyToUse, 0x3fd19ebf, 0xea488627, 0, 0},
			35: {AttrConnectReply, 0x3ed19ebf, 0xeb488627, 0x6c004b, 0x732328},
			37: {AttrReadyToUse, 0xeb488627, 0x3ed19ebf, 0, 0},
		},
	}
	for name, reqs := range captureREQs {
		t.Run(name, func(t *testing.T) {
			mads := capturedMADs(t, name)
			seenREQ, seenOther := 0, 0
			for _, c := range mads {
				m := decodeCaptureMAD(t, name, c)
				if m.Header.MgmtClass != ClassCM {
					continue
				}
				require.NotNil(t, m.CM(), "frame %d: %s", c.frame, m.Header.String())
				assert.Equal(t, uint8(1), m.Header.BaseVersion)
				assert.Equal(t, uint8(2), m.Header.ClassVersion)
				assert.Equal(t, MethodSend, m.Header.Method)

				// decode → encode gives the captured bytes.
				enc, err := m.Message.MarshalBinary()
				require.NoError(t, err)
				assert.Equal(t, c.mad[HeaderLen:], enc, "frame %d re-encoded", c.frame)
				whole, err := m.AppendBinary(nil)
				require.NoError(t, err)
				assert.Equal(t, c.mad, whole, "frame %d MAD re-encoded", c.frame)

				switch msg := m.Message.(type) {
				case *ConnectRequest:
					var want *reqWant
					for i := range reqs {
						if reqs[i].frame == c.frame {
							want = &reqs[i]
						}
					}
					require.NotNil(t, want, "unexpected REQ in frame %d", c.frame)
					seenREQ++
					assert.Equal(t, want.localCommID, msg.LocalCommID)
					assert.Equal(t, want.serviceID, msg.ServiceID)
					assert.Equal(t, want.localCAGUID, msg.LocalCAGUID)
					assert.Equal(t, want.localQPN, msg.LocalQPN)
					assert.Equal(t, want.startingPSN, msg.StartingPSN)
					assert.Equal(t, want.pathMTU, msg.PathMTU)
					assert.Equal(t, want.primaryLocalLID, msg.PrimaryLocalLID)
					assert.Equal(t, want.primaryRemoteLID, msg.PrimaryRemoteLID)
					assert.Equal(t, want.primaryLocalGID, msg.PrimaryLocalGID.String())
					assert.Equal(t, want.primaryRemoteGID, msg.PrimaryRemoteGID.String())
					assert.Equal(t, TransportRC, msg.TransportServiceType)
					assert.False(t, msg.HasAlternatePath())
				default:
					want, ok := others[name][c.frame]
					require.True(t, ok, "unexpected %s in frame %d", m.Header.AttributeName(), c.frame)
					seenOther++
					assert.Equal(t, want.attr, msg.AttributeID(), "frame %d", c.frame)
					switch msg := msg.(type) {
					case *ConnectReply:
						assert.Equal(t, [4]uint32{want.localCommID, want.remoteCommID, want.qpn, want.psn},
							[4]uint32{msg.LocalCommID, msg.RemoteCommID, msg.LocalQPN, msg.StartingPSN}, "frame %d", c.frame)
					case *ReadyToUse:
						assert.Equal(t, [2]uint32{want.localCommID, want.remoteCommID}, [2]uint32{msg.LocalCommID, msg.RemoteCommID})
					case *DisconnectRequest:
						assert.Equal(t, [3]uint32{want.localCommID, want.remoteCommID, want.qpn},
							[3]uint32{msg.LocalCommID, msg.RemoteCommID, msg.RemoteQPN}, "frame %d", c.frame)
					case *DisconnectReply:
						assert.Equal(t, [2]uint32{want.localCommID, want.remoteCommID}, [2]uint32{msg.LocalCommID, msg.RemoteCommID})
					default:
						t.Errorf("frame %d: unexpected %T", c.frame, msg)
					}
				}
			}
			assert.Equal(t, len(reqs), seenREQ, "REQs")
			assert.Equal(t, len(others[name]), seenOther, "REP/RTU/DREQ/DREP")
		})
	}
}

// TestCaptureRoCEREQ checks what RoCE-specific meaning the Soft-RoCE REQ
// carries: placeholder LIDs, IPv4-mapped GIDs, the RDMA CM service ID and
// private data.
func TestCaptureRoCEREQ(t *testing.T) {
	mads := capturedMADs(t, "softroce/rdma_cm.pcap")
	m := decodeCaptureMAD(t, "rdma_cm.pcap", mads[0])
	req, ok := m.CM().(*ConnectRequest)
	require.True(t, ok)

	assert.True(t, req.PrimaryLocalLID.IsPlaceholder())
	assert.True(t, req.PrimaryRemoteLID.IsPlaceholder())
	assert.True(t, req.PrimaryLocalGID.IsIPv4Mapped())
	assert.Equal(t, "10.1.16.62", req.PrimaryLocalGID.IP().String())
	assert.Equal(t, 1024, req.PathMTU.Bytes())
	assert.Equal(t, uint32(0x91a3c), req.PrimaryFlowLabel) // tshark 4.0 misreads this field (0x91a)
	assert.Equal(t, uint8(0x40), req.PrimaryHopLimit)
	assert.Equal(t, uint8(0x11), req.PrimaryLocalACKTimeout)
	assert.Equal(t, uint8(0x14), req.RemoteCMResponseTimeout)
	assert.Equal(t, uint8(7), req.RetryCount)
	assert.Equal(t, uint8(7), req.RNRRetryCount)
	assert.Equal(t, uint8(15), req.MaxCMRetries)
	assert.Equal(t, uint16(0xFFFF), req.PKey)

	require.True(t, req.ServiceID.IsRDMACM())
	assert.Equal(t, PortSpaceTCP, req.ServiceID.PortSpace())
	assert.Equal(t, uint16(0x4853), req.ServiceID.Port())
	ip, ok := req.IPPrivateData()
	require.True(t, ok)
	assert.Equal(t, uint8(4), ip.IPVersion)
	assert.Equal(t, uint16(0xccf7), ip.SourcePort)
	assert.Equal(t, netip.MustParseAddr("10.1.16.62"), ip.SourceIP)
	assert.Equal(t, netip.MustParseAddr("10.1.16.61"), ip.DestinationIP)
	assert.Len(t, ip.ConsumerData, ReqPrivateDataLen-IPPrivateDataLen)
	// The RDMA CM addresses are the ones the GIDs are made of.
	assert.Equal(t, req.PrimaryLocalGID.Addr(), ip.SourceIP)
	assert.Equal(t, req.PrimaryRemoteGID.Addr(), ip.DestinationIP)
}

// TestCaptureInfiniBandHeaders checks the class, method and attribute of
// every MAD of the native IB capture: SMPs (directed route, raw data), the
// SA PathRecord query and its answer (RMPP and SA headers decoded), and
// the CM handshakes.
func TestCaptureInfiniBandHeaders(t *testing.T) {
	type hdr struct {
		class  ManagementClass
		method Method
		attr   string
		status Status
	}
	want := map[int]hdr{
		1: {ClassSubnMgmtDirectedRoute, MethodGet, "SMInfo", 0}, 2: {ClassSubnMgmtDirectedRoute, MethodGetResp, "SMInfo", 0x8000},
		7: {ClassCM, MethodSend, "REQ", 0}, 8: {ClassCM, MethodSend, "REP", 0}, 9: {ClassCM, MethodSend, "RTU", 0},
		12: {ClassSubnMgmtDirectedRoute, MethodGet, "SMInfo", 0}, 13: {ClassSubnMgmtDirectedRoute, MethodGetResp, "SMInfo", 0x8000},
		27: {ClassCM, MethodSend, "REQ", 0}, 28: {ClassCM, MethodSend, "REP", 0}, 29: {ClassCM, MethodSend, "RTU", 0},
		32: {ClassSubnAdm, MethodGet, "PathRecord", 0}, 33: {ClassSubnAdm, MethodGetResp, "PathRecord", 0},
		34: {ClassCM, MethodSend, "REQ", 0}, 35: {ClassCM, MethodSend, "REP", 0}, 37: {ClassCM, MethodSend, "RTU", 0},
		41: {ClassSubnMgmtDirectedRoute, MethodGet, "SMInfo", 0}, 42: {ClassSubnMgmtDirectedRoute, MethodGetResp, "SMInfo", 0x8000},
	}
	mads := capturedMADs(t, "ib-erf/infiniband.pcap")
	require.Len(t, mads, len(want))
	for _, c := range mads {
		m := decodeCaptureMAD(t, "infiniband.pcap", c)
		w, ok := want[c.frame]
		require.True(t, ok, "frame %d", c.frame)
		assert.Equal(t, w.class, m.Header.MgmtClass, "frame %d", c.frame)
		assert.Equal(t, w.method, m.Header.Method, "frame %d", c.frame)
		assert.Equal(t, w.attr, m.Header.AttributeName(), "frame %d", c.frame)
		assert.Equal(t, w.status, m.Header.Status, "frame %d", c.frame)
		assert.Len(t, m.Data, DataLen)
		switch m.Header.MgmtClass {
		case ClassSubnMgmtDirectedRoute:
			assert.Nil(t, m.CM())
			assert.Equal(t, w.status != 0, m.Header.Direction(), "frame %d D bit", c.frame)
			assert.Equal(t, "SubnMgmtDR", m.Header.MgmtClass.String())
		case ClassSubnAdm:
			assert.Nil(t, m.CM())
			assert.Equal(t, uint64(0x340c), m.SubnAdm.ComponentMask, "frame %d", c.frame)
			assert.Equal(t, RMPPTypeNone, m.SubnAdm.RMPP.Type)
			assert.Len(t, m.SubnAdm.Data, SADataLen)
			assert.Equal(t, "SubnAdm", m.Header.MgmtClass.String())
		case ClassCM:
			assert.NotNil(t, m.CM())
		}
		// Every MAD, whatever its class, re-encodes byte for byte.
		enc, err := m.AppendBinary(nil)
		require.NoError(t, err)
		assert.Equal(t, c.mad, enc, "frame %d", c.frame)
	}
}

// TestCaptureREQMatchesTshark compares the REQ fields with what tshark
// prints for infiniband.cm.req.*. Wireshark 4.0 misplaces the flow label
// and packet rate of the REQ (it reads them from byte 88 as 24 bits), so
// those are not compared; every field the issue names is, and more.
func TestCaptureREQMatchesTshark(t *testing.T) {
	fields := []string{
		"infiniband.cm.req.localqpn",
		"infiniband.cm.req.startpsn",
		"infiniband.cm.req.pppmtu",
		"infiniband.cm.req.serviceid",
		"infiniband.cm.req.prim_locallid",
		"infiniband.cm.req.prim_remotelid",
		"infiniband.cm.req.prim_localgid",
		"infiniband.cm.req.prim_remotegid",
		"infiniband.cm.req.prim_localgid_ipv4",
		"infiniband.cm.req.prim_remotegid_ipv4",
		"infiniband.cm.req", // LocalCommID
		"infiniband.cm.req.localcaguid",
		"infiniband.cm.req.localqkey",
		"infiniband.cm.req.transpsvctype",
		"infiniband.cm.req.retrcount",
		"infiniband.cm.req.rnrretrcount",
		"infiniband.cm.req.maxcmretr",
		"infiniband.cm.req.prim_hoplim",
		"infiniband.cm.req.prim_localacktout",
		"infiniband.cm.req.remoteresptout",
		"infiniband.cm.req.localresptout",
		"infiniband.cm.req.pkey",
	}
	for name := range captureREQs {
		t.Run(name, func(t *testing.T) {
			rows := tsharkFields(t, capturePath(t, name), "infiniband.cm.req", fields...)
			seen := 0
			for _, c := range capturedMADs(t, name) {
				req, ok := decodeCaptureMAD(t, name, c).CM().(*ConnectRequest)
				if !ok {
					continue
				}
				seen++
				v, ok := rows[c.frame]
				require.True(t, ok, "we see a REQ in frame %d, tshark does not", c.frame)
				gid := func(v6, v4 string) netip.Addr {
					t.Helper()
					s := v6
					if v4 != "" {
						s = v4
					}
					a, err := netip.ParseAddr(s)
					require.NoError(t, err, "frame %d", c.frame)
					return a
				}
				f := c.frame
				assert.Equal(t, parseNum(t, v[0]), uint64(req.LocalQPN), "frame %d LocalQPN", f)
				assert.Equal(t, parseNum(t, v[1]), uint64(req.StartingPSN), "frame %d StartingPSN", f)
				assert.Equal(t, parseNum(t, v[2]), uint64(req.PathMTU), "frame %d PathMTU", f)
				assert.Equal(t, parseNum(t, v[3]), uint64(req.ServiceID), "frame %d ServiceID", f)
				assert.Equal(t, parseNum(t, v[4]), uint64(req.PrimaryLocalLID), "frame %d PrimaryLocalLID", f)
				assert.Equal(t, parseNum(t, v[5]), uint64(req.PrimaryRemoteLID), "frame %d PrimaryRemoteLID", f)
				assert.Equal(t, gid(v[6], v[8]), req.PrimaryLocalGID.Addr(), "frame %d PrimaryLocalGID", f)
				assert.Equal(t, gid(v[7], v[9]), req.PrimaryRemoteGID.Addr(), "frame %d PrimaryRemoteGID", f)
				if v[8] != "" { // tshark shows an IPv4-mapped GID as IPv4, as we do
					assert.Equal(t, v[8], req.PrimaryLocalGID.String())
					assert.Equal(t, v[9], req.PrimaryRemoteGID.String())
				}
				rest := []uint64{uint64(req.LocalCommID), uint64(req.LocalCAGUID), uint64(req.LocalQKey),
					uint64(req.TransportServiceType), uint64(req.RetryCount), uint64(req.RNRRetryCount),
					uint64(req.MaxCMRetries), uint64(req.PrimaryHopLimit), uint64(req.PrimaryLocalACKTimeout),
					uint64(req.RemoteCMResponseTimeout), uint64(req.LocalCMResponseTimeout), uint64(req.PKey)}
				for i, want := range rest {
					assert.Equal(t, parseNum(t, v[10+i]), want, "frame %d %s", f, fields[10+i])
				}
			}
			assert.Equal(t, len(rows), seen, "tshark and we see the same REQs")
		})
	}
}

// tsharkFields runs tshark on a capture with a display filter and returns
// the requested fields of each matching frame, keyed by frame number.
func tsharkFields(t *testing.T, path, filter string, fields ...string) map[int][]string {
	t.Helper()
	tshark := testenv.Tshark(t)
	args := []string{"-r", path, "-Y", filter, "-T", "fields", "-E", "separator=|", "-e", "frame.number"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(tshark, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "tshark: %s", stderr.String())
	rows := map[int][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if line == "" {
			continue
		}
		v := strings.Split(line, "|")
		require.Len(t, v, len(fields)+1, line)
		frame, err := strconv.Atoi(v[0])
		require.NoError(t, err)
		rows[frame] = v[1:]
	}
	return rows
}

func parseNum(t *testing.T, s string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(s, 0, 64)
	require.NoError(t, err, "%q", s)
	return n
}

// TestCaptureMADHeadersMatchTshark compares the common header of every MAD
// (all classes) and the REP fields with tshark's infiniband.mad.* and
// infiniband.cm.rep.* fields.
func TestCaptureMADHeadersMatchTshark(t *testing.T) {
	for name := range captureREQs {
		t.Run(name, func(t *testing.T) {
			path := capturePath(t, name)
			rows := tsharkFields(t, path, "infiniband.mad",
				"infiniband.mad.baseversion", "infiniband.mad.mgmtclass", "infiniband.mad.classversion",
				"infiniband.mad.method", "infiniband.mad.status", "infiniband.mad.classspecific",
				"infiniband.mad.transactionid", "infiniband.mad.attributeid", "infiniband.mad.attributemodifier")
			reps := tsharkFields(t, path, "infiniband.cm.rep",
				"infiniband.cm.rep", "infiniband.cm.rep.remotecommid", "infiniband.cm.rep.localqkey",
				"infiniband.cm.rep.localqpn", "infiniband.cm.rep.startpsn", "infiniband.cm.rep.respres",
				"infiniband.cm.rep.initdepth", "infiniband.cm.rep.tgtackdelay", "infiniband.cm.rep.failoveracc",
				"infiniband.cm.rep.rnrretrcount", "infiniband.cm.rep.srq", "infiniband.cm.rep.localcaguid")
			mads := capturedMADs(t, name)
			require.Len(t, mads, len(rows), "tshark and we see the same MADs")
			seenREP := 0
			for _, c := range mads {
				v, ok := rows[c.frame]
				require.True(t, ok, "tshark sees no MAD in frame %d", c.frame)
				m := decodeCaptureMAD(t, name, c)
				h := m.Header
				got := []uint64{uint64(h.BaseVersion), uint64(h.MgmtClass), uint64(h.ClassVersion), uint64(h.Method),
					uint64(h.Status), uint64(h.ClassSpecific), h.TransactionID, uint64(h.AttributeID), uint64(h.AttributeModifier)}
				for i, s := range v {
					assert.Equal(t, parseNum(t, s), got[i], "frame %d header field %d", c.frame, i)
				}
				rep, ok := m.CM().(*ConnectReply)
				if !ok {
					continue
				}
				seenREP++
				r, ok := reps[c.frame]
				require.True(t, ok, "frame %d", c.frame)
				gotREP := []uint64{uint64(rep.LocalCommID), uint64(rep.RemoteCommID), uint64(rep.LocalQKey),
					uint64(rep.LocalQPN), uint64(rep.StartingPSN), uint64(rep.ResponderResources),
					uint64(rep.InitiatorDepth), uint64(rep.TargetACKDelay), uint64(rep.FailoverAccepted),
					uint64(rep.RNRRetryCount), b2n(rep.SRQ), uint64(rep.LocalCAGUID)}
				for i, s := range r {
					assert.Equal(t, parseNum(t, s), gotREP[i], "frame %d REP field %d", c.frame, i)
				}
			}
			assert.Equal(t, len(reps), seenREP)
		})
	}
}

func b2n(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
