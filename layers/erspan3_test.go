package layers

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The mirrored packet of the ERSPAN golden frames: the golden frame "RC
// SEND_ONLY, 7-byte payload (PadCnt 1)", its Ethernet header, then its
// IPv4 packet (checksums and ICRC computed by testdata/golden_frames.py).
var (
	mirroredEthernet = []string{
		"020000000002 020000000001 0800", // Ethernet: dst 02:00:00:00:00:02, src 02:00:00:00:00:01, type 0x0800
	}
	mirroredIPv4 = []string{
		"45 02 0034 1234 4000 40 11 1481 0a000001 0a000002", // IPv4: total length 52, UDP, 10.0.0.1 -> 10.0.0.2
		"c000 12b7 0020 a748",                               // UDP: 49152 -> 4791, length 32
		"04 90 ffff 00 000011 80 000064",                    // BTH: SEND_ONLY, SE, PadCnt 1, P_Key 0xFFFF, DestQP 0x11, AckReq, PSN 100
		"68656c6c6f2121",                                    // payload "hello!!"
		"00",                                                // pad
		"4fab3807",                                          // ICRC
	}
)

// erspanGolden is a switch's mirror copy of a RoCE v2 packet, written
// field by field from draft-foschiano-erspan-03 §4.3 (the outer IPv4
// checksums computed by hand, RFC 791).
type erspanGolden struct {
	name  string
	hex   []string // outer Ethernet, IPv4, GRE, ERSPAN III header [, subheader]
	inner []string // the mirrored frame
	want  ERSPANIII
	next  gopacket.LayerType // the layer after the ERSPAN header
	dur   time.Duration      // TimestampDuration
	str   string             // TimestampString
}

func (g erspanGolden) bytes() []byte {
	return mustHex(strings.Join(append(append([]string(nil), g.hex...), g.inner...), ""))
}

