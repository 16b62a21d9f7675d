package conn_test

import (
	"fmt"
	"net/netip"

	"github.com/gopacket/gopacket"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
	"github.com/roce-dissect/roce-dissect/cm"
)

// mad is the MAD of a CM message, as a packet's MAD field holds it.
func mad(m cm.Message) []byte {
	buf := gopacket.NewSerializeBuffer()
	l := &cm.MAD{Header: cm.Header{BaseVersion: 1, MgmtClass: cm.ClassCM, ClassVersion: 2, Method: 3}, Message: m}
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, l); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// ExampleTable pairs a REQ, its REP and RTU into one connection; a DREQ
// of a CommID whose REQ came before the capture is kept as an orphan.
func ExampleTable() {
	a, b := decode.Addr{IP: netip.MustParseAddr("10.0.0.1")}, decode.Addr{IP: netip.MustParseAddr("10.0.0.2")}
	t := conn.NewTable()
	t.MaxOrphans = conn.MaxOrphans
	for i, m := range []struct {
		src, dst decode.Addr
		msg      cm.Message
	}{
		{a, b, &cm.ConnectRequest{LocalCommID: 0x11, LocalQPN: 0x100, StartingPSN: 5, TransportServiceType: cm.TransportRC}},
		{b, a, &cm.ConnectReply{LocalCommID: 0x22, RemoteCommID: 0x11, LocalQPN: 0x200, StartingPSN: 9}},
		{a, b, &cm.ReadyToUse{LocalCommID: 0x11, RemoteCommID: 0x22}},
		{a, b, &cm.DisconnectRequest{LocalCommID: 0x77, RemoteCommID: 0x88}},
	} {
		p := &decode.Packet{Frame: uint64(i + 1), Src: m.src, Dst: m.dst, MAD: mad(m.msg)}
		if !t.Message(p) {
			continue
		}
		f := t.Apply(p, t.NewREQ())
		fmt.Println(p.Frame, f.Kind == conn.Opened, f.Kind == conn.Answered)
	}
	c := t.List[0]
	fmt.Println(c.ID, c.State, *c.Requester.QPN, *c.Responder.QPN, *c.Requester.SendPSN, c.Frames.RTU)
	fmt.Println(len(t.Orphans), t.Orphans[0].Kind == conn.DREQ, t.Orphans[0].Frame)
	// Output:
	// 1 true false
	// 2 false true
	// 3 false false
	// 4 false false
	// 1 established 256 512 9 3
	// 1 true 4
}
