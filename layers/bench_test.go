package layers

import (
	"hash/crc32"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeFirstFrame builds a RoCE v2 RDMA WRITE FIRST frame with a payload
// of one 1024-byte path MTU: Ethernet/IPv4/UDP/BTH/RETH/payload/ICRC.
func writeFirstFrame(tb testing.TB, payload int) []byte {
	tb.Helper()
	eth := &gplayers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, Flags: gplayers.IPv4DontFragment,
		SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: UDPPortRoCEv2}
	bth := &BTH{Opcode: OpcodeRCRDMAWriteFirst, PKey: 0xFFFF, DestQP: 0x12, PSN: 1000}
	reth := &RETH{VA: 0x7f0000001000, RKey: 0x1234, DMALength: 4 * 1024}
	require.NoError(tb, bth.SetNetworkLayerForChecksum(ip, udp))
	data := make([]byte, payload)
	for i := range data {
		data[i] = byte(i)
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	require.NoError(tb, udp.SetNetworkLayerForChecksum(ip))
	require.NoError(tb, gopacket.SerializeLayers(buf, opts, eth, ip, udp, bth, reth, gopacket.Payload(data), &ICRC{}))
	return buf.Bytes()
}

// goldenNamed returns the bytes of the golden frame of that name.
func goldenNamed(name string) []byte {
	for _, g := range goldenFrames {
		if g.name == name {
			return g.bytes()
		}
	}
	panic("no golden frame " + name)
}

// ackFrame is the golden RC ACKNOWLEDGE frame.
func ackFrame() []byte {
	for _, g := range goldenFrames {
		if g.name == "RC ACKNOWLEDGE, unlimited credits" {
			return g.bytes()
		}
	}
	panic("no ACK golden frame")
}

// TestZeroAllocDecodingLayerParser: decoding a WRITE FIRST frame and an ACK
// through a DecodingLayerParser with NewTransportLayers allocates nothing,
// and neither does checking the ICRC.
func TestZeroAllocDecodingLayerParser(t *testing.T) {
	for name, frame := range map[string][]byte{
		"Ethernet/IPv4/UDP/BTH/RETH": writeFirstFrame(t, 1024),
		"Ethernet/IPv4/UDP/BTH/AETH": ackFrame(),
		"DC RDMA_WRITE_ONLY":         goldenNamed("DC RDMA_WRITE_ONLY, 8 bytes (real DC header bytes)"),
	} {
		t.Run(name, func(t *testing.T) {
			parser, std, ib := newParser(gplayers.LayerTypeEthernet)
			decoded := make([]gopacket.LayerType, 0, 16)
			require.NoError(t, parser.DecodeLayers(frame, &decoded))
			require.Equal(t, ICRCOK, checkDLP(decoded, std, ib).Status)
			allocs := testing.AllocsPerRun(1000, func() {
				if err := parser.DecodeLayers(frame, &decoded); err != nil {
					panic(err)
				}
				if CheckICRC(NetworkIPv4, std.ip4.Contents, std.udp.Contents, &ib.BTH).Status != ICRCOK {
					panic("bad ICRC")
				}
			})
			assert.Zero(t, allocs)
		})
	}
}

// TestZeroAllocLayers: each layer's DecodeFromBytes allocates nothing.
func TestZeroAllocLayers(t *testing.T) {
	frame := writeFirstFrame(t, 64)
	for _, c := range layerBenchCases(frame) {
		allocs := testing.AllocsPerRun(100, func() {
			if err := c.l.DecodeFromBytes(c.data, gopacket.NilDecodeFeedback); err != nil {
				panic(err)
			}
		})
		assert.Zero(t, allocs, c.l.(gopacket.Layer).LayerType().String())
	}
}

type layerBenchCase struct {
	l    gopacket.DecodingLayer
	data []byte
}

func layerBenchCases(writeFirst []byte) []layerBenchCase {
	b := make([]byte, 64)
	lrh := mustHex("02 02 0002 0010 0001") // PktLen 16 words
	lrh = append(lrh, make([]byte, 64)...)
	grh := append(mustHex("60000000 0010 1b 40"), make([]byte, 32+16+4)...)
	erf := append(mustHex("0000000000000000 15 04 0030 0000 0020"), make([]byte, 32)...)
	return []layerBenchCase{
		{&ERF{}, erf}, {&LRH{}, lrh}, {&GRH{}, grh}, {&BTH{}, writeFirst[42:]},
		{&RDETH{}, b}, {&DETH{}, b}, {&XRCETH{}, b}, {&RETH{}, b}, {&AtomicETH{}, b},
		{&AETH{}, b}, {&AtomicAckETH{}, b}, {&ImmDt{}, b}, {&IETH{}, b}, {&FETH{}, b},
		{&CNP{}, b}, {&DCETH{}, b}, {&ICRC{}, b[:4]}, {&VCRC{}, b[:2]},
	}
}

// BenchmarkDecodeLayer measures each layer's DecodeFromBytes alone.
func BenchmarkDecodeLayer(b *testing.B) {
	frame := writeFirstFrame(b, 1024)
	for _, c := range layerBenchCases(frame) {
		b.Run(c.l.(gopacket.Layer).LayerType().String(), func(b *testing.B) {
			if err := c.l.DecodeFromBytes(c.data, gopacket.NilDecodeFeedback); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(c.l.(gopacket.Layer).LayerContents())))
			b.ReportAllocs()
			for b.Loop() {
				_ = c.l.DecodeFromBytes(c.data, gopacket.NilDecodeFeedback)
			}
		})
	}
}