var erspanGoldens = []erspanGolden{
	{
		name: "Ethernet, 100 µs granularity, no subheader",
		hex: []string{
			"020000000012 020000000011 0800",                    // Ethernet: switch -> collector, IPv4
			"45 00 006a 0101 4000 40 2f 2560 0a010001 0a010002", // IPv4: total length 106, ID 0x0101, DF, TTL 64, GRE (47), checksum, 10.1.0.1 -> 10.1.0.2
			"1000 22eb 00000007",                                // GRE: S bit, protocol 0x22EB, sequence 7
			"2064 6155",                                         // ERSPAN: Ver 2, VLAN 100 | COS 3, BSO 0, T 0, session 0x155
			"0001e240",                                          // Timestamp 123456
			"1234 8058",                                         // SGT 0x1234 | P 1, FT 0, HwID 5, D 1 (egress), Gra 0 (100 µs), O 0
		},
		inner: append(append([]string(nil), mirroredEthernet...), mirroredIPv4...),
		want: ERSPANIII{Version: 2, VLANIdentifier: 100, CoS: 3, SessionID: 0x155, Timestamp: 123456, SGT: 0x1234,
			P: true, FrameType: ERSPANFrameTypeEthernet, HardwareID: 5, Direction: true, Granularity: ERSPANGranularity100us},
		next: gplayers.LayerTypeEthernet,
		dur:  12345600 * time.Microsecond,
		str:  "12.3456s (100us)",
	},
	{
		name: "Ethernet, IEEE 1588 granularity, Platf ID 0x3 subheader",
		hex: []string{
			"020000000012 020000000011 0800",                    // Ethernet: switch -> collector, IPv4
			"45 00 0072 0102 4000 40 2f 2557 0a010001 0a010002", // IPv4: total length 114, ID 0x0102, DF, TTL 64, GRE (47), checksum, 10.1.0.1 -> 10.1.0.2
			"1000 22eb 00000008",                                // GRE: S bit, protocol 0x22EB, sequence 8
			"2abc b7ff",                                         // ERSPAN: Ver 2, VLAN 0xABC | COS 5, BSO 2 (oversized), T 1, session 0x3FF
			"075bcd15",                                          // Timestamp 123456789 (ns)
			"0000 03f5",                                         // SGT 0 | P 0, FT 0, HwID 0x3F, D 0 (ingress), Gra 2 (IEEE 1588), O 1
			"0c0000a5 6553f100",                                 // subheader: Platf ID 3, reserved, port index 165 | upper timestamp 1700000000
		},
		inner: append(append([]string(nil), mirroredEthernet...), mirroredIPv4...),
		want: ERSPANIII{Version: 2, VLANIdentifier: 0xABC, CoS: 5, BSO: 2, Truncated: true, SessionID: 0x3FF,
			Timestamp: 123456789, FrameType: ERSPANFrameTypeEthernet, HardwareID: 0x3F, Granularity: ERSPANGranularityIEEE1588,
			PlatformSubheader: true, PlatformID: 3, PlatformInfo: 0x000000a5_6553f100},
		next: gplayers.LayerTypeEthernet,
		dur:  1700000000*time.Second + 123456789,
		str:  (1700000000*time.Second + 123456789).String() + " (IEEE1588)",
	},
	{
		name: "IP frame type, 100 ns granularity",
		hex: []string{
			"020000000012 020000000011 0800",                    // Ethernet: switch -> collector, IPv4
			"45 00 005c 0103 4000 40 2f 256c 0a010001 0a010002", // IPv4: total length 92, ID 0x0103, DF, TTL 64, GRE (47), checksum, 10.1.0.1 -> 10.1.0.2
			"1000 22eb 00000009",                                // GRE: S bit, protocol 0x22EB, sequence 9
			"2000 0001",                                         // ERSPAN: Ver 2, VLAN 0 | COS 0, BSO 0, T 0, session 1
			"ffffffff",                                          // Timestamp 0xFFFFFFFF
			"0000 0812",                                         // SGT 0 | P 0, FT 2 (IP), HwID 1, D 0, Gra 1 (100 ns), O 0
		},
		inner: mirroredIPv4,
		want: ERSPANIII{Version: 2, SessionID: 1, Timestamp: 0xFFFFFFFF, FrameType: ERSPANFrameTypeIP, HardwareID: 1,
			Granularity: ERSPANGranularity100ns},
		next: gplayers.LayerTypeIPv4,
		dur:  0xFFFFFFFF * 100 * time.Nanosecond,
		str:  (0xFFFFFFFF * 100 * time.Nanosecond).String() + " (100ns)",
	},
}

// erspanOffset is where the ERSPAN header starts in a golden frame.
func (g erspanGolden) erspanOffset() int { return 14 + 20 + 8 }

