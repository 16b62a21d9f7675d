package cm

import (
	"errors"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

func TestLayerTypeIsLayers(t *testing.T) {
	assert.Equal(t, layers.LayerTypeMAD, LayerTypeMAD)
	assert.Equal(t, 1916, int(LayerTypeMAD))
	assert.Equal(t, "MAD", LayerTypeMAD.String())
	var m MAD
	assert.Equal(t, LayerTypeMAD, m.LayerType())
	assert.True(t, m.CanDecode().Contains(LayerTypeMAD))
	assert.Equal(t, gopacket.LayerTypeZero, m.NextLayerType())
}

// firstLayer returns the gopacket decoder for a pcap link type.
func firstLayer(t *testing.T, linkType int) gopacket.Decoder {
	switch linkType {
	case 1:
		return gplayers.LayerTypeEthernet
	case int(layers.LinkTypeERF):
		return layers.LinkTypeERF
	}
	t.Fatalf("link type %d", linkType)
	return nil
}

// TestNewPacketReachesMessages: through gopacket.NewPacket and package
// layers, every QP0/QP1 packet of the captures has a MAD layer equal to the
// MAD the minimal parser finds, and the CM message is reachable from it.
func TestNewPacketReachesMessages(t *testing.T) {
	for _, name := range []string{"softroce/rdma_cm.pcap", "softroce/rping.pcap", "ib-erf/infiniband.pcap"} {
		t.Run(name, func(t *testing.T) {
			frames, lt := readFrames(t, capturePath(t, name))
			want := map[int][]byte{}
			for _, c := range capturedMADs(t, name) {
				want[c.frame] = c.mad
			}
			got := 0
			for i, fr := range frames {
				p := gopacket.NewPacket(fr, firstLayer(t, lt), gopacket.Default)
				l := p.Layer(LayerTypeMAD)
				mad, isMAD := want[i+1]
				if !isMAD {
					assert.Nil(t, l, "frame %d has no MAD", i+1)
					continue
				}
				require.NotNil(t, l, "frame %d: MAD layer; layers: %v; error: %v", i+1, p.Layers(), p.ErrorLayer())
				m, ok := l.(*MAD)
				require.True(t, ok, "frame %d: %T", i+1, l)
				got++
				assert.Equal(t, mad, m.LayerContents(), "frame %d", i+1)
				assert.Nil(t, p.ErrorLayer(), "frame %d", i+1)
				var direct MAD
				require.NoError(t, direct.Decode(mad))
				assert.Equal(t, direct.Header, m.Header)
				if direct.Header.MgmtClass == ClassCM {
					require.NotNil(t, m.CM(), "frame %d", i+1)
					assert.Equal(t, direct.CM(), m.CM(), "frame %d", i+1)
				}
			}
			assert.Equal(t, len(want), got)
		})
	}
}

// TestNewPacketTruncatedMAD cuts the first REQ frame of rdma_cm.pcap at
// several snap lengths: the MAD header decodes when present, the REQ when
// its fixed fields are, and the packet reports the truncation.
func TestNewPacketTruncatedMAD(t *testing.T) {
	frames, lt := readFrames(t, capturePath(t, "softroce/rdma_cm.pcap"))
	const madAt = 62
	full := frames[0]
	for _, snap := range []int{64, madAt + 10, madAt + HeaderLen, madAt + HeaderLen + 100, madAt + HeaderLen + reqFixedLen, 256, madAt + MADLen - 1, madAt + MADLen} {
		t.Run("snap", func(t *testing.T) {
			ci := gopacket.CaptureInfo{CaptureLength: snap, Length: len(full)}
			p := gopacket.NewPacket(full[:snap], firstLayer(t, lt), gopacket.DecodeOptions{})
			p.Metadata().CaptureInfo = ci
			l := p.Layer(LayerTypeMAD)
			if snap < madAt+HeaderLen {
				assert.Nil(t, l, "snap %d: no MAD header", snap)
				return
			}
			require.NotNil(t, l, "snap %d: layers %v, error %v", snap, p.Layers(), p.ErrorLayer())
			m := l.(*MAD)
			assert.Equal(t, AttrConnectRequest, m.Header.AttributeID)
			assert.Equal(t, uint64(0x000000026dc5c064), m.Header.TransactionID)
			if snap-madAt-HeaderLen >= reqFixedLen {
				req, ok := m.CM().(*ConnectRequest)
				require.True(t, ok, "snap %d", snap)
				assert.Equal(t, uint32(0x3d), req.LocalQPN)
				assert.Equal(t, uint32(0x7cc204), req.StartingPSN)
				assert.Equal(t, min(snap-madAt-HeaderLen-reqFixedLen, ReqPrivateDataLen), len(req.PrivateData))
			} else {
				assert.Nil(t, m.CM(), "snap %d", snap)
			}
			if snap < madAt+MADLen {
				require.NotNil(t, p.ErrorLayer(), "snap %d", snap)
				assert.True(t, errors.Is(p.ErrorLayer().Error(), ErrTruncated), "snap %d: %v", snap, p.ErrorLayer().Error())
				assert.True(t, p.Metadata().Truncated, "snap %d", snap)
			}
		})
	}
}

// TestNewPacketMADAlone decodes raw MAD bytes as a packet starting with
// the MAD layer.
func TestNewPacketMADAlone(t *testing.T) {
	gm := goldenMessages()
	raw := goldenMAD(ClassCM, AttrConnectRequest, gm[0].wire)
	p := gopacket.NewPacket(raw, LayerTypeMAD, gopacket.NoCopy)
	require.Nil(t, p.ErrorLayer())
	m, ok := p.Layer(LayerTypeMAD).(*MAD)
	require.True(t, ok)
	assert.Equal(t, gm[0].msg, m.CM())
	assert.Nil(t, m.store, "the NewPacket path allocates only the message")

	p = gopacket.NewPacket(raw[:10], LayerTypeMAD, gopacket.Default)
	assert.Nil(t, p.Layer(LayerTypeMAD))
	require.NotNil(t, p.ErrorLayer())
	assert.ErrorIs(t, p.ErrorLayer().Error(), ErrTruncated)

	p = gopacket.NewPacket(append(raw, 0xaa, 0xbb), LayerTypeMAD, gopacket.Default)
	require.NotNil(t, p.Layer(LayerTypeMAD))
	require.NotNil(t, p.Layer(gopacket.LayerTypePayload))
	assert.Equal(t, []byte{0xaa, 0xbb}, p.Layer(gopacket.LayerTypePayload).LayerContents())
}

// TestDecodingLayerParser decodes the REQ frame of rdma_cm.pcap with a
// preallocated parser (the analyzer's hot path) and shows the MAD's decode
// allocates nothing.
func TestDecodingLayerParser(t *testing.T) {
	frames, _ := readFrames(t, capturePath(t, "softroce/rdma_cm.pcap"))
	var (
		eth gplayers.Ethernet
		ip4 gplayers.IPv4
		udp gplayers.UDP
		mad MAD
	)
	ib := layers.NewTransportLayers()
	parser := gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet, &eth, &ip4, &udp, &mad)
	for _, l := range ib.DecodingLayers() {
		parser.AddDecodingLayer(l)
	}
	parser.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 8)
	require.NoError(t, parser.DecodeLayers(frames[0], &decoded))
	require.Contains(t, decoded, LayerTypeMAD, "decoded %v", decoded)
	req, ok := mad.CM().(*ConnectRequest)
	require.True(t, ok)
	assert.Equal(t, uint32(0x3d), req.LocalQPN)

	require.NoError(t, parser.DecodeLayers(frames[1], &decoded))
	rep, ok := mad.CM().(*ConnectReply)
	require.True(t, ok)
	assert.Equal(t, uint32(0x3b), rep.LocalQPN)

	madBytes := mad.Contents
	allocs := testing.AllocsPerRun(100, func() {
		if err := mad.DecodeFromBytes(madBytes, gopacket.NilDecodeFeedback); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "MAD.DecodeFromBytes allocations")
}
