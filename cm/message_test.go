package cm

import (
	"bytes"
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// golden builds the 232 data bytes of a message from (offset, bytes)
// pairs written straight from the layouts in PROTOCOL.md and IBTA.
type golden [DataLen]byte

func (g *golden) at(off int, b ...byte) { copy(g[off:], b) }

func (g *golden) bytes() []byte { return bytes.Clone(g[:]) }

// filled returns n bytes counting up from start: recognisable private data.
func filled(n int, start byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

// gid parses an address into a GID (IPv4 becomes IPv4-mapped).
func gid(s string) GID { return GIDFromAddr(netip.MustParseAddr(s)) }

// gidBytes is the wire form of gid(s).
func gidBytes(s string) []byte {
	g := gid(s)
	return g[:]
}

type goldenCase struct {
	name string
	msg  Message // the struct, private data at full length
	wire []byte  // its 232 bytes
}

// goldenMessages returns one golden case per CM message. The field values
// differ from each other and set the top and bottom bits of every bit
// field, so a field at the wrong offset or shift shows.
func goldenMessages() []goldenCase {
	var cases []goldenCase

	// REQ (IBTA Table 106).
	reqPriv := make([]byte, ReqPrivateDataLen)
	copy(reqPriv, []byte{0x00, 0x40, 0xcc, 0xf7})
	copy(reqPriv[16:], []byte{10, 1, 16, 62})
	copy(reqPriv[32:], []byte{10, 1, 16, 61})
	copy(reqPriv[36:], "hello")
	var g golden
	g.at(0, 0x11, 0x22, 0x33, 0x44)                          // LocalCommID
	g.at(5, 0x0a, 0x0b, 0x0c)                                // VendorID
	g.at(8, 0x00, 0x00, 0x00, 0x00, 0x01, 0x06, 0x48, 0x53)  // ServiceID
	g.at(16, 0x02, 0x50, 0x56, 0xff, 0xfe, 0xa7, 0x7d, 0x03) // LocalCAGUID
	g.at(28, 0xde, 0xad, 0xbe, 0xef)                         // LocalQKey
	g.at(32, 0x00, 0x00, 0x3d, 0x10)                         // LocalQPN, ResponderResources
	g.at(36, 0x12, 0x34, 0x56, 0x08)                         // LocalEECN, InitiatorDepth
	g.at(40, 0xab, 0xcd, 0xef, 0xa3)                         // RemoteEECN; timeout 0x14, UC, E2E
	g.at(44, 0x7c, 0xc2, 0x04, 0x9f)                         // StartingPSN; timeout 0x13, retry 7
	g.at(48, 0xff, 0xff, 0x3e, 0xf9)                         // PKey; MTU 3, RDC, RNR 6; MaxCM 15, SRQ, ext 1
	g.at(52, 0x12, 0x34, 0x56, 0x78)                         // primary LIDs
	g.at(56, gidBytes("10.1.16.62")...)
	g.at(72, gidBytes("10.1.16.61")...)
	g.at(88, 0x91, 0xa3, 0xc0, 0x2a) // flow label 0x91a3c, rate 0x2a
	g.at(92, 0x60, 0x40, 0xb8, 0x88) // TC, hop, SL 11 + subnet local, ACK timeout 0x11
	g.at(96, 0x01, 0x01, 0x02, 0x02) // alternate LIDs
	g.at(100, gidBytes("fe80::1")...)
	g.at(116, gidBytes("fe80::2")...)
	g.at(132, 0xff, 0xff, 0xf0, 0x3f) // flow label 0xfffff, rate 0x3f
	g.at(136, 0x01, 0x02, 0x30, 0xfc) // TC, hop, SL 3, ACK timeout 0x1f + SAP
	g.at(140, reqPriv...)
	cases = append(cases, goldenCase{"REQ", &ConnectRequest{
		LocalCommID: 0x11223344, VendorID: 0x0a0b0c, ServiceID: 0x0000000001064853,
		LocalCAGUID: 0x025056fffea77d03, LocalQKey: 0xdeadbeef, LocalQPN: 0x3d, ResponderResources: 0x10,
		LocalEECN: 0x123456, InitiatorDepth: 8, RemoteEECN: 0xabcdef, RemoteCMResponseTimeout: 0x14,
		TransportServiceType: TransportUC, EndToEndFlowControl: true, StartingPSN: 0x7cc204,
		LocalCMResponseTimeout: 0x13, RetryCount: 7, PKey: 0xffff, PathMTU: MTU1024, RDCExists: true,
		RNRRetryCount: 6, MaxCMRetries: 15, SRQ: true, ExtendedTransportType: 1,
		PrimaryLocalLID: 0x1234, PrimaryRemoteLID: 0x5678,
		PrimaryLocalGID: gid("10.1.16.62"), PrimaryRemoteGID: gid("10.1.16.61"),
		PrimaryFlowLabel: 0x91a3c, PrimaryPacketRate: 0x2a, PrimaryTrafficClass: 0x60, PrimaryHopLimit: 0x40,
		PrimarySL: 11, PrimarySubnetLocal: true, PrimaryLocalACKTimeout: 0x11,
		AlternateLocalLID: 0x0101, AlternateRemoteLID: 0x0202,
		AlternateLocalGID: gid("fe80::1"), AlternateRemoteGID: gid("fe80::2"),
		AlternateFlowLabel: 0xfffff, AlternatePacketRate: 0x3f, AlternateTrafficClass: 1, AlternateHopLimit: 2,
		AlternateSL: 3, AlternateLocalACKTimeout: 0x1f, SAPSupported: true,
		PrivateData: reqPriv,
	}, g.bytes()})

	// MRA (Table 107).
	g = golden{}
	g.at(0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08)
	g.at(8, 0x80, 0xf8) // MessageMRAed LAP(2), ServiceTimeout 0x1f
	g.at(10, filled(MraPrivateDataLen, 0x40)...)
	cases = append(cases, goldenCase{"MRA", &MessageReceiptAck{
		LocalCommID: 0x01020304, RemoteCommID: 0x05060708, MessageMRAed: MRAedLAP, ServiceTimeout: 0x1f,
		PrivateData: filled(MraPrivateDataLen, 0x40),
	}, g.bytes()})

	// REJ (Table 108).
	g = golden{}
	g.at(0, 0xa1, 0xa2, 0xa3, 0xa4, 0xb1, 0xb2, 0xb3, 0xb4)
	g.at(8, 0x40, 0x10)  // MessageRejected REP(1); RejectInfoLength 8
	g.at(10, 0x00, 0x1c) // reason 28, consumer reject
	g.at(12, filled(ARILen, 0x80)...)
	g.at(84, filled(RejPrivateDataLen, 0x01)...)
	cases = append(cases, goldenCase{"REJ", &ConnectReject{
		LocalCommID: 0xa1a2a3a4, RemoteCommID: 0xb1b2b3b4, MessageRejected: RejectedREP, RejectInfoLength: 8,
		Reason: RejectConsumer, ARI: filled(ARILen, 0x80), PrivateData: filled(RejPrivateDataLen, 0x01),
	}, g.bytes()})

	// REP (Table 110).
	g = golden{}
	g.at(0, 0x89, 0x88, 0xf4, 0x56, 0x64, 0xc0, 0xc5, 0x6d)
	g.at(8, 0x80, 0x01, 0x00, 0x00)  // LocalQKey
	g.at(12, 0x00, 0x00, 0x3b, 0xaa) // LocalQPN, VendorID high
	g.at(16, 0xfe, 0xdc, 0xba, 0xbb) // LocalEECN, VendorID middle
	g.at(20, 0x72, 0x7d, 0x6d, 0xcc) // StartingPSN, VendorID low
	g.at(24, 0x04, 0x05, 0x7d, 0xf0) // resources, depth; ACK delay 0x0f, failover 2, E2E; RNR 7, SRQ
	g.at(28, 0x02, 0x50, 0x56, 0xff, 0xfe, 0xa7, 0x12, 0x9f)
	g.at(36, filled(RepPrivateDataLen, 0x10)...)
	cases = append(cases, goldenCase{"REP", &ConnectReply{
		LocalCommID: 0x8988f456, RemoteCommID: 0x64c0c56d, LocalQKey: 0x80010000, LocalQPN: 0x3b,
		LocalEECN: 0xfedcba, StartingPSN: 0x727d6d, VendorID: 0xaabbcc, ResponderResources: 4, InitiatorDepth: 5,
		TargetACKDelay: 0x0f, FailoverAccepted: FailoverRejectedAltPath, EndToEndFlowControl: true,
		RNRRetryCount: 7, SRQ: true, LocalCAGUID: 0x025056fffea7129f,
		PrivateData: filled(RepPrivateDataLen, 0x10),
	}, g.bytes()})

	// RTU (Table 111).
	g = golden{}
	g.at(0, 0x64, 0xc0, 0xc5, 0x6d, 0x89, 0x88, 0xf4, 0x56)
	g.at(8, filled(RtuPrivateDataLen, 0x20)...)
	cases = append(cases, goldenCase{"RTU", &ReadyToUse{
		LocalCommID: 0x64c0c56d, RemoteCommID: 0x8988f456, PrivateData: filled(RtuPrivateDataLen, 0x20),
	}, g.bytes()})

	// DREQ (Table 112).
	g = golden{}
	g.at(0, 0x65, 0xc0, 0xc5, 0x6d, 0x8b, 0x88, 0xf4, 0x56)
	g.at(8, 0xab, 0xcd, 0xef) // RemoteQPN
	g.at(12, filled(DreqPrivateDataLen, 0x30)...)
	cases = append(cases, goldenCase{"DREQ", &DisconnectRequest{
		LocalCommID: 0x65c0c56d, RemoteCommID: 0x8b88f456, RemoteQPN: 0xabcdef,
		PrivateData: filled(DreqPrivateDataLen, 0x30),
	}, g.bytes()})

	// DREP (Table 113).
	g = golden{}
	g.at(0, 0x8b, 0x88, 0xf4, 0x56, 0x65, 0xc0, 0xc5, 0x6d)
	g.at(8, filled(DrepPrivateDataLen, 0x50)...)
	cases = append(cases, goldenCase{"DREP", &DisconnectReply{
		LocalCommID: 0x8b88f456, RemoteCommID: 0x65c0c56d, PrivateData: filled(DrepPrivateDataLen, 0x50),
	}, g.bytes()})

	// SIDR_REQ (Table 119).
	g = golden{}
	g.at(0, 0x0d, 0x0e, 0x0a, 0x0d)
	g.at(4, 0x80, 0x01) // PKey
	g.at(8, 0x00, 0x00, 0x00, 0x00, 0x01, 0x11, 0x12, 0x34)
	g.at(16, filled(SIDRReqPrivateDataLen, 0x60)...)
	cases = append(cases, goldenCase{"SIDR_REQ", &SIDRRequest{
		RequestID: 0x0d0e0a0d, PKey: 0x8001, ServiceID: RDMACMServiceID(PortSpaceUDP, 0x1234),
		PrivateData: filled(SIDRReqPrivateDataLen, 0x60),
	}, g.bytes()})

	// SIDR_REP (Table 120).
	g = golden{}
	g.at(0, 0x0d, 0x0e, 0x0a, 0x0d)
	g.at(4, 0x04, 0x48, 0x11, 0x22) // status redirect, info length 72, VendorID high
	g.at(8, 0x00, 0x12, 0x34, 0x33) // QPN, VendorID low
	g.at(12, 0x00, 0x00, 0x00, 0x00, 0x01, 0x11, 0x12, 0x34)
	g.at(20, 0x11, 0x11, 0x11, 0x11) // QKey
	g.at(24, filled(ARILen, 0x90)...)
	g.at(96, filled(SIDRRepPrivateDataLen, 0x70)...)
	cases = append(cases, goldenCase{"SIDR_REP", &SIDRReply{
		RequestID: 0x0d0e0a0d, Status: SIDRRedirect, AdditionalInfoLength: 72, VendorID: 0x112233,
		QPN: 0x001234, ServiceID: 0x0000000001111234, QKey: 0x11111111,
		AdditionalInfo: filled(ARILen, 0x90), PrivateData: filled(SIDRRepPrivateDataLen, 0x70),
	}, g.bytes()})

	// LAP (Table 115).
	g = golden{}
	g.at(0, 0x01, 0x01, 0x01, 0x01, 0x02, 0x02, 0x02, 0x02)
	g.at(12, 0x00, 0x00, 0x3d, 0xa0) // RemoteQPN; RemoteCMResponseTimeout 0x14
	g.at(20, 0x00, 0x07, 0x00, 0x09) // alternate LIDs
	g.at(24, gidBytes("fe80::a")...)
	g.at(40, gidBytes("10.0.0.1")...)
	g.at(56, 0xab, 0xcd, 0xe0, 0x0b) // flow label 0xabcde, TC 0x0b
	g.at(60, 0x3f, 0x2a, 0x98, 0xf8) // hop 63, rate 0x2a, SL 9 + subnet local, ACK timeout 0x1f
	g.at(64, filled(LapPrivateDataLen, 0xa0)...)
	cases = append(cases, goldenCase{"LAP", &LoadAlternatePath{
		LocalCommID: 0x01010101, RemoteCommID: 0x02020202, RemoteQPN: 0x3d, RemoteCMResponseTimeout: 0x14,
		AlternateLocalLID: 7, AlternateRemoteLID: 9, AlternateLocalGID: gid("fe80::a"), AlternateRemoteGID: gid("10.0.0.1"),
		AlternateFlowLabel: 0xabcde, AlternateTrafficClass: 0x0b, AlternateHopLimit: 63, AlternatePacketRate: 0x2a,
		AlternateSL: 9, AlternateSubnetLocal: true, AlternateLocalACKTimeout: 0x1f,
		PrivateData: filled(LapPrivateDataLen, 0xa0),
	}, g.bytes()})

	// APR (Table 116).
	g = golden{}
	g.at(0, 0x02, 0x02, 0x02, 0x02, 0x01, 0x01, 0x01, 0x01)
	g.at(8, 0x10, 0x0d) // info length 16, status invalid SL
	g.at(12, filled(ARILen, 0xc0)...)
	g.at(84, filled(AprPrivateDataLen, 0x05)...)
	cases = append(cases, goldenCase{"APR", &AlternatePathResponse{
		LocalCommID: 0x02020202, RemoteCommID: 0x01010101, AdditionalInfoLength: 16, APStatus: APInvalidSL,
		AdditionalInfo: filled(ARILen, 0xc0), PrivateData: filled(AprPrivateDataLen, 0x05),
	}, g.bytes()})

	return cases
}

func TestGoldenMessagesCoverAllAttributes(t *testing.T) {
	seen := map[AttributeID]bool{}
	for _, c := range goldenMessages() {
		seen[c.msg.AttributeID()] = true
		assert.Equal(t, c.name, AttributeName(ClassCM, c.msg.AttributeID()))
		assert.True(t, strings.HasPrefix(c.msg.String(), c.name+" "), c.msg.String())
	}
	for id := AttrConnectRequest; id <= AttrAlternatePathResponse; id++ {
		assert.True(t, seen[id], "no golden message for %s", AttributeName(ClassCM, id))
	}
}

// TestGoldenDecode: the golden bytes decode to the golden struct.
func TestGoldenDecode(t *testing.T) {
	for _, c := range goldenMessages() {
		t.Run(c.name, func(t *testing.T) {
			got := NewMessage(c.msg.AttributeID())
			require.NoError(t, got.DecodeFromBytes(c.wire))
			assert.Equal(t, c.msg, got)

			viaDecode, err := DecodeMessage(c.msg.AttributeID(), c.wire)
			require.NoError(t, err)
			assert.Equal(t, c.msg, viaDecode)
		})
	}
}

// TestGoldenEncode: the golden struct encodes to the golden bytes.
func TestGoldenEncode(t *testing.T) {
	for _, c := range goldenMessages() {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.msg.MarshalBinary()
			require.NoError(t, err)
			assert.Equal(t, c.wire, got)

			prefix := []byte{0xee, 0xee}
			app, err := c.msg.AppendBinary(prefix)
			require.NoError(t, err)
			assert.Equal(t, append([]byte{0xee, 0xee}, c.wire...), app)
		})
	}
}