// ipv4HeaderChecksum is the RFC 791 checksum over an IPv4 header: 0 when
// the header's own checksum is right.
func ipv4HeaderChecksum(h []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(h); i += 2 {
		s += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	return ^uint16(s)
}

// TestERSPANIIIGolden decodes each golden mirror frame with
// gopacket.NewPacket: every ERSPAN field, the layers in order, and the
// mirrored RoCE packet's BTH, payload and ICRC (ok: it covers the inner
// IPv4/UDP, the last network layer).
func TestERSPANIIIGolden(t *testing.T) {
	for _, g := range erspanGoldens {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			require.Zero(t, ipv4HeaderChecksum(data[14:34]), "outer IPv4 checksum")
			pkt := gopacket.NewPacket(data, gplayers.LayerTypeEthernet, gopacket.Default)
			require.Nil(t, pkt.ErrorLayer())
			assert.False(t, pkt.Metadata().Truncated)

			gre := pkt.Layer(gplayers.LayerTypeGRE).(*gplayers.GRE)
			assert.Equal(t, EthernetTypeERSPANIII, gre.Protocol)
			e, ok := pkt.Layer(LayerTypeERSPANIII).(*ERSPANIII)
			require.True(t, ok, "no ERSPAN III layer")
			assert.Equal(t, &g.want, header(e))
			assert.Equal(t, g.next, e.NextLayerType())
			assert.Equal(t, data[g.erspanOffset():g.erspanOffset()+len(e.Contents)], e.Contents)
			assert.Equal(t, mustHex(strings.Join(g.inner, "")), e.Payload)

			var types []gopacket.LayerType
			for _, l := range pkt.Layers() {
				types = append(types, l.LayerType())
			}
			want := []gopacket.LayerType{gplayers.LayerTypeEthernet, gplayers.LayerTypeIPv4, gplayers.LayerTypeGRE, LayerTypeERSPANIII}
			if g.next == gplayers.LayerTypeEthernet {
				want = append(want, gplayers.LayerTypeEthernet)
			}
			want = append(want, gplayers.LayerTypeIPv4, gplayers.LayerTypeUDP, LayerTypeBTH, gopacket.LayerTypePayload, LayerTypeICRC)
			assert.Equal(t, want, types)

			bth := pkt.Layer(LayerTypeBTH).(*BTH)
			assert.Equal(t, &BTH{Opcode: 0x04, SolicitedEvent: true, PadCnt: 1, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 100}, bthHeader(bth))
			assert.Equal(t, "hello!!", string(pkt.ApplicationLayer().Payload()))
			icrc := pkt.Layer(LayerTypeICRC).(*ICRC)
			assert.Equal(t, ICRCOK, icrc.Status, "ICRC 0x%08x, computed 0x%08x", icrc.Value, icrc.Expected)
			assert.Equal(t, uint32(0x0738AB4F), icrc.Value)

			d, ok := e.TimestampDuration()
			assert.True(t, ok)
			assert.Equal(t, g.dur, d)
			assert.Equal(t, g.str, e.TimestampString())
		})
	}
}

// erspanParser returns a DecodingLayerParser for mirror frames: the
// standard layers, GRE, ERSPAN III and every IB layer.
func erspanParser() (*gopacket.DecodingLayerParser, *stdLayers, *gplayers.GRE, *ERSPANIII, *TransportLayers) {
	std := &stdLayers{}
	gre := &gplayers.GRE{}
	e := &ERSPANIII{}
	ib := NewTransportLayers()
	dl := append([]gopacket.DecodingLayer{&std.eth, &std.ip4, &std.ip6, &std.udp, gre, e}, ib.DecodingLayers()...)
	return gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet, dl...), std, gre, e, ib
}

// TestERSPANIIIDecodingLayerParser decodes the golden mirror frames in a
// DecodingLayerParser: the same fields, the inner ICRC verified, and no
// allocation per packet.
func TestERSPANIIIDecodingLayerParser(t *testing.T) {
	for _, g := range erspanGoldens {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			parser, std, _, e, ib := erspanParser()
			decoded := make([]gopacket.LayerType, 0, 16)
			require.NoError(t, parser.DecodeLayers(data, &decoded))
			assert.False(t, parser.Truncated)
			assert.Contains(t, decoded, LayerTypeERSPANIII)
			assert.Equal(t, &g.want, header(e))
			assert.Equal(t, uint32(100), ib.BTH.PSN)
			// The parser's single IPv4 layer holds the inner header last.
			assert.Equal(t, ICRCOK, checkDLP(decoded, std, ib).Status)

			allocs := testing.AllocsPerRun(100, func() {
				_ = parser.DecodeLayers(data, &decoded)
			})
			assert.Zero(t, allocs)
		})
	}
}

