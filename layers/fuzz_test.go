package layers

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedFrames returns the golden frames (the IB ones, the ERSPAN III
// mirror frames and the MAC Control frames) and, when the shared captures
// are there, the vectors (read at run time, never copied into the
// repository), with their first layer type.
func seedFrames() (frames [][]byte, firsts []gopacket.LayerType) {
	for _, g := range goldenFrames {
		frames, firsts = append(frames, g.bytes()), append(firsts, g.first)
	}
	for _, g := range erspanGoldens {
		frames, firsts = append(frames, g.bytes()), append(firsts, gplayers.LayerTypeEthernet)
	}
	for _, g := range macControlGoldens {
		frames, firsts = append(frames, g.bytes()), append(firsts, gplayers.LayerTypeEthernet)
	}
	paths, _ := filepath.Glob(filepath.Join(capturesDir, "vectors", "0*.pcap"))
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		if r, err := pcapgo.NewReader(f); err == nil {
			if data, _, err := r.ReadPacketData(); err == nil {
				frames, firsts = append(frames, data), append(firsts, gplayers.LayerTypeEthernet)
			}
		}
		f.Close()
	}
	return frames, firsts
}

// layerSeeds returns, for every seed frame, the bytes from the start of
// each layer of type t to the end of the frame.
func layerSeeds(t gopacket.LayerType) [][]byte {
	var out [][]byte
	frames, firsts := seedFrames()
	for i, data := range frames {
		pkt := gopacket.NewPacket(data, firsts[i], gopacket.Default)
		for _, l := range pkt.Layers() {
			if l.LayerType() == t {
				out = append(out, data[offsetIn(data, l.LayerContents()):])
			}
		}
	}
	return out
}

// fuzzLayer is a layer under a round-trip fuzz test.
type fuzzLayer interface {
	gopacket.DecodingLayer
	gopacket.SerializableLayer
	LayerContents() []byte
}

// roundTrip decodes data into a fresh layer; when that succeeds it
// serializes it (with gopacket.SerializeLayers) in front of the layers
// holding what the decoding left after the header (rest, in wire order),
// decodes the result and expects the same values; exact
// says whether the bytes must also come back identical.
func roundTrip(t *testing.T, data []byte, newLayer func() fuzzLayer, df func() gopacket.DecodeFeedback, rest func(l fuzzLayer) []gopacket.SerializableLayer, exact bool) {
	l := newLayer()
	if err := l.DecodeFromBytes(data, df()); err != nil {
		return
	}
	want := header(l.(gopacket.Layer))
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, append([]gopacket.SerializableLayer{l}, rest(l)...)...))
	if exact {
		require.Equal(t, data[:len(buf.Bytes())], buf.Bytes())
	}
	back := newLayer()
	require.NoError(t, back.DecodeFromBytes(buf.Bytes(), df()))
	require.Equal(t, want, header(back.(gopacket.Layer)))
}

func noFeedback() gopacket.DecodeFeedback { return gopacket.NilDecodeFeedback }

// fuzzExt is the fuzz body of a fixed-size extension header.
func fuzzExt(f *testing.F, t gopacket.LayerType, newLayer func() fuzzLayer) {
	for _, s := range layerSeeds(t) {
		f.Add(s)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip(t, data, newLayer, noFeedback, func(l fuzzLayer) []gopacket.SerializableLayer { return raw(l.LayerPayload()) }, true)
	})
}

func FuzzRDETH(f *testing.F) {
	fuzzExt(f, LayerTypeRDETH, func() fuzzLayer { return &RDETH{} })
}

func FuzzDETH(f *testing.F) {
	fuzzExt(f, LayerTypeDETH, func() fuzzLayer { return &DETH{} })
}

func FuzzXRCETH(f *testing.F) {
	fuzzExt(f, LayerTypeXRCETH, func() fuzzLayer { return &XRCETH{} })
}

func FuzzRETH(f *testing.F) {
	fuzzExt(f, LayerTypeRETH, func() fuzzLayer { return &RETH{} })
}

func FuzzAtomicETH(f *testing.F) {
	fuzzExt(f, LayerTypeAtomicETH, func() fuzzLayer { return &AtomicETH{} })
}

func FuzzAETH(f *testing.F) {
	fuzzExt(f, LayerTypeAETH, func() fuzzLayer { return &AETH{} })
}

func FuzzAtomicAckETH(f *testing.F) {
	fuzzExt(f, LayerTypeAtomicAckETH, func() fuzzLayer { return &AtomicAckETH{} })
}

func FuzzImmDt(f *testing.F) {
	fuzzExt(f, LayerTypeImmDt, func() fuzzLayer { return &ImmDt{} })
}

func FuzzIETH(f *testing.F) {
	fuzzExt(f, LayerTypeIETH, func() fuzzLayer { return &IETH{} })
}

func FuzzFETH(f *testing.F) {
	fuzzExt(f, LayerTypeFETH, func() fuzzLayer { return &FETH{} })
}

func FuzzDCETH(f *testing.F) {
	fuzzExt(f, LayerTypeDCETH, func() fuzzLayer { return &DCETH{} })
}

