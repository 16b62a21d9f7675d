package layers

import (
	"errors"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goldenGeometry gives where, in a golden frame, the IB part starts and
// where its extension headers end.
type goldenGeometry struct {
	ibStart int // first byte of the first IB layer (ERF, LRH, GRH or BTH)
	hdrEnd  int // first byte after the last extension header
}

func geometryOf(t *testing.T, data []byte, first gopacket.LayerType) goldenGeometry {
	pkt := gopacket.NewPacket(data, first, gopacket.Default)
	require.Nil(t, pkt.ErrorLayer())
	var g goldenGeometry
	g.ibStart = -1
	for _, l := range pkt.Layers() {
		switch l.LayerType() {
		case LayerTypeERF, LayerTypeLRH, LayerTypeGRH, LayerTypeBTH:
			if g.ibStart < 0 {
				g.ibStart = offsetIn(data, l.LayerContents())
			}
		}
	}
	bth := pkt.Layer(LayerTypeBTH).(*BTH)
	g.hdrEnd = offsetIn(data, bth.Contents) + BTHLen + cutHeaderLen(bth)
	return g
}

// cutHeaderLen is the extension-header length of the packet of bth once cut
// by the snap length: an RD-range opcode that DC knows is then decoded as
// DC (RDDecodeAuto), even when the whole packet decodes as RD.
func cutHeaderLen(bth *BTH) int {
	if bth.Opcode.Transport() == TransportRD && dcTable[bth.Opcode.Operation()].known {
		return int(dcTable[bth.Opcode.Operation()].hdrLen)
	}
	return bth.HeaderLen()
}

// TestTruncatedPrefixes decodes every prefix of every golden frame, with
// NewPacket and with a DecodingLayerParser, panics not recovered. The
// rules:
//
//   - A prefix that ends before the IB part, in the Ethernet/IP/UDP headers,
//     gives gopacket's own error or truncation flag (or, cut exactly after
//     the Ethernet header, an Ethernet layer alone).
//   - A prefix that ends inside an IB header (ERF, LRH, GRH, BTH or an
//     extension header), or right after the ERF/LRH/GRH with nothing of
//     what follows, gives an error wrapping ErrTruncated, and the packet
//     is flagged truncated.
//   - A prefix that cuts only payload, pad, ICRC or VCRC decodes without
//     error; the packet and its BTH are flagged Truncated, there is no ICRC
//     layer (nothing to verify) and the payload is what was captured.
//     Exception: a LINKTYPE_INFINIBAND packet missing only (part of) its
//     VCRC is complete up to the ICRC, which verifies; it has no VCRC layer.
//
// Through a DecodingLayerParser the same holds, except that the parser stops
// silently (no error, Truncated set) when a header ends exactly where the
// data ends.
func TestTruncatedPrefixes(t *testing.T) {
	for _, g := range goldenFrames {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			geo := geometryOf(t, data, g.first)
			native := g.first != gplayers.LayerTypeEthernet
			parser, _, ib := newParser(g.first)
			parser.IgnorePanic = true
			var decoded []gopacket.LayerType
			for n := range len(data) {
				d := append([]byte(nil), data[:n]...)
				pkt := gopacket.NewPacket(d, g.first, gopacket.DecodeOptions{SkipDecodeRecovery: true})
				var err error
				if el := pkt.ErrorLayer(); el != nil {
					err = el.Error()
				}
				dlpErr := parser.DecodeLayers(d, &decoded)
				switch {
				case !native && n <= geo.ibStart:
					assert.True(t, err != nil || pkt.Metadata().Truncated || n == 14, "n=%d", n)
					assert.Nil(t, pkt.Layer(LayerTypeBTH), "n=%d", n)
				case n < geo.hdrEnd:
					assert.ErrorIs(t, err, ErrTruncated, "n=%d", n)
					assert.True(t, pkt.Metadata().Truncated, "n=%d", n)
					if dlpErr != nil {
						assert.ErrorIs(t, dlpErr, ErrTruncated, "n=%d", n)
					}
					assert.True(t, parser.Truncated, "n=%d", n)
				case g.first == LayerTypeLRH && n >= len(data)-VCRCLen:
					require.NoError(t, err, "n=%d", n)
					assert.False(t, pkt.Metadata().Truncated, "n=%d", n)
					assert.Nil(t, pkt.Layer(LayerTypeVCRC), "n=%d", n)
					assert.Equal(t, ICRCOK, pkt.Layer(LayerTypeICRC).(*ICRC).Status, "n=%d", n)
					require.NoError(t, dlpErr, "n=%d", n)
					assert.False(t, ib.BTH.Truncated, "n=%d", n)
				default:
					require.NoError(t, err, "n=%d", n)
					assert.True(t, pkt.Metadata().Truncated, "n=%d", n)
					bth := pkt.Layer(LayerTypeBTH).(*BTH)
					assert.True(t, bth.Truncated, "n=%d", n)
					assert.Nil(t, bth.Trailer, "n=%d", n)
					assert.Nil(t, pkt.Layer(LayerTypeICRC), "n=%d", n)
					_, ok := bth.ICRCValue()
					assert.False(t, ok)
					assert.Equal(t, ICRCUnverifiable, CheckICRC(NetworkIPv4, nil, nil, bth).Status)
					if n > geo.hdrEnd {
						end := n
						if native { // the LRH bounds the packet before the VCRC
							end = min(n, len(data)-VCRCLen)
						}
						assert.Equal(t, data[geo.hdrEnd:end], pkt.ApplicationLayer().Payload(), "n=%d", n)
					} else {
						assert.Nil(t, pkt.ApplicationLayer(), "n=%d", n)
					}
					require.NoError(t, dlpErr, "n=%d", n)
					assert.True(t, parser.Truncated, "n=%d", n)
					assert.True(t, ib.BTH.Truncated, "n=%d", n)
				}
			}
		})
	}
}