// TestERSPANIIIRoundTrip: the decoded golden headers serialize to the same
// bytes, and built headers come back field for field.
func TestERSPANIIIRoundTrip(t *testing.T) {
	for _, g := range erspanGoldens {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			e := &ERSPANIII{}
			require.NoError(t, e.DecodeFromBytes(data[g.erspanOffset():], gopacket.NilDecodeFeedback))
			buf := gopacket.NewSerializeBuffer()
			require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, e, gopacket.Payload(e.Payload)))
			assert.Equal(t, data[g.erspanOffset():], buf.Bytes())
		})
	}
	built := []ERSPANIII{
		{Version: 2},
		{Version: 2, VLANIdentifier: 0xFFF, CoS: 7, BSO: 3, Truncated: true, SessionID: 0x3FF, Timestamp: 0xFFFFFFFF, SGT: 0xFFFF,
			P: true, FrameType: 0x1F, HardwareID: 0x3F, Direction: true, Granularity: ERSPANGranularityCustom},
		{Version: 2, PlatformSubheader: true, PlatformID: 0x3F, PlatformInfo: 1<<58 - 1},
		{Version: 2, FrameType: ERSPANFrameTypeIP, PlatformSubheader: true, PlatformID: 5, PlatformInfo: 0x0123_4567_89ab_cdef & (1<<58 - 1)},
	}
	for _, want := range built {
		buf := gopacket.NewSerializeBuffer()
		require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{}, &want, gopacket.Payload("rest")))
		n := ERSPANIIIHeaderLen
		if want.PlatformSubheader {
			n += ERSPANIIIPlatformLen
		}
		require.Len(t, buf.Bytes(), n+4)
		got := &ERSPANIII{}
		require.NoError(t, got.DecodeFromBytes(buf.Bytes(), gopacket.NilDecodeFeedback))
		assert.Equal(t, header(&want), header(got))
		assert.Equal(t, []byte("rest"), got.Payload)
	}
}

// TestERSPANIIISerialize: a zero Version is written as 2, the O bit
// follows PlatformSubheader (the subheader is not written without it), and
// fields too wide for their bits are refused.
func TestERSPANIIISerialize(t *testing.T) {
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, (&ERSPANIII{SessionID: 7, PlatformID: 3, PlatformInfo: 9}).SerializeTo(buf, gopacket.SerializeOptions{}))
	assert.Equal(t, mustHex("2000 0007 00000000 0000 0000"), buf.Bytes())
	buf = gopacket.NewSerializeBuffer()
	require.NoError(t, (&ERSPANIII{Version: 2, PlatformSubheader: true, PlatformID: 3, PlatformInfo: 9}).SerializeTo(buf, gopacket.SerializeOptions{}))
	assert.Equal(t, mustHex("2000 0000 00000000 0000 0001 0c000000 00000009"), buf.Bytes())

	bad := []struct {
		name string
		e    ERSPANIII
	}{
		{"version", ERSPANIII{Version: 16}},
		{"VLAN", ERSPANIII{VLANIdentifier: 0x1000}},
		{"COS", ERSPANIII{CoS: 8}},
		{"BSO", ERSPANIII{BSO: 4}},
		{"session", ERSPANIII{SessionID: 0x400}},
		{"frame type", ERSPANIII{FrameType: 0x20}},
		{"hardware ID", ERSPANIII{HardwareID: 0x40}},
		{"granularity", ERSPANIII{Granularity: 4}},
		{"platform ID", ERSPANIII{PlatformSubheader: true, PlatformID: 0x40}},
		{"platform info", ERSPANIII{PlatformSubheader: true, PlatformInfo: 1 << 58}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			err := c.e.SerializeTo(gopacket.NewSerializeBuffer(), gopacket.SerializeOptions{})
			assert.ErrorIs(t, err, ErrFieldRange)
		})
	}
}