func FuzzCNP(f *testing.F) {
	fuzzExt(f, LayerTypeCNP, func() fuzzLayer { return &CNP{} })
}

func FuzzICRC(f *testing.F) {
	fuzzExt(f, LayerTypeICRC, func() fuzzLayer { return &ICRC{} })
}

func FuzzVCRC(f *testing.F) {
	fuzzExt(f, LayerTypeVCRC, func() fuzzLayer { return &VCRC{} })
}

// FuzzBTH decodes a BTH as the start of a whole IB packet, with the layers
// below reporting truncation or not.
func FuzzBTH(f *testing.F) {
	for _, s := range layerSeeds(LayerTypeBTH) {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, truncated bool) {
		df := func() gopacket.DecodeFeedback { return &feedback{truncated: truncated} }
		rest := func(l fuzzLayer) []gopacket.SerializableLayer {
			b := l.(*BTH)
			if b.Trailer == nil {
				return raw(b.Payload)
			}
			// The BTH puts its Pad back in front of the ICRC layer.
			return []gopacket.SerializableLayer{gopacket.Payload(b.Payload), &ICRC{Value: binary.LittleEndian.Uint32(b.Trailer)}}
		}
		roundTrip(t, data, func() fuzzLayer { return &BTH{} }, df, rest, true)
		b := &BTH{}
		if b.DecodeFromBytes(data, df()) == nil {
			require.Equal(t, truncated, b.Truncated)
			require.LessOrEqual(t, len(b.Pad), 3)
			require.Equal(t, b.Headers(), b.chain[:len(b.Headers())])
			_ = CheckICRC(NetworkLRH, data[:min(len(data), LRHLen)], nil, b)
		}
		// Forced RD or DC decoding: never a panic, and DC only for 0x40–0x54.
		for _, mode := range []RDDecoding{RDDecodeRD, RDDecodeDC} {
			b := &BTH{DecodeRDAs: mode}
			if b.DecodeFromBytes(data, df()) == nil {
				require.Equal(t, mode == RDDecodeDC && b.Opcode >= 0x40 && b.Opcode <= 0x54, b.DC)
				require.Equal(t, b.Headers(), b.chain[:len(b.Headers())])
			}
		}
	})
}

// FuzzLRH decodes an LRH and the packet it bounds.
func FuzzLRH(f *testing.F) {
	for _, s := range layerSeeds(LayerTypeLRH) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rest := func(fuzzLayer) []gopacket.SerializableLayer { return raw(data[LRHLen:]) }
		roundTrip(t, data, func() fuzzLayer { return &LRH{} }, noFeedback, rest, true)
		l := &LRH{}
		if l.DecodeFromBytes(data, gopacket.NilDecodeFeedback) == nil {
			r := l.CheckVCRC()
			require.Equal(t, r.Status == ICRCUnverifiable, l.Trailer == nil)
		}
	})
}

// FuzzGRH decodes a GRH.
func FuzzGRH(f *testing.F) {
	for _, s := range layerSeeds(LayerTypeGRH) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rest := func(fuzzLayer) []gopacket.SerializableLayer { return raw(data[GRHLen:]) }
		roundTrip(t, data, func() fuzzLayer { return &GRH{} }, noFeedback, rest, true)
	})
}

// FuzzERF decodes an ERF record header (the 2-byte pad of an Ethernet
// record is written as zeros, so bytes are compared for other types only).
func FuzzERF(f *testing.F) {
	for _, s := range layerSeeds(LayerTypeERF) {
		f.Add(s)
	}
	f.Add(mustHex("0000000000000000 82 00 0020 0000 0008 0000000000000000 0000 0102030405060708"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e := &ERF{}
		if e.DecodeFromBytes(data, gopacket.NilDecodeFeedback) != nil {
			return
		}
		rest := func(fuzzLayer) []gopacket.SerializableLayer { return raw(data[len(e.Contents):]) }
		roundTrip(t, data, func() fuzzLayer { return &ERF{} }, noFeedback, rest, e.Type != ERFTypeEthernet)
	})
}

// FuzzERSPANIII decodes an ERSPAN type III header (and the mirrored frame
// after it, with gopacket.NewPacket, panics not recovered): a header that
// decodes serializes back to the same bytes and decodes to the same
// values, and its timestamp renders for any granularity.
func FuzzERSPANIII(f *testing.F) {
	for _, s := range layerSeeds(LayerTypeERSPANIII) {
		f.Add(s)
	}
	f.Add(mustHex("2000 0001 00000000 0000 0c01 0c000000 00000000 45"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip(t, data, func() fuzzLayer { return &ERSPANIII{} }, noFeedback, func(l fuzzLayer) []gopacket.SerializableLayer { return raw(l.LayerPayload()) }, true)
		gopacket.NewPacket(data, LayerTypeERSPANIII, gopacket.DecodeOptions{SkipDecodeRecovery: true})
		e := &ERSPANIII{}
		if e.DecodeFromBytes(data, gopacket.NilDecodeFeedback) == nil {
			_ = e.TimestampString()
			_ = e.NextLayerType()
			d, ok := e.TimestampDuration()
			require.True(t, ok || d == 0)
			require.GreaterOrEqual(t, d, time.Duration(0))
		}
	})
}

