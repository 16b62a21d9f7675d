package layers

import (
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestGoldenDecode decodes every golden frame with gopacket.NewPacket and
// checks every header field, the payload, and that ICRC (and VCRC) verify.
func TestGoldenDecode(t *testing.T) {
	for _, g := range goldenFrames {
		t.Run(g.name, func(t *testing.T) {
			pkt := gopacket.NewPacket(g.bytes(), g.first, gopacket.Default)
			require.Nil(t, pkt.ErrorLayer(), "decode error")
			assert.False(t, pkt.Metadata().Truncated)
			assert.Equal(t, headers(g.want), ibLayers(pkt))

			icrc, ok := pkt.Layer(LayerTypeICRC).(*ICRC)
			require.True(t, ok, "no ICRC layer")
			assert.Equal(t, ICRCOK, icrc.Status, "ICRC 0x%08x, computed 0x%08x", icrc.Value, icrc.Expected)
			assert.Equal(t, icrc.Value, icrc.Expected)
			if g.first != gplayers.LayerTypeEthernet {
				vcrc, ok := pkt.Layer(LayerTypeVCRC).(*VCRC)
				require.True(t, ok, "no VCRC layer")
				assert.Equal(t, ICRCOK, vcrc.Status, "VCRC 0x%04x, computed 0x%04x", vcrc.Value, vcrc.Expected)
			} else {
				assert.Nil(t, pkt.Layer(LayerTypeVCRC))
			}

			bth := pkt.Layer(LayerTypeBTH).(*BTH)
			assert.False(t, bth.Truncated)
			assert.Len(t, bth.Pad, int(bth.PadCnt))
			pl, _ := pkt.Layer(gopacket.LayerTypePayload).(*gopacket.Payload)
			plLen := 0
			if pl != nil {
				plLen = len(*pl)
				assert.Equal(t, pkt.ApplicationLayer(), gopacket.ApplicationLayer(pl))
			}
			assert.Equal(t, plLen, bth.PayloadLen())
			assert.Equal(t, bth.Opcode.HasPayload(), plLen > 0, "HasPayload")
			wire, ok := bth.ICRCValue()
			assert.True(t, ok)
			assert.Equal(t, icrc.Value, wire)
		})
	}
}

// TestGoldenDecodingLayerParser decodes every golden frame through a
// DecodingLayerParser with NewTransportLayers and checks the same values.
func TestGoldenDecodingLayerParser(t *testing.T) {
	for _, g := range goldenFrames {
		t.Run(g.name, func(t *testing.T) {
			parser, std, ib := newParser(g.first)
			var decoded []gopacket.LayerType
			require.NoError(t, parser.DecodeLayers(g.bytes(), &decoded))
			assert.False(t, parser.Truncated)
			var got []gopacket.Layer
			for _, typ := range decoded {
				if l := dlpLayer(ib, typ); l != nil {
					got = append(got, header(l))
				}
			}
			var want []gopacket.Layer
			for _, l := range g.want {
				if l.LayerType() != LayerTypeICRC && l.LayerType() != LayerTypeVCRC {
					want = append(want, header(l))
				}
			}
			assert.Equal(t, want, got)
			r := checkDLP(decoded, std, ib)
			assert.Equal(t, ICRCOK, r.Status, "ICRC 0x%08x, computed 0x%08x", r.Value, r.Expected)
			if g.first != gplayers.LayerTypeEthernet {
				assert.Equal(t, ICRCOK, ib.LRH.CheckVCRC().Status)
			}
		})
	}
}

// serializable returns the layers of pkt as SerializableLayers, in order,
// leaving out the check results (which are not layers of the wire).
func serializable(t *testing.T, pkt gopacket.Packet) []gopacket.SerializableLayer {
	var out []gopacket.SerializableLayer
	for _, l := range pkt.Layers() {
		s, ok := l.(gopacket.SerializableLayer)
		require.True(t, ok, "%s is not serializable", l.LayerType())
		out = append(out, s)
	}
	return out
}

// TestGoldenDecodeSerialize: decode → serialize gives the same bytes, both
// keeping the decoded checksums and recomputing them all.
func TestGoldenDecodeSerialize(t *testing.T) {
	for _, g := range goldenFrames {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			for _, compute := range []bool{false, true} {
				pkt := gopacket.NewPacket(data, g.first, gopacket.Default)
				require.Nil(t, pkt.ErrorLayer())
				ls := serializable(t, pkt)
				if compute {
					prepareChecksums(t, ls)
				}
				buf := gopacket.NewSerializeBuffer()
				opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: compute}
				require.NoError(t, gopacket.SerializeLayers(buf, opts, ls...))
				assert.Equal(t, data, buf.Bytes(), "ComputeChecksums %v", compute)
			}
		})
	}
}

