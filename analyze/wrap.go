package analyze

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/layers"
)

// Frames delivered inside other packets.
//
// A switch mirror wraps each frame it copies in ERSPAN (GRE); overlays
// carry RoCE in VXLAN, GENEVE or NVGRE; provider edges add 802.1ad
// S-tags or MPLS labels. The Analyzer walks through all of them to the
// RDMA packet inside, which alone makes the flow (its addresses, ECN,
// ICRC); each layer it walked through is a Wrap of the Packet, and the
// capture summary counts the frames of each chain of wraps and of each
// tunnel or mirror session (Capture.Encapsulations, Capture.Tunnels).

// WrapKind is a kind of encapsulation around a frame.
type WrapKind uint8

// Encapsulations the Analyzer walks through.
const (
	WrapNone    WrapKind = iota
	WrapERSPAN1          // GRE 0x88BE without sequence number: the mirrored frame follows the GRE header
	WrapERSPAN2          // GRE 0x88BE with sequence number, then an 8-byte ERSPAN II header
	WrapERSPAN3          // GRE 0x22EB, then a 12-byte ERSPAN III header (and its optional platform subheader)
	WrapGRE              // GRE carrying IPv4 or IPv6
	WrapNVGRE            // GRE 0x6558 (transparent Ethernet bridging), the key holding the VSID
	WrapVXLAN            // UDP 4789
	WrapGENEVE           // UDP 6081
	WrapQinQ             // two or more VLAN tags on one Ethernet header (802.1ad)
	WrapMPLS             // an MPLS label stack
	wrapKinds
)

// wrapKindInfo is one row of the table of encapsulations: its name, what
// its identifier is, and whether that identifier tells flows apart.
type wrapKindInfo struct {
	name string // as Capture.Encapsulations and Tunnel.Kind spell it
	id   string // the identifier a tunnel of this kind has ("" none)
	// keysFlows: the identifier names a tenant's network or a mirror
	// session end to end, so that the same inner addresses and QP in two
	// of them are two flows (see FlowTunnel). A GRE key, an S-VLAN or an
	// MPLS label is not: a label changes hop by hop.
	keysFlows bool
}

var wrapKindTable = [wrapKinds]wrapKindInfo{
	WrapNone:    {"none", "", false},
	WrapERSPAN1: {"erspan1", "", false},
	WrapERSPAN2: {"erspan2", "session", true},
	WrapERSPAN3: {"erspan3", "session", true},
	WrapGRE:     {"gre", "key", false},
	WrapNVGRE:   {"nvgre", "VSID", true},
	WrapVXLAN:   {"vxlan", "VNI", true},
	WrapGENEVE:  {"geneve", "VNI", true},
	WrapQinQ:    {"qinq", "S-VLAN", false},
	WrapMPLS:    {"mpls", "label", false},
}

// String names the encapsulation ("erspan2", "vxlan", …).
func (k WrapKind) String() string {
	if k >= wrapKinds {
		return "unknown"
	}
	return wrapKindTable[k].name
}

// IDName names what Wrap.ID holds for this kind ("session", "VNI", …;
// "" when it has no identifier).
func (k WrapKind) IDName() string {
	if k >= wrapKinds {
		return ""
	}
	return wrapKindTable[k].id
}

// Wrap is one encapsulation a frame arrived in: its kind, the outer
// addresses it travelled between (invalid when it has none: QinQ, MPLS)
// and its identifier (ERSPAN session ID, VNI, VSID, GRE key, S-VLAN ID or
// top MPLS label; see WrapKind.IDName).
type Wrap struct {
	Kind     WrapKind
	Src, Dst netip.Addr
	ID       uint32
}

// flowTunnel is the tunnel identity a flow is keyed by besides its
// addresses and QP: the innermost wrap of a kind that keys flows (VXLAN
// or GENEVE VNI, NVGRE VSID, ERSPAN II or III session ID); the zero
// flowTunnel for a frame in none. Overlapping tenants reuse addresses and
// QPs: one inner flow in two VNIs is two flows.
type flowTunnel struct {
	kind WrapKind // WrapNone: none
	id   uint32
}

// flowTunnelOf is the flow tunnel of a frame's wraps.
func flowTunnelOf(ws []Wrap) flowTunnel {
	for i := len(ws) - 1; i >= 0; i-- {
		if w := ws[i]; w.Kind < wrapKinds && wrapKindTable[w.Kind].keysFlows {
			return flowTunnel{kind: w.Kind, id: w.ID}
		}
	}
	return flowTunnel{}
}

// value is the flow tunnel as a FlowTunnel; the zero FlowTunnel for none.
// Its strings are the table's: it allocates nothing.
func (t flowTunnel) value() FlowTunnel {
	if t.kind == WrapNone {
		return FlowTunnel{}
	}
	return FlowTunnel{Kind: t.kind.String(), ID: t.id, IDName: t.kind.IDName()}
}

// report is the flow tunnel as Flow.Tunnel shows it; nil for none.
func (t flowTunnel) report() *FlowTunnel {
	if t.kind == WrapNone {
		return nil
	}
	v := t.value()
	return &v
}

