package cm

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenHeader is the common header of the first REQ of rdma_cm.pcap,
// with Status, ClassSpecific, Reserved and AttributeModifier set so that
// every field is checked.
var goldenHeader = []byte{
	0x01, 0x07, 0x02, 0x03, // BaseVersion, MgmtClass CM, ClassVersion 2, Method Send
	0x80, 0x1d, 0x12, 0x34, // Status, ClassSpecific
	0x00, 0x00, 0x00, 0x02, 0x6d, 0xc5, 0xc0, 0x64, // TransactionID
	0x00, 0x10, 0xab, 0xcd, // AttributeID REQ, Reserved
	0xde, 0xad, 0xbe, 0xef, // AttributeModifier
}

var goldenHeaderStruct = Header{
	BaseVersion: 1, MgmtClass: ClassCM, ClassVersion: 2, Method: MethodSend,
	Status: 0x801d, ClassSpecific: 0x1234, TransactionID: 0x000000026dc5c064,
	AttributeID: AttrConnectRequest, Reserved: 0xabcd, AttributeModifier: 0xdeadbeef,
}

func TestHeaderGolden(t *testing.T) {
	var h Header
	require.NoError(t, h.DecodeFromBytes(goldenHeader))
	assert.Equal(t, goldenHeaderStruct, h)

	b := make([]byte, HeaderLen)
	h.Encode(b)
	assert.Equal(t, goldenHeader, b)
	app, err := h.AppendBinary([]byte{9})
	require.NoError(t, err)
	assert.Equal(t, append([]byte{9}, goldenHeader...), app)

	for n := range HeaderLen {
		h := goldenHeaderStruct
		err := h.DecodeFromBytes(goldenHeader[:n])
		require.ErrorIs(t, err, ErrTruncated)
		assert.Equal(t, Header{}, h, "reset on short data")
	}
}

func TestHeaderNames(t *testing.T) {
	h := goldenHeaderStruct
	h.Status = 0
	assert.Equal(t, "CM Send REQ tid=0x000000026dc5c064", h.String())
	h.Status = 0x000d
	assert.Equal(t, "CM Send REQ tid=0x000000026dc5c064 status=0x000d busy method-attribute-unsupported", h.String())

	dr := Header{MgmtClass: ClassSubnMgmtDirectedRoute, Method: MethodGetResp, AttributeID: 0x20, Status: 0x8000, ClassSpecific: 0x0102}
	assert.True(t, dr.Direction())
	assert.Equal(t, uint8(1), dr.HopPointer())
	assert.Equal(t, uint8(2), dr.HopCount())
	assert.Equal(t, "SubnMgmtDR GetResp SMInfo tid=0x0000000000000000 hop=1/2 return", dr.String())

	classes := map[ManagementClass]string{
		0x01: "SubnMgmt", 0x81: "SubnMgmtDR", 0x03: "SubnAdm", 0x04: "Perf", 0x05: "BM", 0x06: "DevMgmt",
		0x07: "CM", 0x08: "SNMP", 0x10: "DevAdm", 0x11: "BootMgmt", 0x12: "BIS", 0x21: "CC",
		0x09: "Vendor(0x09)", 0x0f: "Vendor(0x0f)", 0x30: "Vendor(0x30)", 0x4f: "Vendor(0x4f)",
		0x13: "Application(0x13)", 0x2f: "Application(0x2f)",
		0x00: "Reserved(0x00)", 0x02: "Reserved(0x02)", 0x50: "Reserved(0x50)", 0x82: "Reserved(0x82)", 0xff: "Reserved(0xff)",
	}
	for c, want := range classes {
		assert.Equal(t, want, c.String())
	}
	// Every class value has a name, never an empty string.
	for c := range 256 {
		assert.NotEmpty(t, ManagementClass(c).String())
	}

	methods := map[Method]string{
		0x01: "Get", 0x02: "Set", 0x03: "Send", 0x05: "Trap", 0x06: "Report", 0x07: "TrapRepress",
		0x12: "GetTable", 0x13: "GetTraceTable", 0x14: "GetMulti", 0x15: "Delete",
		0x81: "GetResp", 0x86: "ReportResp", 0x92: "GetTableResp", 0x94: "GetMultiResp", 0x95: "DeleteResp",
		0x00: "Method(0x00)", 0x04: "Method(0x04)", 0x80: "Method(0x80)",
	}
	for m, want := range methods {
		assert.Equal(t, want, m.String())
	}
	assert.True(t, MethodGetResp.IsResponse())
	assert.False(t, MethodTrapRepress.IsResponse())

	attrs := []struct {
		class ManagementClass
		id    AttributeID
		want  string
	}{
		{ClassCM, 0x10, "REQ"}, {ClassCM, 0x11, "MRA"}, {ClassCM, 0x12, "REJ"}, {ClassCM, 0x13, "REP"},
		{ClassCM, 0x14, "RTU"}, {ClassCM, 0x15, "DREQ"}, {ClassCM, 0x16, "DREP"}, {ClassCM, 0x17, "SIDR_REQ"},
		{ClassCM, 0x18, "SIDR_REP"}, {ClassCM, 0x19, "LAP"}, {ClassCM, 0x1a, "APR"},
		{ClassCM, 0x01, "ClassPortInfo"}, {ClassCM, 0x1b, "0x001b"},
		{ClassSubnAdm, 0x35, "PathRecord"}, {ClassSubnAdm, 0x38, "MCMemberRecord"}, {ClassSubnAdm, 0xf3, "InformInfoRecord"},
		{ClassSubnAdm, 0x03, "InformInfo"}, {ClassSubnAdm, 0x10, "0x0010"},
		{ClassSubnMgmt, 0x15, "PortInfo"}, {ClassSubnMgmtDirectedRoute, 0x20, "SMInfo"}, {ClassSubnMgmt, 0x02, "Notice"},
		{ClassPerfMgmt, 0x12, "PortCounters"}, {ClassPerfMgmt, 0x1d, "PortCountersExtended"}, {ClassPerfMgmt, 0x01, "ClassPortInfo"},
		{ClassSNMP, 0x10, "0x0010"}, {ClassBaseboardMgmt, 0x01, "ClassPortInfo"},
	}
	for _, a := range attrs {
		assert.Equal(t, a.want, AttributeName(a.class, a.id), "%s %s", a.class, a.id)
	}
}

