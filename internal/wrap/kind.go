package wrap

import (
	"fmt"
	"strings"
)

// Kind is one encapsulation a frame can be wrapped in. Each kind adds a
// fixed number of bytes to the frame (Overhead), written below next to
// its constant.
type Kind uint8

// Encapsulations. The outer addresses are those of a Wrapper: a mirror
// session (switch → collector) for ERSPAN, one VTEP (NVE) per inner host
// for the overlays.
const (
	// ERSPAN1 is ERSPAN type I: Ethernet / IPv4 / GRE (protocol 0x88BE,
	// no optional field) / the frame. 38 bytes.
	ERSPAN1 Kind = iota + 1
	// ERSPAN2 is ERSPAN type II: Ethernet / IPv4 / GRE (0x88BE with a
	// sequence number) / 8-byte ERSPAN II header / the frame. 50 bytes.
	ERSPAN2
	// ERSPAN3 is ERSPAN type III: Ethernet / IPv4 / GRE (0x22EB with a
	// sequence number) / 12-byte ERSPAN III header (timestamp in 100 µs
	// units) / the frame. 54 bytes.
	ERSPAN3
	// ERSPAN3Platform is ERSPAN type III with the O bit and the 8-byte
	// platform specific subheader (platform ID 3: port index and the upper
	// 32 bits of an IEEE 1588 timestamp, the header's timestamp being its
	// nanoseconds). 62 bytes.
	ERSPAN3Platform
	// VXLAN is Ethernet / IPv4 / UDP (destination port 4789) / 8-byte
	// VXLAN header / the frame. 50 bytes.
	VXLAN
	// Geneve is Ethernet / IPv4 / UDP (destination port 6081) / 8-byte
	// Geneve header with one 8-byte TLV option / the frame. 58 bytes.
	Geneve
	// NVGRE is Ethernet / IPv4 / GRE (protocol 0x6558, key = VSID<<8 |
	// flow ID) / the frame. 42 bytes.
	NVGRE
	// QinQ pushes an 802.1ad S-tag (EtherType 0x88A8) in front of the
	// frame's tags or EtherType. 4 bytes.
	QinQ
	// MPLS replaces the frame's IPv4 or IPv6 EtherType by 0x8847 and
	// pushes two labels, the inner one bottom of stack, in front of the IP
	// packet (over an MPLS frame: two more labels on its stack). A frame
	// carrying anything else (RoCE v1, ARP…) cannot be MPLS-wrapped.
	// 8 bytes.
	MPLS
)

// kindSpec is what the table knows of a kind.
type kindSpec struct {
	name     string
	overhead int
}

// kinds is the table of the encapsulations, indexed by Kind: a new kind
// is a constant above, a line here and its function in applyKind.
var kinds = [...]kindSpec{
	ERSPAN1:         {"erspan1", ethLen + ipv4Len + greLen},
	ERSPAN2:         {"erspan2", ethLen + ipv4Len + greLen + seqLen + erspan2Len},
	ERSPAN3:         {"erspan3", ethLen + ipv4Len + greLen + seqLen + erspan3Len},
	ERSPAN3Platform: {"erspan3-platform", ethLen + ipv4Len + greLen + seqLen + erspan3Len + platformLen},
	VXLAN:           {"vxlan", ethLen + ipv4Len + udpLen + vxlanLen},
	Geneve:          {"geneve", ethLen + ipv4Len + udpLen + geneveLen + geneveOptLen},
	NVGRE:           {"nvgre", ethLen + ipv4Len + greLen + keyLen},
	QinQ:            {"qinq", tagLen},
	MPLS:            {"mpls", 2 * labelLen},
}

// Valid reports whether k is one of the encapsulations.
func (k Kind) Valid() bool { return k > 0 && int(k) < len(kinds) }

// String returns the kind's name as Parse reads it ("erspan2", …).
func (k Kind) String() string {
	if k.Valid() {
		return kinds[k].name
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Overhead is the number of bytes the kind adds to a frame (0 for an
// invalid kind).
func (k Kind) Overhead() int {
	if k.Valid() {
		return kinds[k].overhead
	}
	return 0
}

// Kinds returns every encapsulation, in the order of their constants.
func Kinds() []Kind {
	out := make([]Kind, 0, len(kinds)-1)
	for k := Kind(1); k.Valid(); k++ {
		out = append(out, k)
	}
	return out
}

// Names returns the kinds' names, in the order of Kinds.
func Names() []string {
	var out []string
	for _, k := range Kinds() {
		out = append(out, k.String())
	}
	return out
}

// ParseKind parses one kind's name (case-insensitive).
func ParseKind(s string) (Kind, error) {
	s = strings.TrimSpace(s)
	for _, k := range Kinds() {
		if strings.EqualFold(s, kinds[k].name) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("wrap: unknown encapsulation %q (want one of %s)", s, strings.Join(Names(), ", "))
}

// Chain is a nesting of encapsulations, outermost first: the order in
// which the headers follow each other on the wire. Chain{ERSPAN2, VXLAN}
// is a switch mirroring (ERSPAN II) the underlay of a VXLAN overlay: the
// frame is wrapped in VXLAN first, then the VXLAN frame in ERSPAN II.
type Chain []Kind

// Parse parses a comma-separated chain of kind names, outermost first
// ("erspan2,vxlan": ERSPAN II around VXLAN around the frame). The empty
// string is the empty chain; an unknown or empty name is an error that
// lists the valid ones.
func Parse(s string) (Chain, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var c Chain
	for f := range strings.SplitSeq(s, ",") {
		k, err := ParseKind(f)
		if err != nil {
			return nil, err
		}
		c = append(c, k)
	}
	return c, nil
}

// String returns the kinds' names joined by "/", outermost first
// ("erspan2/vxlan"): the chain's name in a Truth.
func (c Chain) String() string {
	var b strings.Builder
	for i, k := range c {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(k.String())
	}
	return b.String()
}

// Overhead is the number of bytes the chain adds to a frame.
func (c Chain) Overhead() int {
	n := 0
	for _, k := range c {
		n += k.Overhead()
	}
	return n
}