// Tunnel returns the tunnel that is part of the key of the packet's flow
// (Flow.Tunnel), the zero FlowTunnel for none, for a caller that keys the
// packets of flows as the Analyzer does (FlowTunnel is comparable).
func (p *Packet) Tunnel() FlowTunnel { return flowTunnelOf(p.Wraps).value() }

// maxWraps is how deep the Analyzer follows encapsulations inside each
// other; a frame nested deeper is malformed (ErrBadTunnel).
const maxWraps = 8

// ErrBadTunnel is wrapped by the reason of a frame whose mirror or tunnel
// header (GRE, ERSPAN, VXLAN, GENEVE, an MPLS label stack) is cut or
// invalid, or whose encapsulations nest deeper than the Analyzer follows
// (maxWraps): such a frame is malformed, not another protocol, so that a
// damaged mirror stream is not read as traffic that is not RDMA.
var ErrBadTunnel = errors.New("bad tunnel header")

// errTooDeep is the reason of a frame nested deeper than maxWraps.
var errTooDeep = fmt.Errorf("encapsulations nested deeper than %d", maxWraps)

// badTunnel makes the frame being decoded malformed for err, the reason
// its mirror or tunnel header does not decode, and stops the walk. A
// frame the capture tool cut (captured shorter than on the wire, as a
// snap length cuts a header-only capture) is not damaged: its headers
// ran past what was kept, and it stops as a frame of unknown protocol.
func (a *Analyzer) badTunnel(err error) (gopacket.LayerType, []byte) {
	p := &a.pkt
	if p.CapLength < p.Length {
		return gopacket.LayerTypeZero, nil
	}
	p.IsRDMA, p.Err = true, fmt.Errorf("%w: %w", ErrBadTunnel, err)
	return gopacket.LayerTypeZero, nil
}

// wrapChain packs a chain of up to maxWraps kinds, outermost in the low
// byte: a map key for the counts of Capture.Encapsulations.
type wrapChain uint64

// chainOf packs the kinds of ws.
func chainOf(ws []Wrap) wrapChain {
	var c wrapChain
	for i, w := range ws {
		c |= wrapChain(w.Kind) << (8 * i)
	}
	return c
}

// String spells the chain outermost first, "erspan2/vxlan".
func (c wrapChain) String() string {
	var b strings.Builder
	for ; c != 0; c >>= 8 {
		if b.Len() > 0 {
			b.WriteByte('/')
		}
		b.WriteString(WrapKind(c & 0xFF).String())
	}
	return b.String()
}

// ChainName names the chain of wraps ws as Encapsulation.Chain spells
// it, outermost first ("erspan3/vxlan"); "" for none.
func ChainName(ws []Wrap) string { return chainOf(ws).String() }

// wrap records an encapsulation of the frame being decoded; false, the
// frame malformed, when it is nested deeper than maxWraps.
func (a *Analyzer) wrap(k WrapKind, id uint32, outer bool) bool {
	p := &a.pkt
	if len(p.Wraps) == maxWraps {
		a.badTunnel(errTooDeep)
		return false
	}
	w := Wrap{Kind: k, ID: id}
	if outer {
		w.Src, w.Dst = p.Src.IP, p.Dst.IP
	}
	p.Wraps = append(p.Wraps, w)
	return true
}

// decodeGRE decodes a GRE header: ERSPAN I and NVGRE are recorded here,
// ERSPAN II and III by their own headers, GRE carrying IP as gre.
func (a *Analyzer) decodeGRE(data []byte) (gopacket.LayerType, []byte) {
	g := &a.gre
	if err := g.DecodeFromBytes(data, &a.fb); err != nil {
		return a.badTunnel(err)
	}
	next := g.NextLayerType()
	ok := true
	switch {
	case g.Protocol == gplayers.EthernetTypeERSPAN && next == gplayers.LayerTypeEthernet:
		ok = a.wrap(WrapERSPAN1, 0, true)
	case g.Protocol == gplayers.EthernetTypeTransparentEthernetBridging:
		ok = a.wrap(WrapNVGRE, g.Key>>8, true)
	case next == gplayers.LayerTypeIPv4 || next == gplayers.LayerTypeIPv6:
		ok = a.wrap(WrapGRE, g.Key, true)
	}
	if !ok {
		return gopacket.LayerTypeZero, nil
	}
	if next != gplayers.LayerTypeERSPANII { // its own header follows
		a.carried = len(g.Payload)
	}
	return next, g.Payload
}

// decodeERSPANII decodes an ERSPAN II header; the mirrored Ethernet frame
// follows.
func (a *Analyzer) decodeERSPANII(data []byte) (gopacket.LayerType, []byte) {
	e := &a.erspan2
	if err := e.DecodeFromBytes(data, &a.fb); err != nil {
		return a.badTunnel(err)
	}
	if !a.wrap(WrapERSPAN2, uint32(e.SessionID), true) {
		return gopacket.LayerTypeZero, nil
	}
	a.carried = len(e.Payload)
	return e.NextLayerType(), e.Payload
}