// TestRoundTrips: encode → decode gives the same struct; decode → encode
// gives the same 232 bytes, also for a short PrivateData (zero-padded).
func TestRoundTrips(t *testing.T) {
	for _, c := range goldenMessages() {
		t.Run(c.name, func(t *testing.T) {
			wire, err := c.msg.MarshalBinary()
			require.NoError(t, err)
			back := NewMessage(c.msg.AttributeID())
			require.NoError(t, back.DecodeFromBytes(wire))
			assert.Equal(t, c.msg, back, "encode → decode")

			again, err := back.MarshalBinary()
			require.NoError(t, err)
			assert.Equal(t, c.wire, again, "decode → encode")
		})
	}

	// A zero message of each kind is 232 zero bytes, and back.
	for id := AttrConnectRequest; id <= AttrAlternatePathResponse; id++ {
		wire, err := NewMessage(id).MarshalBinary()
		require.NoError(t, err)
		assert.Equal(t, make([]byte, DataLen), wire, "%s", id)
	}

	// Short private data is padded with zeros.
	rtu := &ReadyToUse{LocalCommID: 1, RemoteCommID: 2, PrivateData: []byte("hi")}
	wire, err := rtu.MarshalBinary()
	require.NoError(t, err)
	require.Len(t, wire, DataLen)
	assert.Equal(t, []byte("hi"), wire[8:10])
	assert.Equal(t, make([]byte, DataLen-10), wire[10:])
}

