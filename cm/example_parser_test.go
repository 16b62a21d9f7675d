package cm_test

import (
	"fmt"
	"io"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// The DecodingLayerParser recipe on a real capture with CM traffic: QP1
// packets carry a MAD after their DETH, so the parser needs a cm.MAD
// among its layers (layers cannot hold it: cm imports layers). Without
// it, every CM frame stops with "No decoder for layer type MAD".
func ExampleMAD_decodingLayerParser() {
	r, err := capture.Open("../testdata/write_bw_ipv4.pcap")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	var (
		eth gplayers.Ethernet
		ip4 gplayers.IPv4
		udp gplayers.UDP
		mad cm.MAD
	)
	ib := layers.NewTransportLayers()
	parser := gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet,
		append([]gopacket.DecodingLayer{&eth, &ip4, &udp, &mad}, ib.DecodingLayers()...)...)
	decoded := make([]gopacket.LayerType, 0, 8)
	counts := map[string]int{}
	for {
		_, data, _, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		if err := parser.DecodeLayers(data, &decoded); err != nil {
			fmt.Println("error:", err)
			continue
		}
		if decoded[len(decoded)-1] == cm.LayerTypeMAD {
			if req, ok := mad.CM().(*cm.ConnectRequest); ok {
				ip, _ := req.IPPrivateData()
				fmt.Printf("REQ from %s port %d to %s port %d, QPN 0x%x\n", ip.SourceIP, ip.SourcePort, ip.DestinationIP, req.ServiceID.Port(), req.LocalQPN)
			}
			counts[mad.Header.AttributeName()]++
			continue
		}
		counts[ib.BTH.Opcode.String()]++
	}
	fmt.Println(counts["REQ"], counts["REP"], counts["RTU"], counts["DREQ"], counts["DREP"], "CM messages;", counts["RC_RDMA_WRITE_FIRST"], "RDMA WRITE FIRST")
	// Output:
	// REQ from 10.0.0.1 port 32768 to 10.0.0.2 port 18515, QPN 0x5668
	// 1 1 1 1 1 CM messages; 8 RDMA WRITE FIRST
}
