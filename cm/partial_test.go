package cm

import (
	"encoding/binary"
	"errors"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specREQ is a REQ's data written byte by byte from the offsets of
// PROTOCOL.md ("MADs and the Communication Manager"), not by this
// package's encoder.
func specREQ() []byte {
	d := make([]byte, DataLen)
	binary.BigEndian.PutUint32(d[0:], 0x11223344)                                 // LocalCommID
	binary.BigEndian.PutUint64(d[8:], 0x0000000001064000)                         // ServiceID: RDMA CM, TCP port 0x4000
	binary.BigEndian.PutUint64(d[16:], 0x0002c90300001234)                        // LocalCAGUID
	binary.BigEndian.PutUint32(d[28:], 0x80010000)                                // LocalQ_Key
	d[32], d[33], d[34] = 0x00, 0x01, 0x37                                        // LocalQPN 0x137
	d[43] = 20<<3 | 0<<1                                                          // RemoteCMRespTimeout, RC
	d[44], d[45], d[46] = 0x9f, 0x93, 0x1b                                        // StartingPSN 10457883
	binary.BigEndian.PutUint16(d[48:], 0xffff)                                    // P_Key
	d[50] = 5<<4 | 7                                                              // PathMTU 4096, RNRRetryCount
	binary.BigEndian.PutUint16(d[52:], 0xffff)                                    // PrimaryLocalLID
	binary.BigEndian.PutUint16(d[54:], 0x0000)                                    // PrimaryRemoteLID
	copy(d[56:72], []byte{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 242, 15: 47}) // ::ffff:192.168.242.47
	copy(d[72:88], []byte{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 242, 15: 56}) // ::ffff:192.168.242.56
	return d
}

func specREP() []byte {
	d := make([]byte, DataLen)
	binary.BigEndian.PutUint32(d[0:], 0xaabbccdd)          // LocalCommID
	binary.BigEndian.PutUint32(d[4:], 0x11223344)          // RemoteCommID
	binary.BigEndian.PutUint32(d[8:], 0x80010000)          // LocalQ_Key
	d[12], d[13], d[14] = 0x00, 0x01, 0x67                 // LocalQPN 0x167
	d[20], d[21], d[22] = 0xbe, 0xe3, 0x7a                 // StartingPSN 12510074
	binary.BigEndian.PutUint64(d[28:], 0x0002c90300005678) // LocalCAGUID
	return d
}

func TestDecodePartialREQ(t *testing.T) {
	mapped := func(last byte) GID { return GID{10: 0xff, 11: 0xff, 12: 192, 13: 168, 14: 242, 15: last} }
	tests := []struct {
		n    int
		want []Field
	}{
		{0, nil},
		{3, nil},
		{4, []Field{ReqLocalCommID}},
		{10, []Field{ReqLocalCommID}}, // snap 96 over IPv4
		{16, []Field{ReqLocalCommID, ReqServiceID}},
		{34, []Field{ReqLocalCommID, ReqServiceID, ReqLocalCAGUID, ReqLocalQKey}},
		{42, []Field{ReqLocalCommID, ReqServiceID, ReqLocalCAGUID, ReqLocalQKey, ReqLocalQPN}}, // snap 128
		{47, []Field{ReqLocalCommID, ReqServiceID, ReqLocalCAGUID, ReqLocalQKey, ReqLocalQPN, ReqTransportServiceType, ReqStartingPSN}},
		{51, []Field{ReqLocalCommID, ReqServiceID, ReqLocalCAGUID, ReqLocalQKey, ReqLocalQPN, ReqTransportServiceType, ReqStartingPSN, ReqPKey, ReqPathMTU}},
		{87, []Field{ReqLocalCommID, ReqServiceID, ReqLocalCAGUID, ReqLocalQKey, ReqLocalQPN, ReqTransportServiceType, ReqStartingPSN, ReqPKey, ReqPathMTU, ReqPrimaryLocalLID, ReqPrimaryRemoteLID, ReqPrimaryLocalGID}},
		{88, []Field{ReqLocalCommID, ReqServiceID, ReqLocalCAGUID, ReqLocalQKey, ReqLocalQPN, ReqTransportServiceType, ReqStartingPSN, ReqPKey, ReqPathMTU, ReqPrimaryLocalLID, ReqPrimaryRemoteLID, ReqPrimaryLocalGID, ReqPrimaryRemoteGID}},
		{140, []Field{ReqLocalCommID, ReqServiceID, ReqLocalCAGUID, ReqLocalQKey, ReqLocalQPN, ReqTransportServiceType, ReqStartingPSN, ReqPKey, ReqPathMTU, ReqPrimaryLocalLID, ReqPrimaryRemoteLID, ReqPrimaryLocalGID, ReqPrimaryRemoteGID}},
		{DataLen, []Field{ReqLocalCommID, ReqServiceID, ReqLocalCAGUID, ReqLocalQKey, ReqLocalQPN, ReqTransportServiceType, ReqStartingPSN, ReqPKey, ReqPathMTU, ReqPrimaryLocalLID, ReqPrimaryRemoteLID, ReqPrimaryLocalGID, ReqPrimaryRemoteGID}},
	}
	// What each Field holds in specREQ.
	values := map[Field]any{
		ReqLocalCommID: uint32(0x11223344), ReqServiceID: ServiceID(0x0000000001064000), ReqLocalCAGUID: GUID(0x0002c90300001234),
		ReqLocalQKey: uint32(0x80010000), ReqLocalQPN: uint32(0x137), ReqTransportServiceType: TransportRC,
		ReqStartingPSN: uint32(10457883), ReqPKey: uint16(0xffff), ReqPathMTU: MTU4096,
		ReqPrimaryLocalLID: LID(0xffff), ReqPrimaryRemoteLID: LID(0), ReqPrimaryLocalGID: mapped(47), ReqPrimaryRemoteGID: mapped(56),
	}
	full := specREQ()
	for _, tt := range tests {
		var m ConnectRequest
		m.LocalCommID = 0xdead // a reused message is reset
		got, err := m.DecodePartial(full[:tt.n])
		if tt.n < DataLen {
			require.ErrorIs(t, err, ErrTruncated, "n=%d", tt.n)
		} else {
			require.NoError(t, err)
		}
		assert.Equal(t, CapturedFields(AttrConnectRequest, tt.n), got, "n=%d", tt.n)
		for f := ReqLocalCommID; f <= ReqPrimaryRemoteGID; f++ {
			v := reflect.ValueOf(m).FieldByName(fieldSpans[f].name).Interface()
			if contains(tt.want, f) {
				assert.True(t, got.Has(f), "n=%d %s", tt.n, f)
				assert.Equal(t, values[f], v, "n=%d %s", tt.n, f)
			} else {
				assert.False(t, got.Has(f), "n=%d %s", tt.n, f)
				assert.True(t, reflect.ValueOf(v).IsZero(), "n=%d %s = %v, want zero", tt.n, f, v)
			}
		}
		if tt.n < reqFixedLen {
			assert.Zero(t, m.RetryCount, "n=%d: non-Fields of a cut REQ stay zero", tt.n)
			assert.Nil(t, m.PrivateData)
		}
	}
}

func TestDecodePartialREP(t *testing.T) {
	full := specREP()
	values := map[Field]any{RepLocalCommID: uint32(0xaabbccdd), RepRemoteCommID: uint32(0x11223344), RepLocalQKey: uint32(0x80010000),
		RepLocalQPN: uint32(0x167), RepStartingPSN: uint32(12510074), RepLocalCAGUID: GUID(0x0002c90300005678)}
	for _, n := range []int{0, 4, 8, 12, 15, 22, 23, 35, 36, DataLen} {
		var m ConnectReply
		got, err := m.DecodePartial(full[:n])
		if n < DataLen {
			require.ErrorIs(t, err, ErrTruncated)
		} else {
			require.NoError(t, err)
		}
		for f := RepLocalCommID; f <= RepLocalCAGUID; f++ {
			s := fieldSpans[f]
			in := int(s.off)+int(s.n) <= n
			assert.Equal(t, in, got.Has(f), "n=%d %s", n, f)
			v := reflect.ValueOf(m).FieldByName(s.name).Interface()
			if in {
				assert.Equal(t, values[f], v, "n=%d %s", n, f)
			} else {
				assert.True(t, reflect.ValueOf(v).IsZero(), "n=%d %s", n, f)
			}
		}
		assert.False(t, got.Has(ReqLocalCommID), "a REP mask names no REQ field")
	}
}

func TestFieldString(t *testing.T) {
	assert.Equal(t, "REQ.StartingPSN", ReqStartingPSN.String())
	assert.Equal(t, "REP.LocalQPN", RepLocalQPN.String())
	assert.Equal(t, "Field(200)", Field(200).String())
	assert.False(t, Captured(0xFFFFFFFF).Has(Field(200)))
}

func contains(fs []Field, f Field) bool {
	for _, x := range fs {
		if x == f {
			return true
		}
	}
	return false
}

// FuzzDecodePartial cuts arbitrary REQ and REP data anywhere: no input
// panics, every captured Field holds what the whole message's decode
// holds, every other Field is zero.
func FuzzDecodePartial(f *testing.F) {
	f.Add(specREQ(), uint8(42))
	f.Add(specREQ(), uint8(10))
	f.Add(specREP(), uint8(22))
	f.Add([]byte{1, 2, 3}, uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		whole := make([]byte, DataLen)
		copy(whole, data)
		n := min(int(cut), len(data), DataLen)
		var req, wantReq ConnectRequest
		var rep, wantRep ConnectReply
		require.NoError(t, wantReq.DecodeFromBytes(whole))
		require.NoError(t, wantRep.DecodeFromBytes(whole))
		gotReq, err := req.DecodePartial(data[:n])
		if n < DataLen && !errors.Is(err, ErrTruncated) {
			t.Fatalf("n=%d: want ErrTruncated, got %v", n, err)
		}
		gotRep, _ := rep.DecodePartial(data[:n])
		check := func(got Captured, from, to Field, m, want any) {
			for fl := from; fl <= to; fl++ {
				v := reflect.ValueOf(m).FieldByName(fieldSpans[fl].name)
				if got.Has(fl) {
					require.Equal(t, reflect.ValueOf(want).FieldByName(fieldSpans[fl].name).Interface(), v.Interface(), "%s", fl)
				} else {
					require.True(t, v.IsZero(), "%s not captured but %v", fl, v)
				}
			}
		}
		check(gotReq, ReqLocalCommID, ReqPrimaryRemoteGID, req, wantReq)
		check(gotRep, RepLocalCommID, RepLocalCAGUID, rep, wantRep)
	})
}