// TestDecodeAliases: decoded slices point into the input, as the gopacket
// convention asks.
func TestDecodeAliases(t *testing.T) {
	same := func(t *testing.T, s, wire []byte, off int) {
		t.Helper()
		require.NotEmpty(t, s)
		assert.Same(t, &wire[off], &s[0], "slice at data offset %d", off)
	}
	for _, c := range goldenMessages() {
		t.Run(c.name, func(t *testing.T) {
			m := NewMessage(c.msg.AttributeID())
			require.NoError(t, m.DecodeFromBytes(c.wire))
			off := fixedLen(m.AttributeID())
			switch m := m.(type) {
			case *ConnectRequest:
				same(t, m.PrivateData, c.wire, off)
			case *MessageReceiptAck:
				same(t, m.PrivateData, c.wire, off)
			case *ConnectReject:
				same(t, m.ARI, c.wire, 12)
				same(t, m.PrivateData, c.wire, off)
			case *ConnectReply:
				same(t, m.PrivateData, c.wire, off)
			case *ReadyToUse:
				same(t, m.PrivateData, c.wire, off)
			case *DisconnectRequest:
				same(t, m.PrivateData, c.wire, off)
			case *DisconnectReply:
				same(t, m.PrivateData, c.wire, off)
			case *SIDRRequest:
				same(t, m.PrivateData, c.wire, off)
			case *SIDRReply:
				same(t, m.AdditionalInfo, c.wire, 24)
				same(t, m.PrivateData, c.wire, off)
			case *LoadAlternatePath:
				same(t, m.PrivateData, c.wire, off)
			case *AlternatePathResponse:
				same(t, m.AdditionalInfo, c.wire, 12)
				same(t, m.PrivateData, c.wire, off)
			}
		})
	}
}