// TestERSPANIIITimestamp renders the timestamp for each granularity, with
// and without the upper 32 bits of a Platf ID 0x3 or 0x7 subheader.
func TestERSPANIIITimestamp(t *testing.T) {
	sub := func(id uint8, upper uint32) ERSPANIII {
		return ERSPANIII{PlatformSubheader: true, PlatformID: id, PlatformInfo: 0x2A<<32 | uint64(upper)}
	}
	cases := []struct {
		name  string
		e     ERSPANIII
		upper int64 // -1: none
		dur   time.Duration
		ok    bool
		str   string
	}{
		{"100us", ERSPANIII{Timestamp: 10}, -1, time.Millisecond, true, "1ms (100us)"},
		{"100ns", ERSPANIII{Timestamp: 10, Granularity: ERSPANGranularity100ns}, -1, time.Microsecond, true, "1µs (100ns)"},
		{"100ns, upper word (Platf ID 3)", func() ERSPANIII {
			e := sub(3, 1)
			e.Granularity, e.Timestamp = ERSPANGranularity100ns, 0
			return e
		}(), 1, 1 << 32 * 100 * time.Nanosecond, true, (1 << 32 * 100 * time.Nanosecond).String() + " (100ns)"},
		{"100us, upper word overflows", func() ERSPANIII { e := sub(7, 0xFFFFFFFF); return e }(), 0xFFFFFFFF, 0, false, "0x00000000 (100us)"},
		{"IEEE 1588, ns of the second", ERSPANIII{Timestamp: 250_000_000, Granularity: ERSPANGranularityIEEE1588}, -1,
			250 * time.Millisecond, true, "250ms (IEEE1588, ns of the second)"},
		{"IEEE 1588, seconds (Platf ID 7)", func() ERSPANIII {
			e := sub(7, 2)
			e.Granularity, e.Timestamp = ERSPANGranularityIEEE1588, 500_000_000
			return e
		}(), 2, 2500 * time.Millisecond, true, "2.5s (IEEE1588)"},
		{"IEEE 1588, not nanoseconds", ERSPANIII{Timestamp: 1_000_000_000, Granularity: ERSPANGranularityIEEE1588}, -1,
			0, false, "0x3b9aca00 (IEEE1588)"},
		{"custom", ERSPANIII{Timestamp: 123456, Granularity: ERSPANGranularityCustom}, -1, 0, false, "0x0001e240 (custom)"},
		{"Platf ID 5 carries no upper word", func() ERSPANIII { e := sub(5, 9); e.Timestamp = 10; return e }(), -1,
			time.Millisecond, true, "1ms (100us)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u, ok := c.e.UpperTimestamp()
			assert.Equal(t, c.upper >= 0, ok)
			if ok {
				assert.Equal(t, uint32(c.upper), u)
			}
			d, ok := c.e.TimestampDuration()
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.dur, d)
			assert.Equal(t, c.str, c.e.TimestampString())
		})
	}
}

// TestERSPANIIIErrors: a version other than 2 is ErrBadHeader; data shorter
// than the header, or than the header and the subheader it announces, is
// ErrTruncated with the truncation flag, at every length, and resets what
// an earlier decode left.
func TestERSPANIIIErrors(t *testing.T) {
	for _, ver := range []byte{0, 1, 3, 15} {
		data := mustHex("2064 6155 0001e240 1234 8058")
		data[0] = ver<<4 | data[0]&0x0F
		e := &ERSPANIII{}
		df := &feedback{}
		err := e.DecodeFromBytes(data, df)
		assert.ErrorIs(t, err, ErrBadHeader, "version %d", ver)
		assert.False(t, df.truncated)
		pkt := gopacket.NewPacket(append(mustHex("1000 22eb 00000001"), data...), gplayers.LayerTypeGRE, gopacket.Default)
		require.NotNil(t, pkt.ErrorLayer())
		assert.ErrorIs(t, pkt.ErrorLayer().Error(), ErrBadHeader)
		assert.Nil(t, pkt.Layer(LayerTypeERSPANIII))
	}
	for _, g := range erspanGoldens {
		hdr := g.bytes()[g.erspanOffset():]
		e := &ERSPANIII{}
		require.NoError(t, e.DecodeFromBytes(hdr, gopacket.NilDecodeFeedback))
		hdrLen := len(e.Contents)
		for n := range hdrLen {
			df := &feedback{}
			err := e.DecodeFromBytes(append([]byte(nil), hdr[:n]...), df)
			require.ErrorIs(t, err, ErrTruncated, "%s: n=%d", g.name, n)
			assert.True(t, df.truncated, "n=%d", n)
			assert.False(t, errors.Is(err, ErrBadHeader))
			if n < ERSPANIIIHeaderLen {
				assert.Equal(t, ERSPANIII{}, *e, "n=%d: fields reset", n)
			}
		}
	}
}

