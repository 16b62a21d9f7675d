package cm_test

import (
	"encoding/hex"
	"fmt"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/cm"
)

// reqFrame is the first frame of captures/softroce/rdma_cm.pcap: a RoCE v2
// (Ethernet, IPv4, UDP 4791) UD SEND_ONLY to QP1 carrying a CM REQ.
const reqFrame = "005056a7129f005056a77d03080045000134af714000401155cb0a01103e0a01" +
	"103dd87212b7012000006400ffff000000018000001a80010000000000010107" +
	"020300000000000000026dc5c064001000000000000064c0c56d000000000000" +
	"000001064853025056fffea77d03000000000000000000003d00000000000000" +
	"00a07cc204a7ffff37f0ffffffff00000000000000000000ffff0a01103e0000" +
	"0000000000000000ffff0a01103d91a3c0000040008800000000000000000000" +
	"0000000000000000000000000000000000000000000000000000000000000000" +
	"00000040ccf70000000000000000000000000a01103e00000000000000000000" +
	"00000a01103d0000000000000000000000000000000000000000000000000000" +
	"0000000000000000000000000000000000000000000000000000000000005368" +
	"3145"

// Decode the REQ of a RoCE v2 frame: importing cm (which imports layers)
// is all gopacket needs to reach the CM message.
func Example() {
	frame, _ := hex.DecodeString(reqFrame)
	packet := gopacket.NewPacket(frame, gplayers.LayerTypeEthernet, gopacket.Default)

	mad, ok := packet.Layer(cm.LayerTypeMAD).(*cm.MAD)
	if !ok {
		fmt.Println("no MAD")
		return
	}
	req, ok := mad.CM().(*cm.ConnectRequest)
	if !ok {
		fmt.Println("not a REQ:", mad.Header.AttributeName())
		return
	}
	fmt.Printf("QPN 0x%06x, starting PSN 0x%06x, path MTU %s\n", req.LocalQPN, req.StartingPSN, req.PathMTU)
	fmt.Printf("GIDs %s -> %s (LIDs are placeholders: %v)\n",
		req.PrimaryLocalGID, req.PrimaryRemoteGID, req.PrimaryLocalLID.IsPlaceholder())
	if ip, ok := req.IPPrivateData(); ok {
		fmt.Printf("RDMA CM %s port %d, from %s port %d\n",
			req.ServiceID.PortSpace(), req.ServiceID.Port(), ip.SourceIP, ip.SourcePort)
	}
	// Output:
	// QPN 0x00003d, starting PSN 0x7cc204, path MTU 1024
	// GIDs 10.1.16.62 -> 10.1.16.61 (LIDs are placeholders: true)
	// RDMA CM TCP port 18515, from 10.1.16.62 port 52471
}

// Decode a MAD from raw bytes, without building a gopacket packet: the
// 256 bytes after the BTH and DETH of a QP1 packet.
func ExampleMAD_Decode() {
	frame, _ := hex.DecodeString(reqFrame)
	madBytes := frame[62 : 62+cm.MADLen] // Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + DETH 8

	var mad cm.MAD // reuse it: decoding allocates nothing
	if err := mad.Decode(madBytes); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(mad.Header.String())
	switch msg := mad.CM().(type) {
	case *cm.ConnectRequest:
		fmt.Printf("REQ from QPN 0x%06x at PSN 0x%06x\n", msg.LocalQPN, msg.StartingPSN)
	case *cm.ConnectReply:
		fmt.Printf("REP from QPN 0x%06x at PSN 0x%06x\n", msg.LocalQPN, msg.StartingPSN)
	}
	// Output:
	// CM Send REQ tid=0x000000026dc5c064
	// REQ from QPN 0x00003d at PSN 0x7cc204
}

// Build a DREQ MAD and serialize it with gopacket.
func ExampleMAD_SerializeTo() {
	mad := &cm.MAD{
		Header: cm.Header{BaseVersion: 1, ClassVersion: 2, Method: cm.MethodSend, TransactionID: 42},
		Message: &cm.DisconnectRequest{
			LocalCommID: 0x65c0c56d, RemoteCommID: 0x8b88f456, RemoteQPN: 0x3c,
		},
	}
	buf := gopacket.NewSerializeBuffer()
	// FixLengths fills in the class (CM) and attribute (DREQ) from the message.
	if err := mad.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(buf.Bytes()), hex.EncodeToString(buf.Bytes()[:36]))
	// Output:
	// 256 0107020300000000000000000000002a001500000000000065c0c56d8b88f45600003c00
}