// TestBTHAlonePrefixes decodes prefixes of the IB part alone, with no layer
// below to say where the packet ends: the BTH then takes the data as the
// whole packet. Shorter than BTH + extension headers + ICRC is
// ErrTruncated; longer decodes (or reports a PadCnt that does not fit as
// ErrBadHeader), and the ICRC cannot be verified without a network header.
func TestBTHAlonePrefixes(t *testing.T) {
	for _, g := range goldenFrames {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			full := gopacket.NewPacket(data, g.first, gopacket.Default)
			bth := full.Layer(LayerTypeBTH).(*BTH)
			start := offsetIn(data, bth.Contents)
			ibEnd := start + len(bth.ICRCCovered()) + ICRCLen
			ibData := data[start:ibEnd]
			need := BTHLen + bth.HeaderLen() + ICRCLen
			rdNeed := BTHLen + opTable[bth.Opcode].hdrLen + ICRCLen
			for n := 0; n <= len(ibData); n++ {
				d := append([]byte(nil), ibData[:n]...)
				pkt := gopacket.NewPacket(d, LayerTypeBTH, gopacket.DecodeOptions{SkipDecodeRecovery: true})
				var err error
				if el := pkt.ErrorLayer(); el != nil {
					err = el.Error()
				}
				switch {
				case bth.DC && n >= int(rdNeed) && n < need:
					// Cut DC packets that hold the RD headers are RD packets
					// as far as anything in them can tell (RDDecodeAuto).
					assert.False(t, pkt.Layer(LayerTypeBTH).(*BTH).DC, "n=%d", n)
				case n < need:
					assert.ErrorIs(t, err, ErrTruncated, "n=%d", n)
				case err != nil:
					assert.ErrorIs(t, err, ErrBadHeader, "n=%d", n)
				default:
					icrc := pkt.Layer(LayerTypeICRC).(*ICRC)
					assert.Equal(t, ICRCUnverifiable, icrc.Status, "n=%d", n)
				}
			}
		})
	}
}

// TestHeaderErrorsWrapTruncated: each fixed-size header, given one byte
// less than it needs, reports ErrTruncated, sets the truncation flag and
// resets what an earlier decode left.
func TestHeaderErrorsWrapTruncated(t *testing.T) {
	full := make([]byte, 64)
	for i := range full {
		full[i] = byte(0xA0 + i)
	}
	// A valid LRH/GRH/ERF would bound the data; make their lengths fit.
	full[4], full[5] = 0, 16 // LRH PktLen 16 words, GRH PayLen 0x0010
	cases := []struct {
		l gopacket.DecodingLayer
		n int
	}{
		{&LRH{}, LRHLen}, {&GRH{}, GRHLen}, {&BTH{}, BTHLen}, {&ERF{}, ERFHeaderLen},
		{&RDETH{}, RDETHLen}, {&DETH{}, DETHLen}, {&XRCETH{}, XRCETHLen}, {&RETH{}, RETHLen},
		{&AtomicETH{}, AtomicETHLen}, {&AETH{}, AETHLen}, {&AtomicAckETH{}, AtomicAckETHLen},
		{&ImmDt{}, ImmDtLen}, {&IETH{}, IETHLen}, {&FETH{}, FETHLen}, {&CNP{}, CNPLen},
		{&ICRC{}, ICRCLen}, {&VCRC{}, VCRCLen},
	}
	for _, c := range cases {
		l := c.l.(gopacket.Layer)
		t.Run(l.LayerType().String(), func(t *testing.T) {
			data := full
			if l.LayerType() == LayerTypeERF {
				data = append([]byte(nil), full...)
				data[8] = ERFTypeInfiniBand // no extension headers
			}
			require.NoError(t, c.l.DecodeFromBytes(data, gopacket.NilDecodeFeedback))
			zero := header(reflectNew(l))
			for n := range c.n {
				df := &feedback{}
				err := c.l.DecodeFromBytes(data[:n], df)
				require.ErrorIs(t, err, ErrTruncated, "n=%d", n)
				assert.True(t, df.truncated, "n=%d", n)
				assert.Regexp(t, `^[a-z]+: truncated`, err.Error())
				if l.LayerType() != LayerTypeERF || n < ERFHeaderLen {
					assert.Equal(t, zero, header(l), "n=%d: stale fields", n)
				}
			}
		})
	}
}