// TestERSPANIIIPrefixes decodes every prefix of every golden mirror frame
// with gopacket.NewPacket (panics not recovered) and a DecodingLayerParser:
// cut inside the ERSPAN header (and subheader) it is ErrTruncated and the
// packet is flagged truncated; cut after it, the mirrored packet decodes
// as far as it goes (a cut RoCE payload leaves the ICRC unverifiable).
func TestERSPANIIIPrefixes(t *testing.T) {
	for _, g := range erspanGoldens {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			start := g.erspanOffset()
			end := start + ERSPANIIIHeaderLen
			if g.want.PlatformSubheader {
				end += ERSPANIIIPlatformLen
			}
			parser, _, _, _, _ := erspanParser()
			parser.IgnorePanic = true
			var decoded []gopacket.LayerType
			for n := range len(data) {
				d := append([]byte(nil), data[:n]...)
				pkt := gopacket.NewPacket(d, gplayers.LayerTypeEthernet, gopacket.DecodeOptions{SkipDecodeRecovery: true})
				var err error
				if el := pkt.ErrorLayer(); el != nil {
					err = el.Error()
				}
				dlpErr := parser.DecodeLayers(d, &decoded)
				switch {
				case n <= start:
					assert.Nil(t, pkt.Layer(LayerTypeERSPANIII), "n=%d", n)
				case n < end:
					assert.ErrorIs(t, err, ErrTruncated, "n=%d", n)
					assert.ErrorIs(t, dlpErr, ErrTruncated, "n=%d", n)
					assert.True(t, pkt.Metadata().Truncated, "n=%d", n)
					assert.Nil(t, pkt.Layer(LayerTypeERSPANIII), "n=%d", n)
				default:
					e, ok := pkt.Layer(LayerTypeERSPANIII).(*ERSPANIII)
					require.True(t, ok, "n=%d", n)
					assert.Equal(t, &g.want, header(e), "n=%d", n)
					if icrc, ok := pkt.Layer(LayerTypeICRC).(*ICRC); ok {
						assert.Equal(t, ICRCOK, icrc.Status, "n=%d", n)
					}
				}
			}
		})
	}
}

// TestERSPANIIINextLayer covers the frame types: Ethernet, IP by version
// nibble, anything else (or an empty IP payload) as raw payload.
func TestERSPANIIINextLayer(t *testing.T) {
	cases := []struct {
		ft      ERSPANFrameType
		payload []byte
		want    gopacket.LayerType
	}{
		{ERSPANFrameTypeEthernet, nil, gplayers.LayerTypeEthernet},
		{ERSPANFrameTypeIP, []byte{0x45}, gplayers.LayerTypeIPv4},
		{ERSPANFrameTypeIP, []byte{0x60}, gplayers.LayerTypeIPv6},
		{ERSPANFrameTypeIP, []byte{0x10}, gopacket.LayerTypePayload},
		{ERSPANFrameTypeIP, nil, gopacket.LayerTypePayload},
		{1, []byte{0x45}, gopacket.LayerTypePayload},
		{0x1F, nil, gopacket.LayerTypePayload},
	}
	for _, c := range cases {
		e := &ERSPANIII{FrameType: c.ft}
		e.Payload = c.payload
		assert.Equal(t, c.want, e.NextLayerType(), "FT %s, payload %x", c.ft, c.payload)
	}
	assert.Equal(t, "reserved_1", ERSPANFrameType(1).String())
	// A reserved frame type leaves the mirrored bytes as the payload.
	data := mustHex("1000 22eb 00000001 2000 0001 00000000 0000 0400 0102030405")
	pkt := gopacket.NewPacket(data, gplayers.LayerTypeGRE, gopacket.Default)
	require.Nil(t, pkt.ErrorLayer())
	assert.Equal(t, mustHex("0102030405"), pkt.ApplicationLayer().Payload())
}

