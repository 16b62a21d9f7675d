package decode

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// Encap is how an IB packet was carried.
type Encap uint8

// Encapsulations.
const (
	EncapNone Encap = iota
	EncapRoCEv2
	EncapRoCEv1
	EncapIB
)

// String names the encapsulation.
func (e Encap) String() string {
	return [...]string{"none", "RoCEv2", "RoCEv1", "IB"}[e%4]
}

// Addr is a network address of a flow: an IP address (RoCE v2), a GID
// (RoCE v1, native IB with GRH) or a LID (native IB without GRH).
type Addr struct {
	IP    netip.Addr // IP address or GID
	LID   uint16
	IsLID bool
}

// String renders the address: IPv4 dotted, IPv6/GID in IPv6 form, or "LID n".
func (a Addr) String() string {
	if a.IsLID {
		return fmt.Sprintf("LID %d", a.LID)
	}
	if !a.IP.IsValid() {
		return "?"
	}
	return a.IP.String()
}

// Packet is the decoded view of the last frame a Decoder decoded (the
// last frame an Analyzer was fed), valid until its next Decode. Header
// pointers are nil when the header is absent.
type Packet struct {
	Frame  uint64
	Time   time.Time
	Length int // original (wire) length
	// CarriedLength is the wire length of the frame a mirror session or
	// tunnel carried (ERSPAN, VXLAN, GENEVE, NVGRE, GRE: Length less the
	// headers around it), which flows count; Length for a frame that
	// arrived as sent (QinQ tags and MPLS labels are on the wire too).
	CarriedLength int
	CapLength     int
	Encap         Encap
	IsRDMA        bool
	Src, Dst      Addr
	// VLAN is the innermost VLAN tag of the innermost Ethernet header
	// (the customer VLAN under a QinQ S-tag; in a tunnel, the carried
	// frame's); -1 when untagged.
	VLAN int
	// Wraps are the encapsulations the frame arrived in, outermost first
	// (a switch mirror's ERSPAN, an overlay's VXLAN, QinQ, MPLS; see
	// Wrap); empty for a frame captured as it was sent. The addresses,
	// ECN and ICRC are the innermost packet's.
	Wraps []Wrap
	ECN   uint8
	// Priority is the 802.1p priority the frame travelled in: its
	// innermost VLAN tag's PCP, else its DSCP mapped by
	// Options.DSCPPriority; -1 for neither (native IB).
	Priority int8
	// IPID is the IPv4 identification field (RoCE v2 over IPv4), 0 otherwise.
	IPID uint16
	// HopLimit is the innermost network header's IPv4 TTL, IPv6 hop limit
	// or GRH hop limit, and FlowLabel its IPv6 or GRH flow label (0 for
	// IPv4); both 0 without a network header (native IB without a GRH).
	HopLimit  uint8
	FlowLabel uint32

	LRH          *layers.LRH
	GRH          *layers.GRH
	BTH          *layers.BTH
	RDETH        *layers.RDETH
	DETH         *layers.DETH
	XRCETH       *layers.XRCETH
	RETH         *layers.RETH
	AtomicETH    *layers.AtomicETH
	AETH         *layers.AETH
	AtomicAckETH *layers.AtomicAckETH
	ImmDt        *layers.ImmDt
	IETH         *layers.IETH
	FETH         *layers.FETH
	DCETH        *layers.DCETH // DC packets (BTH.DC) only
	CNP          *layers.CNP
	// MACControl is a PFC or 802.3x PAUSE frame's (MAC Control) header;
	// the frame is not RDMA traffic (IsRDMA false).
	MACControl *layers.MACControl
	// MAD is the management datagram (QP0/QP1 payload), aliasing the frame.
	MAD []byte
	// MADLayer is MAD decoded (header, and the CM message when captured),
	// or nil when not even its header was captured.
	MADLayer *cm.MAD

	// Payload is the IB payload the frame carries after the transport
	// headers (without pad and ICRC; what the capture kept of it when cut
	// short), aliasing the frame: valid until the next Decode. Empty for a
	// packet without payload; nil for a MAD (see MAD) or a packet whose
	// headers did not decode.
	Payload []byte
	// PayloadLen is the IB payload length from the length fields (exact
	// even for header-only captures); -1 when unknown.
	PayloadLen int
	// Truncated is true when the capture cut the packet short.
	Truncated bool
	ICRC      layers.ICRCResult
	VCRC      *layers.VCRCResult
	// Err is the reason a malformed RDMA frame could not be decoded, or
	// why a frame's mirror or tunnel header did not (wrapping
	// ErrBadTunnel; IsRDMA is then true too, the frame counted malformed).
	Err error
	// Findings counts the findings this frame produced.
	Findings int

	// SrcPortRewritten is true when the ICRC verified only with UDP
	// source port OriginalSrcPort instead of the captured 4791 (a NIC
	// sniffer capture); ICRC is then ok.
	SrcPortRewritten bool
	OriginalSrcPort  uint16
}