// prepareChecksums zeroes every length and checksum of ls, so that
// FixLengths and ComputeChecksums must get them all back, and links the
// checksummed layers to their network layer.
func prepareChecksums(t *testing.T, ls []gopacket.SerializableLayer) {
	var net gopacket.NetworkLayer
	var udp *gplayers.UDP
	for _, l := range ls {
		switch v := l.(type) {
		case *gplayers.IPv4:
			v.Checksum, v.Length, v.IHL = 0, 0, 0
			net = v
		case *gplayers.IPv6:
			v.Length = 0
			net = v
		case *gplayers.UDP:
			v.Checksum, v.Length = 0, 0
			udp = v
			require.NoError(t, v.SetNetworkLayerForChecksum(net))
		case *BTH:
			v.PadCnt = 0
			if udp != nil {
				require.NoError(t, v.SetNetworkLayerForChecksum(net.(gopacket.SerializableLayer), udp))
			}
		case *GRH:
			v.PayLen = 0
		case *LRH:
			v.PktLen = 0
		case *ERF:
			v.RLen, v.WLen = 0, 0
		case *ICRC:
			v.Value = 0
		case *VCRC:
			v.Value = 0
		}
	}
}

// TestGoldenSerializeDecode builds every golden frame from its field values
// (the Ethernet/IP/UDP headers taken from the decoded frame), serializes it
// with FixLengths and ComputeChecksums — lengths, pad, ICRC and VCRC zeroed
// beforehand — expects the golden bytes, and decodes them back to the same
// values.
func TestGoldenSerializeDecode(t *testing.T) {
	for _, g := range goldenFrames {
		t.Run(g.name, func(t *testing.T) {
			data := g.bytes()
			pkt := gopacket.NewPacket(data, g.first, gopacket.Default)
			var ls []gopacket.SerializableLayer
			for _, l := range pkt.Layers() {
				switch l.(type) {
				case *gplayers.Ethernet, *gplayers.IPv4, *gplayers.IPv6, *gplayers.UDP:
					ls = append(ls, l.(gopacket.SerializableLayer))
				}
			}
			for _, l := range g.want {
				ls = append(ls, cloneLayer(l))
			}
			prepareChecksums(t, ls)
			buf := gopacket.NewSerializeBuffer()
			opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
			require.NoError(t, gopacket.SerializeLayers(buf, opts, ls...))
			require.Equal(t, data, buf.Bytes())

			// The serialized structs now hold the fixed lengths: equal to
			// the golden values and to what decoding gives.
			// (The ICRC and VCRC are written into the bytes, their
			// structs keep Value 0.)
			var built, want []gopacket.Layer
			for _, l := range ls {
				if h := header(l.(gopacket.Layer)); h != nil && !isCRC(h) {
					built = append(built, h)
				}
			}
			for _, l := range g.want {
				if !isCRC(l) {
					want = append(want, header(l))
				}
			}
			assert.Equal(t, want, built)
			back := gopacket.NewPacket(buf.Bytes(), g.first, gopacket.Default)
			require.Nil(t, back.ErrorLayer())
			assert.Equal(t, headers(g.want), ibLayers(back))
		})
	}
}

// cloneLayer returns a fresh copy of a golden layer, ready to serialize.
func cloneLayer(l gopacket.Layer) gopacket.SerializableLayer {
	switch v := l.(type) {
	case *BTH:
		return bthHeader(v)
	case *RDETH:
		c := *v
		return &c
	case *DETH:
		c := *v
		return &c
	case *XRCETH:
		c := *v
		return &c
	case *RETH:
		c := *v
		return &c
	case *AtomicETH:
		c := *v
		return &c
	case *AETH:
		c := *v
		return &c
	case *AtomicAckETH:
		c := *v
		return &c
	case *ImmDt:
		c := *v
		return &c
	case *IETH:
		c := *v
		return &c
	case *FETH:
		c := *v
		return &c
	case *CNP:
		c := *v
		return &c
	case *DCETH:
		c := *v
		return &c
	case *GRH:
		c := *v
		return &c
	case *LRH:
		c := *v
		return &c
	case *ERF:
		c := *v
		return &c
	case *ICRC:
		c := *v
		return &c
	case *VCRC:
		c := *v
		return &c
	case *gopacket.Payload:
		p := gopacket.Payload(append([]byte(nil), *v...))
		return &p
	}
	panic("cloneLayer: " + l.LayerType().String())
}

func isCRC(l gopacket.Layer) bool {
	return l.LayerType() == LayerTypeICRC || l.LayerType() == LayerTypeVCRC
}

// TestGoldenLazy: lazy decoding gives the same layers and ICRC verdicts.
func TestGoldenLazy(t *testing.T) {
	for _, g := range goldenFrames {
		pkt := gopacket.NewPacket(g.bytes(), g.first, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
		require.Nil(t, pkt.ErrorLayer(), g.name)
		assert.ElementsMatch(t, headers(g.want), ibLayers(pkt), g.name)
		assert.Equal(t, ICRCOK, pkt.Layer(LayerTypeICRC).(*ICRC).Status, g.name)
	}
}