// mirrorFrame serializes, with this package's and gopacket's serializers,
// a RoCE v2 RDMA WRITE ONLY of payload mirrored by a switch: Ethernet,
// IPv4, GRE (sequence number), e, then the mirrored Ethernet frame (or,
// for frame type IP, its IPv4 packet); checksums and the ICRC computed.
func mirrorFrame(t *testing.T, e *ERSPANIII, seq uint32, payload string) []byte {
	t.Helper()
	ip, _, roce := edgeLayers(t, payload)
	ip.Id = uint16(seq)
	inner := append(roce, &ICRC{})
	if e.FrameType == ERSPANFrameTypeIP {
		inner = inner[1:]
	}
	outer := []gopacket.SerializableLayer{
		&gplayers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 0x11}, DstMAC: []byte{2, 0, 0, 0, 0, 0x12}, EthernetType: gplayers.EthernetTypeIPv4},
		&gplayers.IPv4{Version: 4, TTL: 64, Id: uint16(seq), Protocol: gplayers.IPProtocolGRE, SrcIP: []byte{10, 1, 0, 1}, DstIP: []byte{10, 1, 0, 2}},
		&gplayers.GRE{SeqPresent: true, Seq: seq, Protocol: EthernetTypeERSPANIII},
		e,
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	require.NoError(t, gopacket.SerializeLayers(buf, opts, append(outer, inner...)...))
	return buf.Bytes()
}

