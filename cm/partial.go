package cm

import "fmt"

// A header-only capture (snap length 96, 128, …) often cuts a CM MAD
// inside the fixed fields of its REQ or REP, where the message decoders
// (which need every fixed field) give up. The fields that were captured
// still pair a connection. DecodePartial decodes them and says, with a
// Captured mask, which ones they are: a field is captured when all of its
// bytes are.

// Field names a field of a REQ or REP that DecodePartial reports in a
// Captured mask.
type Field uint8

// Fields of a REQ (ConnectRequest) and of a REP (ConnectReply), at the
// offsets of their doc comments.
const (
	ReqLocalCommID Field = iota
	ReqServiceID
	ReqLocalCAGUID
	ReqLocalQKey
	ReqLocalQPN
	ReqTransportServiceType
	ReqStartingPSN
	ReqPKey
	ReqPathMTU
	ReqPrimaryLocalLID
	ReqPrimaryRemoteLID
	ReqPrimaryLocalGID
	ReqPrimaryRemoteGID
	ReqPrimaryLocalACKTimeout

	RepLocalCommID
	RepRemoteCommID
	RepLocalQKey
	RepLocalQPN
	RepStartingPSN
	RepLocalCAGUID

	numFields
)

// fieldSpan is where a Field lies in its message's data.
type fieldSpan struct {
	msg    AttributeID
	off, n uint8
	name   string
}

// fieldSpans gives each Field its message, offset and size (PROTOCOL.md;
// the diagrams of ConnectRequest and ConnectReply).
var fieldSpans = [numFields]fieldSpan{
	ReqLocalCommID:            {msg: AttrConnectRequest, off: 0, n: 4, name: "LocalCommID"},
	ReqServiceID:              {msg: AttrConnectRequest, off: 8, n: 8, name: "ServiceID"},
	ReqLocalCAGUID:            {msg: AttrConnectRequest, off: 16, n: 8, name: "LocalCAGUID"},
	ReqLocalQKey:              {msg: AttrConnectRequest, off: 28, n: 4, name: "LocalQKey"},
	ReqLocalQPN:               {msg: AttrConnectRequest, off: 32, n: 3, name: "LocalQPN"},
	ReqTransportServiceType:   {msg: AttrConnectRequest, off: 43, n: 1, name: "TransportServiceType"},
	ReqStartingPSN:            {msg: AttrConnectRequest, off: 44, n: 3, name: "StartingPSN"},
	ReqPKey:                   {msg: AttrConnectRequest, off: 48, n: 2, name: "PKey"},
	ReqPathMTU:                {msg: AttrConnectRequest, off: 50, n: 1, name: "PathMTU"},
	ReqPrimaryLocalLID:        {msg: AttrConnectRequest, off: 52, n: 2, name: "PrimaryLocalLID"},
	ReqPrimaryRemoteLID:       {msg: AttrConnectRequest, off: 54, n: 2, name: "PrimaryRemoteLID"},
	ReqPrimaryLocalGID:        {msg: AttrConnectRequest, off: 56, n: 16, name: "PrimaryLocalGID"},
	ReqPrimaryRemoteGID:       {msg: AttrConnectRequest, off: 72, n: 16, name: "PrimaryRemoteGID"},
	ReqPrimaryLocalACKTimeout: {msg: AttrConnectRequest, off: 95, n: 1, name: "PrimaryLocalACKTimeout"},

	RepLocalCommID:  {msg: AttrConnectReply, off: 0, n: 4, name: "LocalCommID"},
	RepRemoteCommID: {msg: AttrConnectReply, off: 4, n: 4, name: "RemoteCommID"},
	RepLocalQKey:    {msg: AttrConnectReply, off: 8, n: 4, name: "LocalQKey"},
	RepLocalQPN:     {msg: AttrConnectReply, off: 12, n: 3, name: "LocalQPN"},
	RepStartingPSN:  {msg: AttrConnectReply, off: 20, n: 3, name: "StartingPSN"},
	RepLocalCAGUID:  {msg: AttrConnectReply, off: 28, n: 8, name: "LocalCAGUID"},
}

// String returns the message and field name ("REQ.StartingPSN").
func (f Field) String() string {
	if f >= numFields {
		return fmt.Sprintf("Field(%d)", uint8(f))
	}
	s := fieldSpans[f]
	return messageName(s.msg) + "." + s.name
}

// Captured is the set of the Fields a decode found in the captured bytes.
type Captured uint32

// Has reports whether field f was captured.
func (c Captured) Has(f Field) bool { return f < numFields && c&(1<<f) != 0 }

