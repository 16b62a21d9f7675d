package analyze

import (
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
)

// The decoded packet is the decode stage's (package
// analyze/internal/decode); these are its names in the API.

// Encap is how an IB packet was carried.
type Encap = decode.Encap

// Encapsulations.
const (
	EncapNone   = decode.EncapNone
	EncapRoCEv2 = decode.EncapRoCEv2
	EncapRoCEv1 = decode.EncapRoCEv1
	EncapIB     = decode.EncapIB
)

// Addr is a network address of a flow: an IP address (RoCE v2), a GID
// (RoCE v1, native IB with GRH) or a LID (native IB without GRH).
type Addr = decode.Addr

// Packet is the decoded view of the last frame fed, valid until the next
// Feed. Header pointers are nil when the header is absent.
type Packet = decode.Packet

// SupportsLinkType reports whether the Analyzer decodes frames of a link
// type; frames of other link types are counted as other packets.
func SupportsLinkType(lt gplayers.LinkType) bool { return decode.SupportsLinkType(lt) }