// TestTsharkERSPANIII serializes mirror frames and requires tshark to read
// the same ERSPAN III fields (Wireshark's names), the platform subheader
// of Platf ID 3, and the mirrored packet's BTH; our decoding of the same
// bytes gives the same values, and the inner ICRC verifies.
func TestTsharkERSPANIII(t *testing.T) {
	headers := []*ERSPANIII{
		{Version: 2, VLANIdentifier: 100, CoS: 3, SessionID: 0x155, Timestamp: 123456, SGT: 0x1234, P: true, HardwareID: 5, Direction: true},
		{Version: 2, VLANIdentifier: 0xABC, CoS: 5, BSO: 2, Truncated: true, SessionID: 0x3FF, Timestamp: 123456789, HardwareID: 0x3F,
			Granularity: ERSPANGranularityIEEE1588, PlatformSubheader: true, PlatformID: 3, PlatformInfo: 0xA5<<32 | 1700000000},
		{Version: 2, SessionID: 1, Timestamp: 0xFFFFFFFF, SGT: 0xFFFF, HardwareID: 1, Granularity: ERSPANGranularity100ns,
			PlatformSubheader: true, PlatformID: 3, PlatformInfo: 0x3FFF<<32 | 0xFFFFFFFF},
		{Version: 2, VLANIdentifier: 0xFFF, CoS: 7, BSO: 3, SessionID: 0x200, Timestamp: 1, FrameType: ERSPANFrameTypeIP, HardwareID: 0x2A,
			Direction: true, Granularity: ERSPANGranularityCustom},
	}
	type field struct {
		name string
		get  func(e *ERSPANIII) (uint64, bool)
	}
	b := func(v bool) uint64 {
		if v {
			return 1
		}
		return 0
	}
	always := func(f func(e *ERSPANIII) uint64) func(*ERSPANIII) (uint64, bool) {
		return func(e *ERSPANIII) (uint64, bool) { return f(e), true }
	}
	pid3 := func(f func(e *ERSPANIII) uint64) func(*ERSPANIII) (uint64, bool) {
		return func(e *ERSPANIII) (uint64, bool) { return f(e), e.PlatformSubheader && e.PlatformID == 3 }
	}
	fields := []field{
		{"erspan.version", always(func(e *ERSPANIII) uint64 { return uint64(e.Version) })},
		{"erspan.vlan", always(func(e *ERSPANIII) uint64 { return uint64(e.VLANIdentifier) })},
		{"erspan.cos", always(func(e *ERSPANIII) uint64 { return uint64(e.CoS) })},
		{"erspan.bso", always(func(e *ERSPANIII) uint64 { return uint64(e.BSO) })},
		{"erspan.truncated", always(func(e *ERSPANIII) uint64 { return b(e.Truncated) })},
		{"erspan.spanid", always(func(e *ERSPANIII) uint64 { return uint64(e.SessionID) })},
		{"erspan.timestamp", always(func(e *ERSPANIII) uint64 { return uint64(e.Timestamp) })},
		{"erspan.sgt", always(func(e *ERSPANIII) uint64 { return uint64(e.SGT) })},
		{"erspan.p", always(func(e *ERSPANIII) uint64 { return b(e.P) })},
		{"erspan.ft", always(func(e *ERSPANIII) uint64 { return uint64(e.FrameType) })},
		{"erspan.hw", always(func(e *ERSPANIII) uint64 { return uint64(e.HardwareID) })},
		{"erspan.direction", always(func(e *ERSPANIII) uint64 { return b(e.Direction) })},
		{"erspan.gra", always(func(e *ERSPANIII) uint64 { return uint64(e.Granularity) })},
		{"erspan.o", always(func(e *ERSPANIII) uint64 { return b(e.PlatformSubheader) })},
		{"erspan.platid", func(e *ERSPANIII) (uint64, bool) { return uint64(e.PlatformID), e.PlatformSubheader }},
		{"erspan.pid3.port_index", pid3(func(e *ERSPANIII) uint64 { return e.PlatformInfo >> 32 & 0x3FFF })},
		{"erspan.pid3.timestamp", pid3(func(e *ERSPANIII) uint64 { u, _ := e.UpperTimestamp(); return uint64(u) })},
	}
	names := []string{"gre.proto", "infiniband.bth.psn"}
	for _, f := range fields {
		names = append(names, f.name)
	}
	var frames [][]byte
	for i, h := range headers {
		frames = append(frames, mirrorFrame(t, h, uint32(i+1), "mirrored"))
	}
	rows := tsharkColumns(t, frames, names...)
	compared := 0
	for i, row := range rows {
		pkt := gopacket.NewPacket(frames[i], gplayers.LayerTypeEthernet, gopacket.Default)
		require.Nil(t, pkt.ErrorLayer(), "frame %d", i+1)
		e := pkt.Layer(LayerTypeERSPANIII).(*ERSPANIII)
		assert.Equal(t, header(headers[i]), header(e), "frame %d", i+1)
		assert.Equal(t, ICRCOK, pkt.Layer(LayerTypeICRC).(*ICRC).Status, "frame %d", i+1)
		assert.Equal(t, uint64(EthernetTypeERSPANIII), tsharkUint(t, row[0]), "frame %d: gre.proto", i+1)
		if e.FrameType == ERSPANFrameTypeEthernet {
			// Wireshark 4.0 hands only Ethernet mirror frames on.
			assert.Equal(t, uint64(7), tsharkUint(t, row[1]), "frame %d: infiniband.bth.psn", i+1)
		}
		for k, f := range fields {
			want, ok := f.get(e)
			ws := row[k+2]
			if !ok {
				assert.Empty(t, ws, "frame %d: %s absent for us", i+1, f.name)
				continue
			}
			require.NotEmpty(t, ws, "frame %d: %s absent for tshark", i+1, f.name)
			assert.Equal(t, want, tsharkUint(t, ws), "frame %d: %s", i+1, f.name)
			compared++
		}
	}
	t.Logf("%d field values equal to tshark's", compared)
}