// decodeERSPANIII decodes an ERSPAN III header (and its platform
// subheader); the mirrored Ethernet frame or IP packet follows.
func (a *Analyzer) decodeERSPANIII(data []byte) (gopacket.LayerType, []byte) {
	e := &a.erspan3
	if err := e.DecodeFromBytes(data, &a.fb); err != nil {
		return a.badTunnel(err)
	}
	if !a.wrap(WrapERSPAN3, uint32(e.SessionID), true) {
		return gopacket.LayerTypeZero, nil
	}
	a.carried = len(e.Payload)
	return e.NextLayerType(), e.Payload
}

// decodeVXLAN decodes a VXLAN header; an Ethernet frame follows.
func (a *Analyzer) decodeVXLAN(data []byte) (gopacket.LayerType, []byte) {
	v := &a.vxlan
	if err := v.DecodeFromBytes(data, &a.fb); err != nil {
		return a.badTunnel(err)
	}
	if !a.wrap(WrapVXLAN, v.VNI, true) {
		return gopacket.LayerTypeZero, nil
	}
	a.carried = len(v.Payload)
	return v.NextLayerType(), v.Payload
}

// geneveLen is the fixed part of a GENEVE header (RFC 8926 §3.4).
const geneveLen = 8

// geneveHeader reads a GENEVE header: the layer it carries, its VNI and
// its length with the options, which it skips by their length
// (gopacket's Geneve allocates every option it decodes; nothing here
// needs them); err says why a header cut short, whose options run past
// the frame, or of another version does not decode.
func geneveHeader(data []byte) (next gopacket.LayerType, vni uint32, n int, err error) {
	if len(data) < geneveLen {
		return gopacket.LayerTypeZero, 0, 0, fmt.Errorf("geneve: %w: %d bytes, need %d", layers.ErrTruncated, len(data), geneveLen)
	}
	if v := data[0] >> 6; v != 0 {
		return gopacket.LayerTypeZero, 0, 0, fmt.Errorf("geneve: %w: version %d, want 0", layers.ErrBadHeader, v)
	}
	n = geneveLen + int(data[0]&0x3F)*4
	if len(data) < n {
		return gopacket.LayerTypeZero, 0, 0, fmt.Errorf("geneve: %w: options run to byte %d, past the %d bytes left", layers.ErrTruncated, n, len(data))
	}
	vni = uint32(data[4])<<16 | uint32(data[5])<<8 | uint32(data[6])
	return gplayers.EthernetType(binary.BigEndian.Uint16(data[2:4])).LayerType(), vni, n, nil
}

// decodeGENEVE decodes a GENEVE header.
func (a *Analyzer) decodeGENEVE(data []byte) (gopacket.LayerType, []byte) {
	next, vni, n, err := geneveHeader(data)
	if err != nil {
		return a.badTunnel(err)
	}
	if !a.wrap(WrapGENEVE, vni, true) {
		return gopacket.LayerTypeZero, nil
	}
	a.carried = len(data) - n
	return next, data[n:]
}

// mplsStack reads an MPLS label stack to its bottom: its top label, and
// what follows by its version nibble (IPv4 or IPv6), as routers go on;
// next is gopacket.LayerTypeZero for anything else. err says why a stack
// that ends without its bottom of stack (cut short, or no label has the
// S bit) does not decode. (gopacket's MPLS has no DecodingLayer.)
func mplsStack(data []byte) (top uint32, next gopacket.LayerType, rest []byte, err error) {
	if len(data) < 4 {
		return 0, gopacket.LayerTypeZero, nil, fmt.Errorf("mpls: %w: %d bytes, need 4", layers.ErrTruncated, len(data))
	}
	top = binary.BigEndian.Uint32(data) >> 12
	for labels := 1; len(data) >= 4; labels++ {
		bottom := data[2]&1 != 0
		data = data[4:]
		if !bottom {
			if len(data) < 4 {
				return top, gopacket.LayerTypeZero, nil, fmt.Errorf("mpls: %w: no bottom of stack in %d labels", layers.ErrTruncated, labels)
			}
			continue
		}
		if len(data) > 0 {
			switch data[0] >> 4 {
			case 4:
				return top, gplayers.LayerTypeIPv4, data, nil
			case 6:
				return top, gplayers.LayerTypeIPv6, data, nil
			}
		}
		break
	}
	return top, gopacket.LayerTypeZero, nil, nil
}

// decodeMPLS decodes an MPLS label stack; its top label names it.
func (a *Analyzer) decodeMPLS(data []byte) (gopacket.LayerType, []byte) {
	top, next, rest, err := mplsStack(data)
	if err != nil {
		return a.badTunnel(err)
	}
	if !a.wrap(WrapMPLS, top, false) {
		return gopacket.LayerTypeZero, nil
	}
	return next, rest
}

// udpTunnel is the encapsulation a UDP destination port carries.
func udpTunnel(port gplayers.UDPPort) gopacket.LayerType {
	switch port {
	case 4789:
		return gplayers.LayerTypeVXLAN
	case 6081:
		return gplayers.LayerTypeGeneve
	}
	return gopacket.LayerTypeZero
}
