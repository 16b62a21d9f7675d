package analyze

import "github.com/roce-dissect/roce-dissect/analyze/internal/decode"

// Frames delivered inside other packets: the decode stage walks through
// their encapsulations (package analyze/internal/decode) and shows each
// in Packet.Wraps; the flows of a tunnel that keys them are the tunnel's
// (flowTunnel), and the capture summary counts the frames of each chain
// of wraps and of each tunnel (wrapcount.go).

// WrapKind is a kind of encapsulation around a frame.
type WrapKind = decode.WrapKind

// Encapsulations the Analyzer walks through.
const (
	WrapNone    = decode.WrapNone
	WrapERSPAN1 = decode.WrapERSPAN1 // GRE 0x88BE without sequence number: the mirrored frame follows the GRE header
	WrapERSPAN2 = decode.WrapERSPAN2 // GRE 0x88BE with sequence number, then an 8-byte ERSPAN II header
	WrapERSPAN3 = decode.WrapERSPAN3 // GRE 0x22EB, then a 12-byte ERSPAN III header (and its optional platform subheader)
	WrapGRE     = decode.WrapGRE     // GRE carrying IPv4 or IPv6
	WrapNVGRE   = decode.WrapNVGRE   // GRE 0x6558 (transparent Ethernet bridging), the key holding the VSID
	WrapVXLAN   = decode.WrapVXLAN   // UDP 4789
	WrapGENEVE  = decode.WrapGENEVE  // UDP 6081
	WrapQinQ    = decode.WrapQinQ    // two or more VLAN tags on one Ethernet header (802.1ad)
	WrapMPLS    = decode.WrapMPLS    // an MPLS label stack
)

// Wrap is one encapsulation a frame arrived in: its kind, the outer
// addresses it travelled between (invalid when it has none: QinQ, MPLS)
// and its identifier (ERSPAN session ID, VNI, VSID, GRE key, S-VLAN ID or
// top MPLS label; see WrapKind.IDName).
type Wrap = decode.Wrap

// FlowTunnel is the tunnel identity of a flow (Flow.Tunnel): the
// innermost VXLAN or GENEVE VNI, NVGRE VSID or ERSPAN type II or III
// session its packets arrived in. Overlapping tenants reuse addresses and
// QPs; the same inner flow in VNI 100 and in VNI 200 is two flows.
type FlowTunnel = decode.FlowTunnel

// ErrBadTunnel is wrapped by the reason of a frame whose mirror or tunnel
// header (GRE, ERSPAN, VXLAN, GENEVE, an MPLS label stack) is cut or
// invalid, or whose encapsulations nest deeper than the Analyzer follows:
// such a frame is malformed, not another protocol, so that a damaged
// mirror stream is not read as traffic that is not RDMA.
var ErrBadTunnel = decode.ErrBadTunnel

// ChainName names the chain of wraps ws as Encapsulation.Chain spells
// it, outermost first ("erspan3/vxlan"); "" for none.
func ChainName(ws []Wrap) string { return decode.ChainName(ws) }

// flowTunnel is the tunnel identity a flow is keyed by besides its
// addresses and QP: the kind and identifier of decode.KeyingWrap (the
// innermost wrap that keys flows); the zero flowTunnel for a frame in
// none.
type flowTunnel struct {
	kind WrapKind // WrapNone: none
	id   uint32
}

// flowTunnelOf is the flow tunnel of a frame's wraps.
func flowTunnelOf(ws []Wrap) flowTunnel {
	if w := decode.KeyingWrap(ws); w != nil {
		return flowTunnel{kind: w.Kind, id: w.ID}
	}
	return flowTunnel{}
}

// value is the flow tunnel as a FlowTunnel; the zero FlowTunnel for none.
func (t flowTunnel) value() FlowTunnel { return t.kind.Tunnel(t.id) }

// report is the flow tunnel as Flow.Tunnel shows it; nil for none.
func (t flowTunnel) report() *FlowTunnel {
	if t.kind == WrapNone {
		return nil
	}
	v := t.value()
	return &v
}
