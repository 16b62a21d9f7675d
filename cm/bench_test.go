package cm

import (
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestDecodeAllocs: a reused MAD decodes every CM message, an SA MAD and
// a truncated MAD without allocating; DecodeMessage allocates the message
// struct and nothing else.
func TestDecodeAllocs(t *testing.T) {
	var m MAD
	for _, c := range goldenMessages() {
		raw := goldenMAD(ClassCM, c.msg.AttributeID(), c.wire)
		_ = m.Decode(raw) // first use allocates the message storage
		assert.Zero(t, testing.AllocsPerRun(50, func() { _ = m.Decode(raw) }), "MAD with %s", c.name)
		assert.Equal(t, 1.0, testing.AllocsPerRun(50, func() { _, _ = DecodeMessage(c.msg.AttributeID(), c.wire) }), "DecodeMessage %s", c.name)
	}
	sa := goldenMAD(ClassSubnAdm, AttrPathRecord, nil)
	assert.Zero(t, testing.AllocsPerRun(50, func() { _ = m.Decode(sa) }), "SA MAD")
	var fresh MAD
	assert.Zero(t, testing.AllocsPerRun(50, func() { _ = fresh.Decode(sa) }), "SA MAD needs no message storage")
	var h Header
	assert.Zero(t, testing.AllocsPerRun(50, func() { _ = h.DecodeFromBytes(sa) }), "header")
}

func benchMADs(b *testing.B) map[string][]byte {
	gm := goldenMessages()
	return map[string][]byte{
		"REQ":     goldenMAD(ClassCM, AttrConnectRequest, gm[0].wire),
		"REP":     goldenMAD(ClassCM, AttrConnectReply, gm[3].wire),
		"DREQ":    goldenMAD(ClassCM, AttrDisconnectRequest, gm[5].wire),
		"SubnAdm": goldenMAD(ClassSubnAdm, AttrPathRecord, nil),
	}
}

// BenchmarkDecodeMAD decodes a MAD reused across iterations, as a
// DecodingLayerParser does.
func BenchmarkDecodeMAD(b *testing.B) {
	for name, raw := range benchMADs(b) {
		b.Run(name, func(b *testing.B) {
			var m MAD
			b.ReportAllocs()
			b.SetBytes(MADLen)
			for b.Loop() {
				if err := m.DecodeFromBytes(raw, gopacket.NilDecodeFeedback); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeMessage decodes the data of a REQ into a new message
// (one allocation: the message struct).
func BenchmarkDecodeMessage(b *testing.B) {
	raw := goldenMessages()[0].wire
	b.ReportAllocs()
	b.SetBytes(DataLen)
	for b.Loop() {
		if _, err := DecodeMessage(AttrConnectRequest, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeMAD appends a REQ MAD to a reused buffer.
func BenchmarkEncodeMAD(b *testing.B) {
	var m MAD
	if err := m.Decode(benchMADs(b)["REQ"]); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, MADLen)
	b.ReportAllocs()
	b.SetBytes(MADLen)
	for b.Loop() {
		var err error
		if buf, err = m.AppendBinary(buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNewPacketMAD decodes a MAD through gopacket.NewPacket (a new
// MAD layer and message per packet, plus gopacket's own packet).
func BenchmarkNewPacketMAD(b *testing.B) {
	raw := benchMADs(b)["REQ"]
	b.ReportAllocs()
	b.SetBytes(MADLen)
	for b.Loop() {
		p := gopacket.NewPacket(raw, LayerTypeMAD, gopacket.NoCopy)
		if p.ErrorLayer() != nil {
			b.Fatal(p.ErrorLayer().Error())
		}
	}
}

// BenchmarkDecodingLayerParserREQFrame decodes the whole first frame of
// rdma_cm.pcap (Ethernet, IPv4, UDP, BTH, DETH, MAD) with a preallocated
// parser.
func BenchmarkDecodingLayerParserREQFrame(b *testing.B) {
	frames, _ := readFrames(b, capturePath(b, "softroce/rdma_cm.pcap"))
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
	decoded := make([]gopacket.LayerType, 0, 8)
	b.ReportAllocs()
	b.SetBytes(int64(len(frames[0])))
	for b.Loop() {
		if err := parser.DecodeLayers(frames[0], &decoded); err != nil {
			b.Fatal(err)
		}
	}
}