// reflectNew returns a zero layer of the same type as l.
func reflectNew(l gopacket.Layer) gopacket.Layer {
	switch l.(type) {
	case *LRH:
		return &LRH{}
	case *GRH:
		return &GRH{SGID: nil, DGID: nil}
	case *BTH:
		return &BTH{}
	case *ERF:
		return &ERF{}
	case *RDETH:
		return &RDETH{}
	case *DETH:
		return &DETH{}
	case *XRCETH:
		return &XRCETH{}
	case *RETH:
		return &RETH{}
	case *AtomicETH:
		return &AtomicETH{}
	case *AETH:
		return &AETH{}
	case *AtomicAckETH:
		return &AtomicAckETH{}
	case *ImmDt:
		return &ImmDt{}
	case *IETH:
		return &IETH{}
	case *FETH:
		return &FETH{}
	case *CNP:
		return &CNP{}
	case *ICRC:
		return &ICRC{}
	case *VCRC:
		return &VCRC{}
	}
	panic(l.LayerType().String())
}

// feedback is a DecodeFeedback that remembers SetTruncated and can tell the
// BTH that the layers below found the packet truncated.
type feedback struct{ truncated bool }

func (f *feedback) SetTruncated()     { f.truncated = true }
func (f *feedback) IsTruncated() bool { return f.truncated }

// TestReuseNoStaleState decodes every golden frame (whole, and cut in the
// middle) into one DecodingLayerParser, then every other golden frame, and
// compares each decoded layer with a fresh decode.
func TestReuseNoStaleState(t *testing.T) {
	type result struct {
		headers  []gopacket.Layer
		contents [][]byte
		payloads [][]byte
		bth      BTH // the BTH's own state besides its header fields
		lrhTrail []byte
		err      error
		trunc    bool
	}
	decode := func(parser *gopacket.DecodingLayerParser, ib *TransportLayers, data []byte) result {
		var decoded []gopacket.LayerType
		var r result
		r.err = parser.DecodeLayers(data, &decoded)
		r.trunc = parser.Truncated
		for _, typ := range decoded {
			if l := dlpLayer(ib, typ); l != nil {
				r.headers = append(r.headers, header(l))
				r.contents = append(r.contents, l.LayerContents())
				r.payloads = append(r.payloads, l.LayerPayload())
				if typ == LayerTypeBTH {
					r.bth = BTH{Truncated: ib.BTH.Truncated, Trailer: ib.BTH.Trailer, Pad: ib.BTH.Pad,
						covered: ib.BTH.covered, chain: ib.BTH.chain, nChain: ib.BTH.nChain}
				}
				if typ == LayerTypeLRH {
					r.lrhTrail = ib.LRH.Trailer
				}
			}
		}
		return r
	}
	inputs := map[gopacket.LayerType][][]byte{}
	for _, g := range goldenFrames {
		data := g.bytes()
		inputs[g.first] = append(inputs[g.first], data, data[:len(data)*2/3], data[:len(data)-3])
	}
	for first, in := range inputs {
		parser, _, ib := newParser(first)
		for _, a := range in {
			for _, b := range in {
				decode(parser, ib, a)
				got := decode(parser, ib, b)
				freshParser, _, freshIB := newParser(first)
				want := decode(freshParser, freshIB, b)
				require.Equal(t, want, got, "%x after %x", b, a)
			}
		}
	}
}

// TestUnknownOpcode: a packet with an opcode outside the table gives its
// BTH and an error wrapping ErrUnknownOpcode; a DecodingLayerParser keeps
// what follows the BTH as payload.
func TestUnknownOpcode(t *testing.T) {
	for _, op := range []Opcode{0x18, 0x2C, 0x66, 0x82, 0xB8, 0xC0, 0xFF} {
		require.False(t, op.Known())
		data := goldenFrames[0].bytes() // RC SEND_ONLY, BTH at 42
		data[42] = byte(op)
		pkt := gopacket.NewPacket(data, gplayers.LayerTypeEthernet, gopacket.Default)
		bth, ok := pkt.Layer(LayerTypeBTH).(*BTH)
		require.True(t, ok, "opcode 0x%02x", op)
		assert.Equal(t, op, bth.Opcode)
		assert.Equal(t, uint32(0x11), bth.DestQP)
		require.NotNil(t, pkt.ErrorLayer())
		assert.True(t, errors.Is(pkt.ErrorLayer().Error(), ErrUnknownOpcode), "%v", pkt.ErrorLayer().Error())
		assert.Contains(t, pkt.ErrorLayer().Error().Error(), "unknown opcode")

		parser, _, ib := newParser(gplayers.LayerTypeEthernet)
		var decoded []gopacket.LayerType
		require.NoError(t, parser.DecodeLayers(data, &decoded))
		assert.Equal(t, []gopacket.LayerType{gplayers.LayerTypeEthernet, gplayers.LayerTypeIPv4,
			gplayers.LayerTypeUDP, LayerTypeBTH, gopacket.LayerTypePayload}, decoded)
		assert.Equal(t, op, ib.BTH.Opcode)
	}
}
