package layers_test

import (
	"fmt"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/roce-dissect/roce-dissect/layers"
)

// rdmaWriteFrame builds the RoCE v2 RDMA WRITE ONLY frame of the examples.
func rdmaWriteFrame() []byte {
	eth := &gplayers.Ethernet{
		SrcMAC:       []byte{0x02, 0, 0, 0, 0, 0x01},
		DstMAC:       []byte{0x02, 0, 0, 0, 0, 0x02},
		EthernetType: gplayers.EthernetTypeIPv4,
	}
	ip := &gplayers.IPv4{
		Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP,
		SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2},
	}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: layers.UDPPortRoCEv2}
	bth := &layers.BTH{Opcode: layers.OpcodeRCRDMAWriteOnly, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 4242}
	reth := &layers.RETH{VA: 0x7f0000001000, RKey: 0x1234, DMALength: 5}
	// The ICRC is computed over the IP and UDP headers the BTH will be
	// serialized under (like the UDP checksum over its pseudo-header);
	// this also gives the UDP layer its pseudo-header.
	if err := bth.SetNetworkLayerForChecksum(ip, udp); err != nil {
		panic(err)
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	// The ICRC layer goes last: FixLengths inserts the pad in front of it
	// and ComputeChecksums fills it in.
	err := gopacket.SerializeLayers(buf, opts,
		eth, ip, udp, bth, reth, gopacket.Payload("hello"), &layers.ICRC{})
	if err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// Decode a RoCE v2 frame with gopacket.NewPacket: importing the package is
// enough for UDP port 4791 to decode as InfiniBand, and the ICRC is checked.
func Example_newPacket() {
	frame := rdmaWriteFrame()

	pkt := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.Default)
	if err := pkt.ErrorLayer(); err != nil {
		fmt.Println("error:", err.Error())
	}
	bth := pkt.Layer(layers.LayerTypeBTH).(*layers.BTH)
	reth := pkt.Layer(layers.LayerTypeRETH).(*layers.RETH)
	icrc := pkt.Layer(layers.LayerTypeICRC).(*layers.ICRC)
	fmt.Printf("%s DestQP 0x%x PSN %d PadCnt %d\n", bth.Opcode, bth.DestQP, bth.PSN, bth.PadCnt)
	fmt.Printf("RETH VA 0x%x R_Key 0x%x length %d\n", reth.VA, reth.RKey, reth.DMALength)
	fmt.Printf("payload %q, ICRC %s\n", pkt.ApplicationLayer().Payload(), icrc.Status)
	// Output:
	// RC_RDMA_WRITE_ONLY DestQP 0x12 PSN 4242 PadCnt 3
	// RETH VA 0x7f0000001000 R_Key 0x1234 length 5
	// payload "hello", ICRC ok
}

// Decode without allocating: one DecodingLayerParser, reused for every
// frame, with the linked layers of NewTransportLayers.
func Example_decodingLayerParser() {
	var (
		eth gplayers.Ethernet
		ip4 gplayers.IPv4
		udp gplayers.UDP
	)
	ib := layers.NewTransportLayers()
	parser := gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet,
		append([]gopacket.DecodingLayer{&eth, &ip4, &udp}, ib.DecodingLayers()...)...)
	decoded := make([]gopacket.LayerType, 0, 8)

	for _, frame := range [][]byte{rdmaWriteFrame()} {
		if err := parser.DecodeLayers(frame, &decoded); err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(decoded)
		icrc := layers.CheckICRC(layers.NetworkIPv4, ip4.Contents, udp.Contents, &ib.BTH)
		fmt.Printf("%s PSN %d, VA 0x%x, %d payload bytes, ICRC %s\n",
			ib.BTH.Opcode, ib.BTH.PSN, ib.RETH.VA, len(ib.Payload), icrc.Status)
	}
	// Output:
	// [Ethernet IPv4 UDP BTH RETH Payload]
	// RC_RDMA_WRITE_ONLY PSN 4242, VA 0x7f0000001000, 5 payload bytes, ICRC ok
}

// Build a RoCE v2 RDMA WRITE frame with a correct ICRC: FixLengths pads
// the payload to a 4-byte boundary and sets PadCnt, ComputeChecksums fills
// in the ICRC (see rdmaWriteFrame above). Flipping a covered byte breaks
// it; the ECN bits are not covered, so a switch marking congestion keeps it
// valid.
func Example_serialize() {
	frame := rdmaWriteFrame()
	fmt.Printf("%d bytes, ICRC on the wire % x\n", len(frame), frame[len(frame)-4:])

	check := func(f []byte) layers.ICRCStatus {
		pkt := gopacket.NewPacket(f, gplayers.LayerTypeEthernet, gopacket.Default)
		return pkt.Layer(layers.LayerTypeICRC).(*layers.ICRC).Status
	}
	fmt.Println("as built:", check(frame))
	frame[15] |= 0x03 // IPv4 ECN: congestion experienced
	fmt.Println("ECN CE:", check(frame))
	frame[len(frame)-8] ^= 0x01 // a payload byte
	fmt.Println("payload changed:", check(frame))
	// Output:
	// 82 bytes, ICRC on the wire 5f 7e 72 3a
	// as built: ok
	// ECN CE: ok
	// payload changed: bad
}