// TestTruncatedMessages decodes every prefix of every golden message: a
// prefix holding the fixed fields decodes them (private data cut) and
// reports ErrTruncated; a shorter one leaves the message zero.
func TestTruncatedMessages(t *testing.T) {
	for _, c := range goldenMessages() {
		t.Run(c.name, func(t *testing.T) {
			id := c.msg.AttributeID()
			fixed := fixedLen(id)
			for n := 0; n < DataLen; n++ {
				m := NewMessage(id)
				err := m.DecodeFromBytes(c.wire[:n])
				require.ErrorIs(t, err, ErrTruncated, "%d bytes", n)
				assert.Contains(t, err.Error(), "cm: truncated: "+c.name)
				if n < fixed {
					assert.Equal(t, NewMessage(id), m, "%d bytes: nothing decoded", n)
					continue
				}
				// The fixed fields match the whole message's; re-encoding
				// gives the prefix followed by zeros.
				enc, err := m.MarshalBinary()
				require.NoError(t, err)
				want := make([]byte, DataLen)
				copy(want, c.wire[:n])
				assert.Equal(t, want, enc, "%d bytes", n)
			}
		})
	}
}

// TestEncodeRange: fields too wide for their bits, and private data longer
// than its room, are errors wrapping ErrFieldRange.
func TestEncodeRange(t *testing.T) {
	cases := []struct {
		msg  Message
		want string
	}{
		{&ConnectRequest{LocalQPN: 1 << 24}, "REQ LocalQPN 0x1000000 exceeds 24 bits"},
		{&ConnectRequest{StartingPSN: 1 << 24}, "StartingPSN"},
		{&ConnectRequest{PathMTU: 16}, "PathMTU"},
		{&ConnectRequest{TransportServiceType: 4}, "TransportServiceType"},
		{&ConnectRequest{PrimaryFlowLabel: 1 << 20}, "PrimaryFlowLabel"},
		{&ConnectRequest{AlternatePacketRate: 64}, "AlternatePacketRate"},
		{&ConnectRequest{RetryCount: 8}, "RetryCount"},
		{&ConnectRequest{PrivateData: make([]byte, ReqPrivateDataLen+1)}, "REQ PrivateData is 93 bytes, room for 92"},
		{&ConnectReply{LocalQPN: 1 << 24}, "REP LocalQPN"},
		{&ConnectReply{FailoverAccepted: 4}, "FailoverAccepted"},
		{&ConnectReply{VendorID: 1 << 24}, "VendorID"},
		{&ConnectReject{RejectInfoLength: 128}, "RejectInfoLength"},
		{&ConnectReject{ARI: make([]byte, ARILen+1)}, "ARI"},
		{&MessageReceiptAck{ServiceTimeout: 32}, "ServiceTimeout"},
		{&DisconnectRequest{RemoteQPN: 1 << 24}, "RemoteQPN"},
		{&DisconnectReply{PrivateData: make([]byte, DrepPrivateDataLen+1)}, "DREP PrivateData"},
		{&ReadyToUse{PrivateData: make([]byte, RtuPrivateDataLen+1)}, "RTU PrivateData"},
		{&SIDRRequest{PrivateData: make([]byte, SIDRReqPrivateDataLen+1)}, "SIDR_REQ PrivateData"},
		{&SIDRReply{QPN: 1 << 24}, "SIDR_REP QPN"},
		{&LoadAlternatePath{AlternateSL: 16}, "LAP AlternateSL"},
		{&AlternatePathResponse{AdditionalInfo: make([]byte, ARILen+1)}, "APR AdditionalInfo"},
	}
	for _, c := range cases {
		b, err := c.msg.AppendBinary([]byte{1, 2, 3})
		require.ErrorIs(t, err, ErrFieldRange, c.want)
		assert.Contains(t, err.Error(), c.want)
		assert.True(t, strings.HasPrefix(err.Error(), "cm: field out of range: "), err.Error())
		assert.Equal(t, []byte{1, 2, 3}, b, "b unchanged on error")
	}
}