// FuzzMACControl decodes a MAC Control frame: one that decodes serializes
// back to the same bytes and decodes to the same values; Enabled and
// Quanta answer for any priority.
func FuzzMACControl(f *testing.F) {
	for _, s := range layerSeeds(LayerTypeMACControl) {
		f.Add(s)
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip(t, data, func() fuzzLayer { return &MACControl{} }, noFeedback, func(l fuzzLayer) []gopacket.SerializableLayer { return raw(l.LayerPayload()) }, true)
		gopacket.NewPacket(data, LayerTypeMACControl, gopacket.DecodeOptions{SkipDecodeRecovery: true})
		m := &MACControl{}
		if m.DecodeFromBytes(data, gopacket.NilDecodeFeedback) == nil {
			for p := -1; p <= 8; p++ {
				if !m.Enabled(p) && m.Opcode == MACControlOpcodePFC {
					require.True(t, p < 0 || p > 7 || m.ClassEnableVector&(1<<p) == 0)
				}
				_ = m.Quanta(p)
			}
		}
	})
}

// FuzzPacket decodes whole frames, starting at Ethernet, LRH, ERF, GRH or
// BTH, with gopacket.NewPacket (panics not recovered) and with a
// DecodingLayerParser: no panic; both agree on the BTH; a packet decoded
// without error re-serializes to bytes that decode to the same IB values.
func FuzzPacket(f *testing.F) {
	firstTypes := []gopacket.LayerType{gplayers.LayerTypeEthernet, LayerTypeLRH, LayerTypeERF, LayerTypeGRH, LayerTypeBTH}
	frames, firsts := seedFrames()
	for i, data := range frames {
		for k, ft := range firstTypes {
			if ft == firsts[i] {
				f.Add(data, uint8(k))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		first := firstTypes[int(which)%len(firstTypes)]
		pkt := gopacket.NewPacket(data, first, gopacket.DecodeOptions{SkipDecodeRecovery: true})
		parser, _, ib := newParser(first)
		parser.IgnorePanic = true
		parser.IgnoreUnsupported = true
		var decoded []gopacket.LayerType
		dlpErr := parser.DecodeLayers(data, &decoded)
		if bth, ok := pkt.Layer(LayerTypeBTH).(*BTH); ok && dlpErr == nil {
			for _, typ := range decoded {
				if typ == LayerTypeBTH {
					assert.Equal(t, bthHeader(bth), bthHeader(&ib.BTH))
					assert.Equal(t, bth.Truncated, ib.BTH.Truncated)
				}
			}
		}
		if pkt.ErrorLayer() != nil || pkt.Metadata().Truncated {
			return
		}
		if first == gplayers.LayerTypeEthernet && len(data) < 60 {
			return // gopacket's Ethernet pads what it serializes to 60 bytes
		}
		var ls []gopacket.SerializableLayer
		for _, l := range pkt.Layers() {
			s, ok := l.(gopacket.SerializableLayer)
			if !ok {
				return
			}
			ls = append(ls, s)
		}
		buf := gopacket.NewSerializeBuffer()
		if l, err := serializeLayers(buf, ls); err != nil {
			// gopacket's own layers refuse some of what they decode (an
			// IPv4 header length below 5, options that do not fill the
			// header, …): not ours, so the round trip ends there. A
			// layer of this package must write back what it decoded.
			require.False(t, isOurs(l), "%s decoded but does not serialize: %v", l.LayerType(), err)
			return
		}
		back := gopacket.NewPacket(buf.Bytes(), first, gopacket.DecodeOptions{SkipDecodeRecovery: true})
		if back.Metadata().Truncated && !bytes.Equal(buf.Bytes(), data) {
			// gopacket's IPv4/UDP drop bytes past the UDP length, so
			// the IP length now points past the end: not ours.
			return
		}
		require.Equal(t, ibLayers(pkt), ibLayers(back), "%x", buf.Bytes())
	})
}

// serializeLayers is gopacket.SerializeLayers that also tells which layer
// failed.
func serializeLayers(buf gopacket.SerializeBuffer, ls []gopacket.SerializableLayer) (gopacket.SerializableLayer, error) {
	if err := buf.Clear(); err != nil {
		return nil, err
	}
	for i := len(ls) - 1; i >= 0; i-- {
		if err := ls[i].SerializeTo(buf, gopacket.SerializeOptions{}); err != nil {
			return ls[i], err
		}
		buf.PushLayer(ls[i].LayerType())
	}
	return nil, nil
}

// isOurs reports whether a layer is one of this package's types.
func isOurs(l gopacket.SerializableLayer) bool {
	return l != nil && reflect.TypeOf(l).Elem().PkgPath() == reflect.TypeOf(BTH{}).PkgPath()
}

// raw returns b as the one layer that holds it.
func raw(b []byte) []gopacket.SerializableLayer {
	return []gopacket.SerializableLayer{gopacket.Payload(b)}
}
