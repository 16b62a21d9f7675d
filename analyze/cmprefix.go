package analyze

import (
	"encoding/binary"

	"github.com/roce-dissect/roce-dissect/cm"
)

// A header-only capture often cuts a CM MAD inside its fixed fields. The
// fields that were captured still pair the connection: prefixREQ and
// prefixREP decode the ones present (offsets from the start of the MAD
// data, PROTOCOL.md) and report whether any field the report uses is
// missing.

func has(data []byte, off, n int) bool { return len(data) >= off+n }

func get24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

// prefixREQ decodes the captured part of a REQ; ok is false when not even
// its LocalCommID was captured.
func prefixREQ(data []byte, m *cm.ConnectRequest) (ok, truncated bool) {
	*m = cm.ConnectRequest{}
	if !has(data, 0, 4) {
		return false, true
	}
	m.LocalCommID = binary.BigEndian.Uint32(data)
	if has(data, 8, 8) {
		m.ServiceID = cm.ServiceID(binary.BigEndian.Uint64(data[8:]))
	}
	if has(data, 32, 3) {
		m.LocalQPN = get24(data[32:])
	}
	if has(data, 43, 1) {
		m.TransportServiceType = cm.TransportServiceType(data[43]>>1) & 3
	}
	if has(data, 44, 3) {
		m.StartingPSN = get24(data[44:])
	}
	if has(data, 50, 1) {
		m.PathMTU = cm.PathMTU(data[50] >> 4)
	}
	if has(data, 52, 4) {
		m.PrimaryLocalLID = cm.LID(binary.BigEndian.Uint16(data[52:]))
		m.PrimaryRemoteLID = cm.LID(binary.BigEndian.Uint16(data[54:]))
	}
	if has(data, 56, 32) {
		copy(m.PrimaryLocalGID[:], data[56:72])
		copy(m.PrimaryRemoteGID[:], data[72:88])
	}
	return true, !has(data, 72, 16)
}

// prefixREP decodes the captured part of a REP.
func prefixREP(data []byte, m *cm.ConnectReply) (ok, truncated bool) {
	*m = cm.ConnectReply{}
	if !has(data, 0, 8) {
		return false, true
	}
	m.LocalCommID = binary.BigEndian.Uint32(data)
	m.RemoteCommID = binary.BigEndian.Uint32(data[4:])
	if has(data, 12, 3) {
		m.LocalQPN = get24(data[12:])
	}
	if has(data, 20, 3) {
		m.StartingPSN = get24(data[20:])
	}
	return true, !has(data, 20, 3)
}