// CapturedFields returns the Fields of message id that lie wholly within
// the first n bytes of its data (0 for a message without Fields).
func CapturedFields(id AttributeID, n int) Captured {
	var c Captured
	for f, s := range fieldSpans {
		if s.msg == id && int(s.off)+int(s.n) <= n {
			c |= 1 << f
		}
	}
	return c
}

// DecodePartial decodes what data (the start of a REQ's 232 data bytes,
// possibly cut) holds of a REQ and returns the Fields it captured. Data
// holding the whole fixed part (140 bytes) decodes exactly as
// DecodeFromBytes, private data included, and every REQ Field is
// captured. Shorter data sets only the Fields that lie wholly within it;
// every other field of m, Field or not, is zero. The error wraps
// ErrTruncated when data is shorter than the 232 bytes.
func (m *ConnectRequest) DecodePartial(data []byte) (Captured, error) {
	got := CapturedFields(AttrConnectRequest, len(data))
	if len(data) >= reqFixedLen {
		return got, m.DecodeFromBytes(data)
	}
	var buf [reqFixedLen]byte
	copy(buf[:], data)
	var all ConnectRequest
	_ = all.DecodeFromBytes(buf[:])
	*m = ConnectRequest{}
	for f := range numFields {
		if got.Has(f) {
			m.copyField(f, &all)
		}
	}
	return got, partialErr(AttrConnectRequest, len(data))
}

// copyField copies one REQ Field from src.
func (m *ConnectRequest) copyField(f Field, src *ConnectRequest) {
	switch f {
	case ReqLocalCommID:
		m.LocalCommID = src.LocalCommID
	case ReqServiceID:
		m.ServiceID = src.ServiceID
	case ReqLocalCAGUID:
		m.LocalCAGUID = src.LocalCAGUID
	case ReqLocalQKey:
		m.LocalQKey = src.LocalQKey
	case ReqLocalQPN:
		m.LocalQPN = src.LocalQPN
	case ReqTransportServiceType:
		m.TransportServiceType = src.TransportServiceType
	case ReqStartingPSN:
		m.StartingPSN = src.StartingPSN
	case ReqPKey:
		m.PKey = src.PKey
	case ReqPathMTU:
		m.PathMTU = src.PathMTU
	case ReqPrimaryLocalLID:
		m.PrimaryLocalLID = src.PrimaryLocalLID
	case ReqPrimaryRemoteLID:
		m.PrimaryRemoteLID = src.PrimaryRemoteLID
	case ReqPrimaryLocalGID:
		m.PrimaryLocalGID = src.PrimaryLocalGID
	case ReqPrimaryRemoteGID:
		m.PrimaryRemoteGID = src.PrimaryRemoteGID
	case ReqPrimaryLocalACKTimeout:
		m.PrimaryLocalACKTimeout = src.PrimaryLocalACKTimeout
	}
}

// DecodePartial decodes what data (the start of a REP's 232 data bytes,
// possibly cut) holds of a REP, as ConnectRequest.DecodePartial does: the
// whole fixed part (36 bytes) decodes as DecodeFromBytes; shorter data
// sets only the REP Fields within it.
func (m *ConnectReply) DecodePartial(data []byte) (Captured, error) {
	// A near copy of ConnectRequest.DecodePartial on purpose: one generic
	// version makes Go move the buffers below to the heap, an allocation
	// per cut MAD.
	got := CapturedFields(AttrConnectReply, len(data))
	if len(data) >= repFixedLen {
		return got, m.DecodeFromBytes(data)
	}
	var buf [repFixedLen]byte
	copy(buf[:], data)
	var all ConnectReply
	_ = all.DecodeFromBytes(buf[:])
	*m = ConnectReply{}
	for f := range numFields {
		if got.Has(f) {
			m.copyField(f, &all)
		}
	}
	return got, partialErr(AttrConnectReply, len(data))
}

// copyField copies one REP Field from src.
func (m *ConnectReply) copyField(f Field, src *ConnectReply) {
	switch f {
	case RepLocalCommID:
		m.LocalCommID = src.LocalCommID
	case RepRemoteCommID:
		m.RemoteCommID = src.RemoteCommID
	case RepLocalQKey:
		m.LocalQKey = src.LocalQKey
	case RepLocalQPN:
		m.LocalQPN = src.LocalQPN
	case RepStartingPSN:
		m.StartingPSN = src.StartingPSN
	case RepLocalCAGUID:
		m.LocalCAGUID = src.LocalCAGUID
	}
}

func partialErr(id AttributeID, n int) error {
	return fmt.Errorf("cm: %w: %s: %d bytes, need %d", ErrTruncated, messageName(id), n, DataLen)
}
