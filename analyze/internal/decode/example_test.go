package decode_test

import (
	"fmt"
	"net"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
	"github.com/roce-dissect/roce-dissect/layers"
)

// writeOnly builds a RoCE v2 RDMA WRITE ONLY frame of a 1,024-byte payload.
func writeOnly() []byte {
	eth := &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: net.IPv4(10, 0, 0, 1), DstIP: net.IPv4(10, 0, 0, 2)}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: 4791}
	bth := &layers.BTH{Opcode: layers.OpcodeRCRDMAWriteOnly, PKey: 0xFFFF, DestQP: 0x11, PSN: 100}
	reth := &layers.RETH{VA: 0x1000, RKey: 0x42, DMALength: 1024}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true}
	if err := gopacket.SerializeLayers(buf, opts, eth, ip, udp, bth, reth, gopacket.Payload(make([]byte, 1024)), &layers.ICRC{}); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// Decode a frame a header-only capture cut to 128 bytes: the headers
// show, and the lengths they declare say how long the packet was.
func Example() {
	d := decode.New(decode.Options{})
	frame := writeOnly()
	ci := gopacket.CaptureInfo{Timestamp: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), CaptureLength: 128, Length: len(frame)}
	p := d.Decode(1, ci, gplayers.LinkTypeEthernet, frame[:128])
	h := d.Headers()
	fmt.Printf("%s %s → %s QP %d PSN %d, RDMA %v, error %v\n", p.Encap, p.Src, p.Dst, p.BTH.DestQP, p.BTH.PSN, p.IsRDMA, p.Err)
	fmt.Printf("%d of %d bytes captured, truncated %v, %d payload bytes captured\n", p.CapLength, p.Length, p.Truncated, len(p.Payload))
	fmt.Printf("headers declare %d bytes, IB packet %d bytes\n", h.Lens.Declared(), h.IBLen)
	// Output:
	// RoCEv2 10.0.0.1 → 10.0.0.2 QP 17 PSN 100, RDMA true, error <nil>
	// 128 of 1098 bytes captured, truncated true, 58 payload bytes captured
	// headers declare 1098 bytes, IB packet 1056 bytes
}