// parserBenchCase is a case of BenchmarkDecodingLayerParser: a frame,
// the container (sparse: DecodingLayerSparse, else gopacket's default
// map) and whether the ICRC is checked too.
type parserBenchCase struct {
	name         string
	data         []byte
	sparse, icrc bool
}

// parserBenchCases are the cases of BenchmarkDecodingLayerParser: each
// frame with each container, without and with the ICRC check, named
// FRAME/map, FRAME/map+ICRC, FRAME/sparse and FRAME/sparse+ICRC.
func parserBenchCases(b *testing.B) []parserBenchCase {
	frames := []struct {
		name string
		data []byte
	}{{"WRITE_FIRST", writeFirstFrame(b, 1024)}, {"ACK", ackFrame()}}
	var out []parserBenchCase
	for _, f := range frames {
		for _, container := range []string{"map", "sparse"} {
			for _, check := range []string{"", "+ICRC"} {
				out = append(out, parserBenchCase{f.name + "/" + container + check, f.data, container == "sparse", check != ""})
			}
		}
	}
	return out
}

// useSparseContainer makes parser find the layers of std and ib in a
// DecodingLayerSparse instead of gopacket's default map.
func useSparseContainer(parser *gopacket.DecodingLayerParser, std *stdLayers, ib *TransportLayers) {
	dls := append([]gopacket.DecodingLayer{&std.eth, &std.ip4, &std.ip6, &std.udp}, ib.DecodingLayers()...)
	dlc := gopacket.DecodingLayerContainer(gopacket.DecodingLayerSparse(nil))
	for _, d := range dls {
		dlc = dlc.Put(d)
	}
	parser.SetDecodingLayerContainer(dlc)
}

// BenchmarkDecodingLayerParser decodes whole frames with a
// DecodingLayerParser: Ethernet/IPv4/UDP/BTH/RETH (WRITE FIRST, 1024-byte
// payload) and Ethernet/IPv4/UDP/BTH/AETH (ACK), with gopacket's default
// map container and with DecodingLayerSparse; "+ICRC" also checks the ICRC.
func BenchmarkDecodingLayerParser(b *testing.B) {
	for _, c := range parserBenchCases(b) {
		b.Run(c.name, func(b *testing.B) {
			parser, std, ib := newParser(gplayers.LayerTypeEthernet)
			if c.sparse {
				useSparseContainer(parser, std, ib)
			}
			decoded := make([]gopacket.LayerType, 0, 16)
			if err := parser.DecodeLayers(c.data, &decoded); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(c.data)))
			b.ReportAllocs()
			for b.Loop() {
				_ = parser.DecodeLayers(c.data, &decoded)
				if c.icrc && CheckICRC(NetworkIPv4, std.ip4.Contents, std.udp.Contents, &ib.BTH).Status != ICRCOK {
					b.Fatal("bad ICRC")
				}
			}
		})
	}
}

// BenchmarkNewPacket decodes the WRITE FIRST frame with gopacket.NewPacket
// (allocating layers, checking the ICRC), for comparison.
func BenchmarkNewPacket(b *testing.B) {
	frame := writeFirstFrame(b, 1024)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.NoCopy)
	}
}

// BenchmarkICRC checks (CheckICRC) and computes (ComputeICRC) the ICRC of a
// RoCE v2 frame with a 4 KiB payload; hash/crc32 over the same bytes is
// the reference, and ComputeVCRC the native-IB trailer.
func BenchmarkICRC(b *testing.B) {
	frame := writeFirstFrame(b, 4096)
	parser, std, ib := newParser(gplayers.LayerTypeEthernet)
	var decoded []gopacket.LayerType
	if err := parser.DecodeLayers(frame, &decoded); err != nil {
		b.Fatal(err)
	}
	b.Run("CheckICRC/4KiB", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			if CheckICRC(NetworkIPv4, std.ip4.Contents, std.udp.Contents, &ib.BTH).Status != ICRCOK {
				b.Fatal("bad ICRC")
			}
		}
	})
	b.Run("ComputeICRC/4KiB", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			_, _ = ComputeICRC(NetworkIPv4, std.ip4.Contents, std.udp.Contents, ib.BTH.ICRCCovered())
		}
	})
	b.Run("hash-crc32-reference/4KiB", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		for b.Loop() {
			_ = crc32.ChecksumIEEE(frame)
		}
	})
	b.Run("ComputeVCRC/4KiB", func(b *testing.B) {
		b.SetBytes(int64(len(frame)))
		b.ReportAllocs()
		for b.Loop() {
			_ = ComputeVCRC(frame)
		}
	})
}

// BenchmarkSerializeWriteFirst builds a WRITE FIRST frame with lengths,
// pad and ICRC computed.
func BenchmarkSerializeWriteFirst(b *testing.B) {
	eth := &gplayers.Ethernet{SrcMAC: []byte{2, 0, 0, 0, 0, 1}, DstMAC: []byte{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: UDPPortRoCEv2}
	bth := &BTH{Opcode: OpcodeRCRDMAWriteFirst, PKey: 0xFFFF, DestQP: 0x12, PSN: 1000}
	reth := &RETH{VA: 0x7f0000001000, RKey: 0x1234, DMALength: 4096}
	if err := bth.SetNetworkLayerForChecksum(ip, udp); err != nil {
		b.Fatal(err)
	}
	if err := udp.SetNetworkLayerForChecksum(ip); err != nil {
		b.Fatal(err)
	}
	payload := gopacket.Payload(make([]byte, 1024))
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	b.ReportAllocs()
	b.SetBytes(14 + 20 + 8 + 12 + 16 + 1024 + 4)
	for b.Loop() {
		if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, bth, reth, payload, &ICRC{}); err != nil {
			b.Fatal(err)
		}
	}
}
