package cm

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fuzzSeeds returns MADs of every CM attribute and of the other decoded
// classes, whole and cut.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	for _, c := range goldenMessages() {
		raw := goldenMAD(ClassCM, c.msg.AttributeID(), c.wire)
		seeds = append(seeds, raw, raw[:HeaderLen+fixedLen(c.msg.AttributeID())], raw[:100])
	}
	seeds = append(seeds,
		goldenMAD(ClassCM, AttrClassPortInfo, nil),
		goldenMAD(ClassCM, 0x00ff, bytes.Repeat([]byte{0xff}, DataLen)),
		goldenMAD(ClassSubnAdm, AttrPathRecord, bytes.Repeat([]byte{0xa5}, DataLen)),
		goldenMAD(ClassPerfMgmt, 0x12, bytes.Repeat([]byte{0x5a}, DataLen)),
		goldenMAD(ClassSubnMgmtDirectedRoute, 0x20, nil),
		bytes.Repeat([]byte{0xff}, MADLen),
		nil,
		[]byte{1, 7, 2, 3},
	)
	return seeds
}

// FuzzMAD decodes arbitrary bytes as a MAD and as every CM message: no
// input panics, errors wrap the package's sentinels, and what decodes
// re-encodes to a fixed point (encode(decode(encode(x))) == encode(x)).
// The seeds cover every CM attribute, SA, PerfMgt and SMP MADs, and the
// MADs of the shared captures when that folder exists.
func FuzzMAD(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	for _, name := range []string{"softroce/rdma_cm.pcap", "softroce/rping.pcap", "ib-erf/infiniband.pcap"} {
		if _, err := os.Stat(filepath.Join(capturesDir, name)); err != nil {
			continue
		}
		for _, c := range capturedMADs(f, name) {
			f.Add(bytes.Clone(c.mad))
		}
	}

	f.Fuzz(func(t *testing.T, data []byte) {
		checkMADFuzz(t, data)
		for id := AttrConnectRequest; id <= AttrAlternatePathResponse; id++ {
			checkMessageFuzz(t, id, data)
		}
		checkIPPrivateDataFuzz(t, data)
	})
}

// checkMADFuzz decodes data as a MAD: shorter than a MAD it fails with
// ErrTruncated, else it decodes; from a header's length on, the MAD's
// header is the one Header decodes and String does not panic; what
// decodes re-encodes to a fixed point (checkMADFixedPoint).
func checkMADFuzz(t *testing.T, data []byte) {
	t.Helper()
	var m MAD
	err := m.Decode(data)
	switch {
	case len(data) < MADLen:
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("%d bytes: want ErrTruncated, got %v", len(data), err)
		}
	case err != nil:
		t.Fatalf("whole MAD: %v", err)
	}
	if len(data) >= HeaderLen {
		var h Header
		if err := h.DecodeFromBytes(data); err != nil || h != m.Header {
			t.Fatalf("header %+v, MAD header %+v (%v)", h, m.Header, err)
		}
		_ = m.String()
	}
	if err == nil {
		checkMADFixedPoint(t, &m, data)
	}
}

// checkMADFixedPoint checks that m, decoded from data, re-encodes (a MAD
// without a message to data's first MADLen bytes) and that decoding and
// encoding that again gives the same bytes.
func checkMADFixedPoint(t *testing.T, m *MAD, data []byte) {
	t.Helper()
	enc, err := m.AppendBinary(nil)
	if err != nil {
		t.Fatalf("re-encode: %v", err)
	}
	if m.Message == nil && !bytes.Equal(enc, data[:MADLen]) {
		t.Fatalf("raw MAD does not re-encode to itself")
	}
	var again MAD
	if err := again.Decode(enc); err != nil {
		t.Fatalf("decode of re-encoded MAD: %v", err)
	}
	enc2, err := again.AppendBinary(nil)
	if err != nil || !bytes.Equal(enc, enc2) {
		t.Fatalf("MAD encoding is not a fixed point (%v)", err)
	}
}

// checkMessageFuzz decodes data as CM message id: it fails with nothing
// but ErrTruncated and String does not panic; from the message's fixed
// length on, the message encodes, the encoding is a fixed point, and on
// a whole message's data it differs from data only in reserved bits.
func checkMessageFuzz(t *testing.T, id AttributeID, data []byte) {
	t.Helper()
	msg, err := DecodeMessage(id, data)
	if err != nil && !errors.Is(err, ErrTruncated) {
		t.Fatalf("%s: %v", id, err)
	}
	_ = msg.String()
	if len(data) < fixedLen(id) {
		return
	}
	enc, err := msg.MarshalBinary()
	if err != nil {
		t.Fatalf("%s: encode of decoded message: %v", id, err)
	}
	back, err := DecodeMessage(id, enc)
	if err != nil {
		t.Fatalf("%s: decode of encoded message: %v", id, err)
	}
	enc2, err := back.MarshalBinary()
	if err != nil || !bytes.Equal(enc, enc2) {
		t.Fatalf("%s: encoding is not a fixed point (%v)", id, err)
	}
	if len(data) >= DataLen && !bytes.Equal(enc, data[:DataLen]) {
		// Only reserved bits may differ.
		if !onlyReservedDiffer(id, enc, data[:DataLen]) {
			t.Fatalf("%s: decode → encode changed a field", id)
		}
	}
}

// checkIPPrivateDataFuzz decodes data as RDMA CM IP private data: it
// fails with nothing but ErrTruncated; what decodes prints, and, of a
// known major version and not IPv4, re-encodes to data's bytes after
// the first 4.
func checkIPPrivateDataFuzz(t *testing.T, data []byte) {
	t.Helper()
	p, err := DecodeIPPrivateData(data)
	if err != nil {
		if !errors.Is(err, ErrTruncated) {
			t.Fatalf("RDMA CM private data: %v", err)
		}
		return
	}
	_ = p.String()
	if p.MajorVersion > 0xF || p.IPVersion == 4 {
		return
	}
	enc, err := p.AppendBinary(nil)
	if err != nil {
		t.Fatalf("RDMA CM private data: %v", err)
	}
	if !bytes.Equal(enc[4:], data[4:len(enc)]) {
		t.Fatalf("RDMA CM private data does not re-encode")
	}
}

// onlyReservedDiffer reports whether a and b, two 232-byte forms of
// message id, differ only in reserved bits: masking both with the bits the
// encoder writes for an all-ones message gives equal bytes.
func onlyReservedDiffer(id AttributeID, a, b []byte) bool {
	ones := NewMessage(id)
	if err := ones.DecodeFromBytes(bytes.Repeat([]byte{0xff}, DataLen)); err != nil {
		return false
	}
	mask, err := ones.MarshalBinary()
	if err != nil {
		return false
	}
	for i := range a {
		if a[i]&mask[i] != b[i]&mask[i] {
			return false
		}
	}
	return true
}
