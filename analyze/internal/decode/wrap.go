package decode

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"

	"github.com/gopacket/gopacket"
)

// Frames delivered inside other packets.
//
// A switch mirror wraps each frame it copies in ERSPAN (GRE); overlays
// carry RoCE in VXLAN, GENEVE or NVGRE; provider edges add 802.1ad
// S-tags or MPLS labels. A Decoder walks through all of them to the
// RDMA packet inside, which alone makes the flow (its addresses, ECN,
// ICRC); each layer it walked through is a Wrap of the Packet, and the
// capture summary counts the frames of each chain of wraps and of each
// tunnel or mirror session (Capture.Encapsulations, Capture.Tunnels).

// WrapKind is a kind of encapsulation around a frame.
type WrapKind uint8

// Encapsulations a Decoder walks through.
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

// FlowTunnel is the tunnel identity of a flow (Flow.Tunnel): the
// innermost VXLAN or GENEVE VNI, NVGRE VSID or ERSPAN type II or III
// session its packets arrived in. Overlapping tenants reuse addresses and
// QPs; the same inner flow in VNI 100 and in VNI 200 is two flows.
type FlowTunnel struct {
	// Kind is the encapsulation, as in Encapsulation.Chain ("vxlan").
	Kind string `json:"kind"`
	// ID is the VNI, VSID or session ID; IDName says which.
	ID     uint32 `json:"id"`
	IDName string `json:"id_name"`
}

// String names the tunnel as a flow's name ends with it, "vxlan VNI 100";
// "" for nil or the zero FlowTunnel (none).
func (t *FlowTunnel) String() string {
	if t == nil || t.Kind == "" {
		return ""
	}
	return fmt.Sprintf("%s %s %d", t.Kind, t.IDName, t.ID)
}

// KeyingWrap is the wrap of ws whose identifier keys flows besides their
// addresses and QP: the innermost of a kind that keys flows (VXLAN or
// GENEVE VNI, NVGRE VSID, ERSPAN II or III session ID); nil for none.
// Overlapping tenants reuse addresses and QPs: one inner flow in two VNIs
// is two flows. (A pointer into ws: the flow table reads two of its
// fields for every packet.)
func KeyingWrap(ws []Wrap) *Wrap {
	for i := len(ws) - 1; i >= 0; i-- {
		if w := &ws[i]; w.Kind < wrapKinds && wrapKindTable[w.Kind].keysFlows {
			return w
		}
	}
	return nil
}

// Tunnel is the FlowTunnel of identifier id of this kind; the zero
// FlowTunnel for WrapNone. Its strings are the table's: it allocates
// nothing.
func (k WrapKind) Tunnel(id uint32) FlowTunnel {
	if k == WrapNone {
		return FlowTunnel{}
	}
	return FlowTunnel{Kind: k.String(), ID: id, IDName: k.IDName()}
}

// Tunnel returns the tunnel that is part of the key of the packet's flow
// (Flow.Tunnel), the zero FlowTunnel for none, for a caller that keys the
// packets of flows as the Analyzer does (FlowTunnel is comparable).
func (p *Packet) Tunnel() FlowTunnel {
	if w := KeyingWrap(p.Wraps); w != nil {
		return w.Kind.Tunnel(w.ID)
	}
	return FlowTunnel{}
}

// MaxWraps is how deep a Decoder follows encapsulations inside each
// other; a frame nested deeper is malformed (ErrBadTunnel).
const MaxWraps = 8

// ErrBadTunnel is wrapped by the reason of a frame whose mirror or tunnel
// header (GRE, ERSPAN, VXLAN, GENEVE, an MPLS label stack) is cut or
// invalid, or whose encapsulations nest deeper than a Decoder follows
// (MaxWraps): such a frame is malformed, not another protocol, so that a
// damaged mirror stream is not read as traffic that is not RDMA.
var ErrBadTunnel = errors.New("bad tunnel header")

// errTooDeep is the reason of a frame nested deeper than MaxWraps.
var errTooDeep = fmt.Errorf("encapsulations nested deeper than %d", MaxWraps)

// badTunnel makes the frame being decoded malformed for err, the reason
// its mirror or tunnel header does not decode, and stops the walk. A
// frame the capture tool cut (captured shorter than on the wire, as a
// snap length cuts a header-only capture) is not damaged: its headers
// ran past what was kept, and it stops as a frame of unknown protocol.
func (p *Packet) badTunnel(err error) (gopacket.LayerType, []byte) {
	if p.CapLength < p.Length {
		return gopacket.LayerTypeZero, nil
	}
	p.IsRDMA, p.Err = true, fmt.Errorf("%w: %w", ErrBadTunnel, err)
	return gopacket.LayerTypeZero, nil
}

// Chain packs a chain of up to MaxWraps kinds, outermost in the low
// byte: a map key for the counts of Capture.Encapsulations.
type Chain uint64

// ChainOf packs the kinds of ws.
func ChainOf(ws []Wrap) Chain {
	var c Chain
	for i, w := range ws {
		c |= Chain(w.Kind) << (8 * i)
	}
	return c
}

// String spells the chain outermost first, "erspan2/vxlan".
func (c Chain) String() string {
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
func ChainName(ws []Wrap) string { return ChainOf(ws).String() }