func TestStatus(t *testing.T) {
	cases := map[Status]string{
		0x0000: "0x0000",
		0x0001: "0x0001 busy",
		0x0002: "0x0002 redirect",
		0x0004: "0x0004 bad-version",
		0x0008: "0x0008 method-unsupported",
		0x000c: "0x000c method-attribute-unsupported",
		0x001c: "0x001c invalid-attribute-value",
		0x0010: "0x0010 invalid-field(4)",
		0x0300: "0x0300",
	}
	for s, want := range cases {
		assert.Equal(t, want, s.String())
	}
	assert.Equal(t, uint8(3), Status(0x0300).ClassSpecific())
	assert.Equal(t, uint8(7), Status(0x001c).InvalidField())
}

// goldenMAD returns a whole MAD: the golden header with a class,
// attribute and data.
func goldenMAD(class ManagementClass, attr AttributeID, data []byte) []byte {
	h := goldenHeaderStruct
	h.MgmtClass, h.AttributeID = class, attr
	b := make([]byte, MADLen)
	h.Encode(b)
	copy(b[HeaderLen:], data)
	return b
}

func TestMADDecodeCM(t *testing.T) {
	for _, c := range goldenMessages() {
		t.Run(c.name, func(t *testing.T) {
			raw := goldenMAD(ClassCM, c.msg.AttributeID(), c.wire)
			var m MAD
			require.NoError(t, m.Decode(raw))
			assert.Equal(t, c.msg, m.CM())
			assert.Equal(t, c.msg, m.Message)
			assert.Equal(t, raw, m.Contents)
			assert.Empty(t, m.Payload)
			assert.Equal(t, raw[HeaderLen:], m.Data)
			assert.Equal(t, SubnAdm{}, m.SubnAdm)
			assert.True(t, strings.HasPrefix(m.String(), "CM Send "+c.name+" tid=0x000000026dc5c064"), m.String())

			enc, err := m.AppendBinary(nil)
			require.NoError(t, err)
			assert.Equal(t, raw, enc)

			buf := gopacket.NewSerializeBuffer()
			require.NoError(t, m.SerializeTo(buf, gopacket.SerializeOptions{}))
			assert.Equal(t, raw, buf.Bytes())
		})
	}
}

