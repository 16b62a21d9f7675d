package export

import (
	"net/netip"

	"github.com/parquet-go/parquet-go"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// The encapsulation columns of the packets table. A packet that arrived
// wrapped (analyze.Packet.Wraps) has its chain of wraps, "erspan3/vxlan"
// as the JSON report's capture.encapsulations spells it; its mirror, the
// outermost ERSPAN session that delivered it (the switch and the session
// ID, which names a session of that switch); and its tunnel, the
// innermost other wrap with an identifier (the VXLAN or GENEVE VNI, NVGRE
// VSID, GRE key, S-VLAN ID or top MPLS label), the virtual network the
// packet travelled in. The collector (the mirror's destination, where the
// capture was taken) and the tunnel's endpoints are left out, as every
// column costs each packet its value (a null too): the inner addresses
// name the hosts, and the report's capture.tunnels lists them all.

// MirrorTunnel returns the indexes in ws of a packet's mirror (its
// outermost ERSPAN wrap) and tunnel (its innermost other wrap with an
// identifier), -1 for none: the wraps the packets table's mirror_* and
// tunnel_* columns show, and -P -o csv's.
func MirrorTunnel(ws []analyze.Wrap) (mirror, tunnel int) {
	mirror, tunnel = -1, -1
	for i, w := range ws {
		switch {
		case isMirror(w.Kind):
			if mirror < 0 {
				mirror = i
			}
		case w.Kind.IDName() != "":
			tunnel = i
		}
	}
	return mirror, tunnel
}

func isMirror(k analyze.WrapKind) bool {
	return k == analyze.WrapERSPAN1 || k == analyze.WrapERSPAN2 || k == analyze.WrapERSPAN3
}

// wrapKey is what the encapsulation columns of a packet hold.
type wrapKey struct {
	chain          uint64 // the kinds, outermost in the low byte
	mirrorSrc      netip.Addr
	session        uint32
	tunnelID       uint32
	mirror, tunnel analyze.WrapKind // WrapNone: none
}

// numWrapColumns is how many encapsulation columns there are, from
// colEncapsulation on.
const numWrapColumns = colTunnelIDName - colEncapsulation + 1

// wrapInfo is the encapsulation columns' values of one wrapKey, made
// once: a packet's are copied.
type wrapInfo [numWrapColumns]parquet.Value

// wrapTable numbers the distinct encapsulations of a capture's packets
// and holds their columns' values; number 0 is "not wrapped", every
// column null. A capture has few (a mirror session or two, a VNI per
// tenant): a small direct-mapped cache in front of the map saves hashing
// the key for most packets, whose wraps interleave.
type wrapTable struct {
	ids   map[wrapKey]int32
	info  []wrapInfo
	cache [64]struct {
		k  wrapKey
		id int32 // 0: empty
	}
}

// index is the number of ws's encapsulation in t.info.
func (t *wrapTable) index(ws []analyze.Wrap) int32 {
	var k wrapKey
	for i, w := range ws {
		k.chain |= uint64(w.Kind) << (8 * (i & 7))
	}
	m, tu := MirrorTunnel(ws)
	if m >= 0 {
		w := &ws[m]
		k.mirror, k.mirrorSrc, k.session = w.Kind, w.Src, w.ID
	}
	if tu >= 0 {
		k.tunnel, k.tunnelID = ws[tu].Kind, ws[tu].ID
	}
	slot := &t.cache[(uint32(k.chain)^k.session<<10^k.tunnelID)*2654435761>>26]
	if slot.id != 0 && slot.k == k {
		return slot.id
	}
	id, ok := t.ids[k]
	if !ok {
		if t.ids == nil {
			t.ids = map[wrapKey]int32{}
			t.info = append(t.info, wrapInfo{}) // 0: not wrapped
		}
		id = int32(len(t.info))
		t.info = append(t.info, newWrapInfo(ws, m, tu))
		t.ids[k] = id
	}
	slot.k, slot.id = k, id
	return id
}

// newWrapInfo makes the columns' values of ws, whose mirror and tunnel
// are ws[m] and ws[tu] (MirrorTunnel).
func newWrapInfo(ws []analyze.Wrap, m, tu int) wrapInfo {
	var wi wrapInfo
	wi[0] = optionalBytes([]byte(analyze.ChainName(ws))) // colEncapsulation
	if m >= 0 {
		w := ws[m]
		wi[colMirrorSrc-colEncapsulation] = optionalBytes([]byte(w.Src.String()))
		if w.Kind.IDName() != "" {
			wi[colMirrorSession-colEncapsulation] = optionalUint32(int64(w.ID))
		}
	}
	if tu >= 0 {
		wi[colTunnelID-colEncapsulation] = optionalUint32(int64(ws[tu].ID))
		wi[colTunnelIDName-colEncapsulation] = optionalBytes([]byte(ws[tu].Kind.IDName()))
	}
	return wi
}

// wrapValues fills vals with the encapsulation column col's values:
// null for a packet not wrapped, or without a mirror or a tunnel for
// their columns.
func wrapValues(col int, b *packetBatch, vals []parquet.Value) {
	if len(b.wrap) == 0 { // no packet wrapped yet
		clear(vals)
		return
	}
	c := col - colEncapsulation
	for i := range b.recs {
		vals[i] = b.wrap[b.recs[i].wrap][c]
	}
}

// optionalBytes is the value of an optional BYTE_ARRAY column: b, or
// null when nil.
func optionalBytes(b []byte) parquet.Value {
	if b == nil {
		return parquet.Value{}
	}
	x := parquet.ByteArrayValue(b)
	x.SetDefinitionLevel(1)
	return x
}

// optionalUint32 is the value of an optional uint32 (INT32) column: v,
// or null when negative (absent).
func optionalUint32(v int64) parquet.Value {
	if v < 0 {
		return parquet.Value{}
	}
	x := parquet.Int32Value(int32(uint32(v)))
	x.SetDefinitionLevel(1)
	return x
}
