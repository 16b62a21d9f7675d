package layers

import (
	"fmt"
	"strings"

	"github.com/gopacket/gopacket"
)

// RDDecoding says how a BTH decodes the opcodes of the RD range
// (0x40–0x54): as Reliable Datagram, as the IBTA specifies them, or as
// NVIDIA's Dynamically Connected (DC) transport, which reuses them.
//
// No NIC ever shipped RD, on Ethernet or on InfiniBand, while DC runs on
// ConnectX NICs over both (UCX and MPI use it on InfiniBand clusters). A
// DC packet carries 20 bytes after the BTH where RD has an RDETH and a
// DETH (12 bytes, requests) or an RDETH alone (4 bytes, responses): the
// RDETH place (4), the DETH place (8) and a DCETH (8); then the headers RC
// would carry (RETH, AETH, ImmDt, AtomicETH, …) and the payload.
//
// RDDecodeAuto, the zero value, decides per packet from the packet alone
// (no state, no link type): an RD-range opcode is DC unless the packet is
// whole (not cut by the snap length) and, between the BTH and the ICRC,
// too short for the DC headers while long enough for the RD ones, which
// only an RD packet (or a broken one) can be. A packet too short for
// either is decoded as DC, whose error then names the DC headers. RD packets long enough for the DC headers (sends and writes
// with 8 or more payload bytes) therefore decode as DC: force RDDecodeRD
// for a capture of real RD traffic. Opcode 0x55 (RD RESYNC) has no known
// DC meaning and always decodes as RD.
type RDDecoding uint8

// How RD-range opcodes are decoded.
const (
	RDDecodeAuto RDDecoding = iota // DC unless the length proves RD
	RDDecodeRD                     // always Reliable Datagram (IBTA)
	RDDecodeDC                     // always Dynamically Connected
)

// String returns "auto", "rd" or "dc".
func (d RDDecoding) String() string {
	switch d {
	case RDDecodeRD:
		return "rd"
	case RDDecodeDC:
		return "dc"
	}
	return "auto"
}

// ParseRDDecoding parses "auto", "rd" or "dc" (any case).
func ParseRDDecoding(s string) (RDDecoding, error) {
	switch strings.ToLower(s) {
	case "auto", "":
		return RDDecodeAuto, nil
	case "rd":
		return RDDecodeRD, nil
	case "dc":
		return RDDecodeDC, nil
	}
	return RDDecodeAuto, fmt.Errorf("layers: %q is not an RD decoding (auto, rd, dc)", s)
}

// decodesAsDC decides whether the packet is DC (see RDDecoding). body is
// what follows the BTH up to the ICRC, pad included (up to the end of the
// capture when truncated).
func (b *BTH) decodesAsDC(body []byte, truncated bool) bool {
	if b.Opcode.Transport() != TransportRD || !dcTable[b.Opcode.Operation()].known {
		return false
	}
	switch b.DecodeRDAs {
	case RDDecodeRD:
		return false
	case RDDecodeDC:
		return true
	}
	if truncated {
		return true
	}
	fitsDC := len(body) >= int(dcTable[b.Opcode.Operation()].hdrLen)
	fitsRD := len(body) >= int(opTable[b.Opcode].hdrLen)
	return fitsDC || !fitsRD
}

// info returns the table entry of the packet's opcode as decoded: the DC
// entry for a DC packet.
func (b *BTH) info() *opInfo {
	if b.DC {
		return &dcTable[b.Opcode.Operation()]
	}
	return &opTable[b.Opcode]
}

// Transport returns the packet's transport: TransportDC for a packet
// decoded as DC, else Opcode.Transport.
func (b *BTH) Transport() Transport {
	if b.DC {
		return TransportDC
	}
	return b.Opcode.Transport()
}

// OpcodeName returns the opcode's name as decoded: "DC_RDMA_WRITE_ONLY"
// for a DC packet, else Opcode.String ("RD_RDMA_WRITE_ONLY", …).
func (b *BTH) OpcodeName() string {
	if b.DC {
		return b.info().name
	}
	return b.Opcode.String()
}

// Headers returns the extension headers of the packet as decoded, in wire
// order: Opcode.Headers, or for a DC packet RDETH, DETH, DCETH and the
// headers of the RC opcode.
func (b *BTH) Headers() []gopacket.LayerType {
	info := b.info()
	return info.headers[:info.nHeaders:info.nHeaders]
}

// HeaderLen returns the total length of the packet's extension headers
// (20 more than RC for DC).
func (b *BTH) HeaderLen() int { return int(b.info().hdrLen) }
