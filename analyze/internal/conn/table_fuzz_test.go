package conn

import (
	"net/netip"
	"testing"

	"github.com/gopacket/gopacket"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
	"github.com/roce-dissect/roce-dissect/cm"
)

// FuzzTable feeds a table the MADs the input spells (each a length byte,
// a byte whose low bit admits a new REQ and whose next bit swaps the
// two hosts, then that many bytes of MAD, the CM message ID in its
// header forced to CM) and checks that the table's bounds hold: no more
// connections than were admitted, each numbered by its place, at most
// two CommIDs a connection, at most MaxOrphans orphans kept of those
// counted.
func FuzzTable(f *testing.F) {
	for _, m := range []cm.Message{
		&cm.ConnectRequest{LocalCommID: 1, LocalQPN: 0x100, TransportServiceType: cm.TransportRC},
		&cm.ConnectReply{LocalCommID: 2, RemoteCommID: 1, LocalQPN: 0x200},
		&cm.ConnectReject{LocalCommID: 2, RemoteCommID: 1},
		&cm.DisconnectRequest{LocalCommID: 1, RemoteCommID: 2},
	} {
		buf := gopacket.NewSerializeBuffer()
		l := &cm.MAD{Header: cm.Header{BaseVersion: 1, MgmtClass: cm.ClassCM, ClassVersion: 2, Method: 3}, Message: m}
		require.NoError(f, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true}, l))
		b := buf.Bytes()
		f.Add(append([]byte{byte(len(b)), 1}, b...))
	}
	a, b := decode.Addr{IP: netip.MustParseAddr("10.0.0.1")}, decode.Addr{IP: netip.MustParseAddr("10.0.0.2")}
	f.Fuzz(func(t *testing.T, in []byte) {
		tab := NewTable()
		tab.MaxOrphans = 3
		admitted, messages := 0, 0
		for frame := uint64(1); len(in) >= 2; frame++ {
			n, flags := int(in[0]), in[1]
			in = in[2:]
			n = min(n, len(in))
			m := append([]byte(nil), in[:n]...)
			in = in[n:]
			if len(m) > 1 {
				m[1] = byte(cm.ClassCM)
			}
			p := &decode.Packet{Frame: frame, Src: a, Dst: b, MAD: m}
			if flags&2 != 0 {
				p.Src, p.Dst = b, a
			}
			if !tab.Message(p) {
				continue
			}
			messages++
			ok := tab.NewREQ() && flags&1 != 0
			if ok {
				admitted++
			}
			tab.Apply(p, ok)
		}
		require.LessOrEqual(t, len(tab.List), admitted)
		for i, c := range tab.List {
			require.Equal(t, i+1, c.ID)
		}
		require.LessOrEqual(t, tab.CommIDs(), 2*len(tab.List))
		require.LessOrEqual(t, len(tab.Orphans), 3)
		require.LessOrEqual(t, uint64(len(tab.Orphans)), tab.Orphaned)
		require.LessOrEqual(t, tab.Orphaned, uint64(messages))
	})
}
