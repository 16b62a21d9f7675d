package wrap_test

import (
	"encoding/hex"
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// A RoCE v2 frame of 98 bytes captured with a snap length of 64, from
// the underlay of a VXLAN overlay that a switch mirrors in ERSPAN II.
func Example() {
	frame, _ := hex.DecodeString("0200000000020200000000010800456a0054000040004011262d0a0000010a000002" +
		"c35112b7004000000a40ffff000001118000006400000000000000000000")
	chain, err := wrap.Parse("erspan2,vxlan")
	if err != nil {
		fmt.Println(err)
		return
	}
	w := &wrap.Wrapper{Chain: chain, SessionID: 7, VNI: 100}
	out, orig, err := w.Wrap(nil, frame, 98, time.Unix(0, 0))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(chain, "adds", chain.Overhead(), "bytes:", len(out), "captured of", orig)
	t := w.Truth()
	fmt.Println(t.Chains)
	for _, tu := range t.Tunnels {
		fmt.Println(tu.Kind, tu.Src, "→", tu.Dst, "id", tu.ID, "frames", tu.Frames)
	}

	// RoCE v1 (EtherType 0x8915) carries no IP packet for MPLS.
	copy(frame[12:], []byte{0x89, 0x15})
	_, _, err = (&wrap.Wrapper{Chain: wrap.Chain{wrap.MPLS}}).Wrap(nil, frame, 98, time.Time{})
	fmt.Println(err)
	_, err = wrap.Parse("vxlan,gre")
	fmt.Println(err)
	// Output:
	// erspan2/vxlan adds 100 bytes: 164 captured of 198
	// map[erspan2/vxlan:1]
	// vxlan 172.16.0.1 → 172.16.0.2 id 100 frames 1
	// erspan2 192.0.2.1 → 192.0.2.2 id 7 frames 1
	// wrap: frame cannot be wrapped: mpls: the frame carries EtherType 0x8915, not IPv4 or IPv6
	// wrap: unknown encapsulation "gre" (want one of erspan1, erspan2, erspan3, erspan3-platform, vxlan, geneve, nvgre, qinq, mpls)
}