// TestMADReuse decodes different MADs into one MAD: every field is reset.
func TestMADReuse(t *testing.T) {
	var m MAD
	sa := goldenMAD(ClassSubnAdm, AttrPathRecord, bytes.Repeat([]byte{0x11}, DataLen))
	require.NoError(t, m.Decode(sa))
	assert.Equal(t, uint64(0x1111111111111111), m.SubnAdm.ComponentMask)

	gm := goldenMessages()
	req := goldenMAD(ClassCM, AttrConnectRequest, gm[0].wire)
	require.NoError(t, m.Decode(req))
	assert.Equal(t, SubnAdm{}, m.SubnAdm)
	assert.Equal(t, gm[0].msg, m.Message)

	require.NoError(t, m.Decode(goldenMAD(ClassCM, AttrClassPortInfo, nil)))
	assert.Nil(t, m.Message, "ClassPortInfo is not a message")
	assert.Len(t, m.Data, DataLen)

	require.NoError(t, m.Decode(goldenMAD(ClassPerfMgmt, 0x12, bytes.Repeat([]byte{7}, DataLen))))
	assert.Nil(t, m.Message)
	assert.Nil(t, m.CM())
	assert.Len(t, m.Perf.Reserved, PerfReservedLen)
	assert.Len(t, m.Perf.Data, PerfDataLen)
	assert.Equal(t, "PortCounters", m.Header.AttributeName())

	// A CM class with another class's data: CM() is nil for non-CM MADs
	// even if Message was set by hand.
	m.Message = gm[0].msg
	assert.Nil(t, m.CM())
}

func TestMADSubnAdm(t *testing.T) {
	data := make([]byte, DataLen)
	copy(data, []byte{
		0x01, 0x01, 0xa7, 0x00, // RMPP v1, DATA, RespTime 0x14, flags Active|First|Last
		0x00, 0x00, 0x00, 0x01, // segment 1
		0x00, 0x00, 0x00, 0x40, // payload length 64
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, // SM_Key
		0x00, 0x08, 0x00, 0x00, // AttributeOffset 8 words
		0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x34, 0x0c, // ComponentMask
	})
	copy(data[32:], "path record")
	var m MAD
	require.NoError(t, m.Decode(goldenMAD(ClassSubnAdm, AttrPathRecord, data)))
	want := SubnAdm{
		RMPP:            RMPPHeader{Version: 1, Type: RMPPTypeData, RespTime: 0x14, Flags: RMPPActive | RMPPFirst | RMPPLast, Data1: 1, Data2: 64},
		SMKey:           0x0102030405060708,
		AttributeOffset: 8,
		ComponentMask:   0x340c,
		Data:            data[32:],
	}
	assert.Equal(t, want, m.SubnAdm)
	assert.Len(t, m.SubnAdm.Data, SADataLen)

	enc, err := want.AppendBinary(nil)
	require.NoError(t, err)
	assert.Equal(t, data, enc)

	_, err = (&SubnAdm{Data: make([]byte, SADataLen+1)}).AppendBinary(nil)
	require.ErrorIs(t, err, ErrFieldRange)
	_, err = (&SubnAdm{RMPP: RMPPHeader{Flags: 8}}).AppendBinary(nil)
	require.ErrorIs(t, err, ErrFieldRange)

	for tp, s := range map[RMPPType]string{0: "none", 1: "DATA", 2: "ACK", 3: "STOP", 4: "ABORT", 5: "RMPPType(5)"} {
		assert.Equal(t, s, tp.String())
	}
}