func TestDecodeMessageUnknown(t *testing.T) {
	for _, id := range []AttributeID{0, AttrClassPortInfo, 0x000f, 0x001b, 0xffff} {
		m, err := DecodeMessage(id, make([]byte, DataLen))
		assert.Nil(t, m)
		require.ErrorIs(t, err, ErrUnknownAttribute)
		assert.True(t, errors.Is(err, ErrUnknownAttribute))
		assert.Nil(t, NewMessage(id))
	}
}

func TestRejectReasons(t *testing.T) {
	for r := RejectReason(1); r <= 35; r++ {
		assert.NotContains(t, r.String(), "RejectReason(", "reason %d unnamed", r)
	}
	assert.Equal(t, "stale connection", RejectStaleConnection.String())
	assert.Equal(t, "consumer reject", RejectConsumer.String())
	assert.Equal(t, "vendor option not supported", RejectVendorOptionNotSupported.String())
	assert.Equal(t, "RejectReason(0)", RejectReason(0).String())
	assert.Equal(t, "RejectReason(36)", RejectReason(36).String())

	rej := &ConnectReject{Reason: RejectInvalidServiceID, MessageRejected: RejectedREQ, RejectInfoLength: 4, ARI: filled(ARILen, 1)}
	assert.Equal(t, filled(4, 1), rej.ARIBytes())
	assert.Contains(t, rej.String(), "rejects REQ: invalid service ID (8)")
}

