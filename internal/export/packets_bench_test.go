package export

import (
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// benchPackets are n RoCE v2 packets as the analyzer hands them over:
// RDMA WRITE requests with a RETH every 16th, each 8th answered by an
// ACK, over 64 host pairs and 256 QPs, each with its ICRC, IPv4 ID and
// TTL.
func benchPackets(n int) []analyze.Packet {
	ps := make([]analyze.Packet, n)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	icrcs := make([]byte, 4*n) // each packet's ICRC as captured
	for i := range icrcs {
		icrcs[i] = byte(i * 131)
	}
	for i := range ps {
		pair := i % 64
		src := analyze.Addr{IP: netip.AddrFrom4([4]byte{10, 0, byte(pair), 1})}
		dst := analyze.Addr{IP: netip.AddrFrom4([4]byte{10, 0, byte(pair), 2})}
		p := &ps[i]
		*p = analyze.Packet{Frame: uint64(i + 1), Time: t0.Add(time.Duration(i) * 350 * time.Nanosecond),
			Length: 1082, CapLength: 1082, Encap: analyze.EncapRoCEv2, IsRDMA: true, Src: src, Dst: dst, VLAN: -1,
			ECN: 2, PayloadLen: 1024, ICRC: layers.ICRCResult{Status: layers.ICRCOK}, IPID: uint16(i), HopLimit: 64}
		b := &layers.BTH{Opcode: layers.OpcodeRCRDMAWriteMiddle, PKey: 0xffff, DestQP: uint32(0x100 + i%256), PSN: uint32(i / 256),
			Trailer: icrcs[4*i : 4*i+4 : 4*i+4]}
		switch {
		case i%8 == 7:
			b.Opcode = layers.OpcodeRCAcknowledge
			p.Src, p.Dst, p.Length, p.CapLength, p.PayloadLen = dst, src, 62, 62, 0
			p.AETH = &layers.AETH{MSN: uint32(i / 8)}
		case i%16 == 0:
			b.Opcode = layers.OpcodeRCRDMAWriteFirst
			p.RETH = &layers.RETH{DMALength: 16384}
		}
		p.BTH = b
	}
	return ps
}

// BenchmarkPacketWriter writes the packets table of 1,048,576 packets
// (16 row groups), the export's share of an analysis with --export.
func BenchmarkPacketWriter(b *testing.B) { benchWriter(b, benchPackets(1<<20)) }

// BenchmarkPacketWriterWrapped is BenchmarkPacketWriter of a switch
// mirror's capture: every packet arrived in ERSPAN III (one session) and
// VXLAN (a VNI per host pair, 4 in all), with its priority.
func BenchmarkPacketWriterWrapped(b *testing.B) {
	ps := benchPackets(1 << 20)
	sw, coll := netip.AddrFrom4([4]byte{192, 0, 2, 1}), netip.AddrFrom4([4]byte{192, 0, 2, 2})
	wraps := make([][]analyze.Wrap, 4)
	for i := range wraps {
		vtep := netip.AddrFrom4([4]byte{172, 16, 0, byte(i + 1)})
		wraps[i] = []analyze.Wrap{{Kind: analyze.WrapERSPAN3, Src: sw, Dst: coll, ID: 1}, {Kind: analyze.WrapVXLAN, Src: vtep, Dst: vtep.Next(), ID: uint32(5001 + i)}}
	}
	for i := range ps {
		ps[i].Wraps, ps[i].Priority = wraps[i%64%4], 3
	}
	benchWriter(b, ps)
}

func benchWriter(b *testing.B, ps []analyze.Packet) {
	dir := b.TempDir()
	b.ReportAllocs()
	for b.Loop() {
		pw, err := NewPacketWriter(filepath.Join(dir, PacketsFile(0, 0)), "bench.pcap")
		require.NoError(b, err)
		for i := range ps {
			pw.Add(&ps[i], ps[i].Frame)
		}
		require.NoError(b, pw.Close())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(ps)), "ns/packet")
}