// TestMADTruncated decodes every prefix of MADs of several classes: the
// header decodes when present, the rest is reported as truncated, the CM
// message is there when its fixed fields are, and nothing panics.
func TestMADTruncated(t *testing.T) {
	gm := goldenMessages()
	inputs := map[string][]byte{
		"SubnAdm": goldenMAD(ClassSubnAdm, AttrPathRecord, bytes.Repeat([]byte{0x5a}, DataLen)),
		"Perf":    goldenMAD(ClassPerfMgmt, 0x12, bytes.Repeat([]byte{0x5a}, DataLen)),
		"SMP":     goldenMAD(ClassSubnMgmtDirectedRoute, 0x20, bytes.Repeat([]byte{0x5a}, DataLen)),
	}
	for _, c := range gm {
		inputs[c.name] = goldenMAD(ClassCM, c.msg.AttributeID(), c.wire)
	}
	for name, raw := range inputs {
		t.Run(name, func(t *testing.T) {
			for n := 0; n < MADLen; n++ {
				var m MAD
				var df truncFeedback
				err := m.DecodeFromBytes(raw[:n], &df)
				require.ErrorIs(t, err, ErrTruncated, "%d bytes", n)
				assert.True(t, df.truncated, "%d bytes: SetTruncated", n)
				if n < HeaderLen {
					assert.Equal(t, Header{}, m.Header)
					assert.Nil(t, m.Data)
					assert.Equal(t, "cm: truncated: MAD header: "+strconv.Itoa(n)+" bytes, need 24", err.Error())
					continue
				}
				var whole MAD
				require.NoError(t, whole.Decode(raw))
				assert.Equal(t, whole.Header, m.Header, "%d bytes: header", n)
				assert.Equal(t, raw[HeaderLen:n], m.Data)
				assert.Contains(t, err.Error(), "need 256")
				if whole.Header.MgmtClass == ClassCM {
					if n-HeaderLen >= fixedLen(whole.Header.AttributeID) {
						require.NotNil(t, m.Message, "%d bytes", n)
						assert.Equal(t, whole.Message.AttributeID(), m.Message.AttributeID())
					} else {
						assert.Nil(t, m.Message, "%d bytes", n)
					}
				}
			}
		})
	}
}

type truncFeedback struct{ truncated bool }

func (f *truncFeedback) SetTruncated() { f.truncated = true }

// TestMADTrailing: bytes after the 256 of the MAD are its payload.
func TestMADTrailing(t *testing.T) {
	raw := append(goldenMAD(ClassCM, AttrReadyToUse, nil), 1, 2, 3, 4)
	var m MAD
	require.NoError(t, m.Decode(raw))
	assert.Len(t, m.Contents, MADLen)
	assert.Equal(t, []byte{1, 2, 3, 4}, m.Payload)
	assert.Len(t, m.Data, DataLen)
}

func TestMADSerialize(t *testing.T) {
	rtu := &ReadyToUse{LocalCommID: 1, RemoteCommID: 2}
	m := &MAD{Header: Header{BaseVersion: 1, MgmtClass: ClassCM, ClassVersion: 2, Method: MethodSend, AttributeID: AttrConnectReply}, Message: rtu}

	buf := gopacket.NewSerializeBuffer()
	err := m.SerializeTo(buf, gopacket.SerializeOptions{})
	require.ErrorIs(t, err, ErrBadHeader)
	assert.Equal(t, "cm: bad header: CM MAD with attribute 0x0013 carries a RTU message", err.Error())
	_, err = m.AppendBinary(nil)
	require.ErrorIs(t, err, ErrBadHeader)

	require.NoError(t, m.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}))
	assert.Equal(t, AttrReadyToUse, m.Header.AttributeID, "FixLengths mends the header")
	require.Len(t, buf.Bytes(), MADLen, "exactly one MAD prepended")
	var back MAD
	require.NoError(t, back.Decode(buf.Bytes()))
	got, ok := back.Message.(*ReadyToUse)
	require.True(t, ok)
	assert.Equal(t, [2]uint32{1, 2}, [2]uint32{got.LocalCommID, got.RemoteCommID})

	m.Header.MgmtClass = ClassSubnAdm
	require.ErrorIs(t, m.SerializeTo(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{}), ErrBadHeader)
	require.NoError(t, m.SerializeTo(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{FixLengths: true}))
	assert.Equal(t, ClassCM, m.Header.MgmtClass)

	// A message that does not fit its fields fails, and nothing is left half-written in a fresh buffer.
	m.Message = &ReadyToUse{PrivateData: make([]byte, RtuPrivateDataLen+1)}
	require.ErrorIs(t, m.SerializeTo(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{}), ErrFieldRange)

	// Raw data for other classes, zero-padded.
	raw := &MAD{Header: Header{BaseVersion: 1, MgmtClass: ClassSubnMgmt, ClassVersion: 1, Method: MethodGet, AttributeID: 0x15}, Data: []byte{9, 9}}
	enc, err := raw.AppendBinary([]byte{0xee})
	require.NoError(t, err)
	require.Len(t, enc, 1+MADLen)
	assert.Equal(t, []byte{0xee, 1, 1, 1, 1}, enc[:5])
	assert.Equal(t, []byte{9, 9, 0}, enc[1+HeaderLen:1+HeaderLen+3])
	raw.Data = make([]byte, DataLen+1)
	_, err = raw.AppendBinary(nil)
	require.ErrorIs(t, err, ErrFieldRange)
}
