package decode

import (
	"net"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/layers"
)

// Options tune a Decoder. The zero value decodes RoCE v2 on UDP port 4791
// only, the RD opcodes per packet, and maps DSCP d to priority d >> 3.
type Options struct {
	// RoCEPorts are UDP destination ports decoded as RoCE v2 besides 4791.
	RoCEPorts []uint16
	// DecodeRDAs says how the RD opcodes (0x40–0x54) are decoded (see
	// layers.RDDecoding).
	DecodeRDAs layers.RDDecoding
	// DSCPPriority maps a DSCP (index 0–63) to the 802.1p priority of an
	// untagged packet; nil maps DSCP d to d >> 3.
	DSCPPriority []uint8
}

// Decoder decodes frames into Packets, one at a time, into layers and a
// Packet of its own: decoding a frame allocates nothing, and what Decode
// returns is valid until the next Decode. A Decoder is not safe for
// concurrent use.
type Decoder struct {
	opts Options

	fb    feedback
	eth   gplayers.Ethernet
	sll   gplayers.LinuxSLL
	sll2  gplayers.LinuxSLL2
	dot1q gplayers.Dot1Q
	ip4   gplayers.IPv4
	ip6   gplayers.IPv6
	udp   gplayers.UDP
	mac   layers.MACControl
	// The encapsulations (tunnel.go).
	gre     gplayers.GRE
	erspan2 gplayers.ERSPANII
	erspan3 layers.ERSPANIII
	vxlan   gplayers.VXLAN
	wraps   [MaxWraps]Wrap // the Packet's Wraps
	carried int            // the bytes captured from the start of the carried frame on; -1: none
	ib      *layers.TransportLayers
	ext     extTable // ib's extension headers by layer type (transport.go)

	pkt Packet
	hdr Headers
}

// Headers is what Decode learned of a frame besides its Packet: what the
// checks after decoding need (the ICRC, the cut frames, the counts of the
// frames that are not RDMA, pause frames).
type Headers struct {
	// IBLen is the IB packet length from the BTH through the ICRC as the
	// length fields give it; -1 when unknown.
	IBLen int
	// Network is the kind of the network header the ICRC covers, NetHdr
	// its bytes and UDPHdr the RoCE v2 UDP header's.
	Network layers.NetworkKind
	NetHdr  []byte
	UDPHdr  []byte
	// Other is the protocol of a frame that is not RDMA traffic.
	Other Other
	// OrigLength is the original length the frame's record gave, which
	// Packet.Length is unless it is above MaxOriginalLength.
	OrigLength int
	// Lens are the lengths the frame's headers declare.
	Lens Lens
	// SrcMAC is the Ethernet source of a MAC Control frame, set only
	// with Packet.MACControl.
	SrcMAC net.HardwareAddr
}

// New returns a Decoder.
func New(opts Options) *Decoder {
	ib := layers.NewTransportLayers()
	ib.BTH.DecodeRDAs = opts.DecodeRDAs
	d := &Decoder{opts: opts, ib: ib}
	d.ext = newExtTable(ib, &d.pkt)
	return d
}

// feedback is the DecodeFeedback of the decoders: it carries the
// truncation flag from the length checks of IPv4/UDP/GRH/LRH to the BTH.
type feedback struct{ truncated bool }

func (f *feedback) SetTruncated()     { f.truncated = true }
func (f *feedback) IsTruncated() bool { return f.truncated }

// Packet is the Decoder's Packet: the last frame decoded.
func (d *Decoder) Packet() *Packet { return &d.pkt }

// Headers is what the last Decode learned besides its Packet.
func (d *Decoder) Headers() *Headers { return &d.hdr }

// firstLayer returns the layer a frame of the link type starts with.
func firstLayer(lt gplayers.LinkType, data []byte) (gopacket.LayerType, bool) {
	switch lt {
	case gplayers.LinkTypeEthernet:
		return gplayers.LayerTypeEthernet, true
	case layers.LinkTypeInfiniBand:
		return layers.LayerTypeLRH, true
	case layers.LinkTypeERF:
		return layers.LayerTypeERF, true
	case gplayers.LinkTypeLinuxSLL:
		return gplayers.LayerTypeLinuxSLL, true
	case gplayers.LinkTypeLinuxSLL2:
		return gplayers.LayerTypeLinuxSLL2, true
	case gplayers.LinkTypeRaw: // IPv4 or IPv6, as the version nibble says
		if len(data) > 0 && data[0]>>4 == 6 {
			return gplayers.LayerTypeIPv6, true
		}
		return gplayers.LayerTypeIPv4, true
	case gplayers.LinkTypeIPv4:
		return gplayers.LayerTypeIPv4, true
	case gplayers.LinkTypeIPv6:
		return gplayers.LayerTypeIPv6, true
	}
	return 0, false
}

// SupportsLinkType reports whether a Decoder decodes frames of a link
// type; frames of other link types are not RDMA traffic.
func SupportsLinkType(lt gplayers.LinkType) bool {
	_, ok := firstLayer(lt, nil)
	return ok
}

// IsRoCEPort reports whether a UDP destination port carries RoCE v2: 4791
// or one of Options.RoCEPorts.
func (d *Decoder) IsRoCEPort(port uint16) bool {
	if port == uint16(layers.UDPPortRoCEv2) {
		return true
	}
	for _, p := range d.opts.RoCEPorts {
		if p == port {
			return true
		}
	}
	return false
}

// priority is the 802.1p priority of a frame of headers h: its innermost
// tag's PCP, else its DSCP mapped by Options.DSCPPriority; -1 for
// neither.
func (d *Decoder) priority(h *frameHeaders) int8 {
	switch {
	case h.pcp >= 0:
		return h.pcp
	case h.dscp < 0:
		return -1
	case int(h.dscp) < len(d.opts.DSCPPriority):
		return int8(d.opts.DSCPPriority[h.dscp] & 7)
	}
	return h.dscp >> 3
}