func TestEnumStrings(t *testing.T) {
	assert.Equal(t, "LAP", MRAedLAP.String())
	assert.Equal(t, "MRAedMessage(3)", MRAedMessage(3).String())
	assert.Equal(t, "other", RejectedOther.String())
	assert.Equal(t, "RejectedMessage(3)", RejectedMessage(3).String())
	assert.Equal(t, "alternate-rejected", FailoverRejectedAltPath.String())
	assert.Equal(t, "FailoverStatus(3)", FailoverStatus(3).String())
	assert.Equal(t, "redirect", SIDRRedirect.String())
	assert.Equal(t, "SIDRStatus(6)", SIDRStatus(6).String())
	assert.Equal(t, "invalid SL", APInvalidSL.String())
	assert.Equal(t, "APStatus(14)", APStatus(14).String())
	for s := APPathLoaded; s <= APInvalidSL; s++ {
		assert.NotContains(t, s.String(), "APStatus(")
	}
	for s := SIDRSuccess; s <= SIDRUnsupportedVersion; s++ {
		assert.NotContains(t, s.String(), "SIDRStatus(")
	}
	assert.Equal(t, "RC", TransportRC.String())
	assert.Equal(t, "extended", TransportExtended.String())
	assert.Equal(t, "TransportServiceType(4)", TransportServiceType(4).String())
}

func TestSIDRIPPrivateData(t *testing.T) {
	p := IPPrivateData{IPVersion: 6, SourcePort: 7, SourceIP: netip.MustParseAddr("fe80::1"), DestinationIP: netip.MustParseAddr("fe80::2")}
	pd, err := p.AppendBinary(nil)
	require.NoError(t, err)
	s := &SIDRRequest{ServiceID: RDMACMServiceID(PortSpaceUDP, 4791), PrivateData: pd}
	got, ok := s.IPPrivateData()
	require.True(t, ok)
	assert.Equal(t, p.SourceIP, got.SourceIP)
	assert.Equal(t, p.DestinationIP, got.DestinationIP)
	s.ServiceID = 0x1000000000000404
	_, ok = s.IPPrivateData()
	assert.False(t, ok)
}
