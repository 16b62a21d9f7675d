package layers

import (
	"fmt"

	"github.com/gopacket/gopacket"
)

// Opcode is the BTH OpCode: the transport in the high three bits and the
// operation in the low five. It fixes which extension headers follow the
// BTH (see Headers).
type Opcode uint8

// Transport is the transport service of an opcode (OpCode bits 7–5).
type Transport uint8

// Transports, as the high three bits of the opcode.
const (
	TransportRC     Transport = 0x00 // Reliable Connection
	TransportUC     Transport = 0x20 // Unreliable Connection
	TransportRD     Transport = 0x40 // Reliable Datagram
	TransportUD     Transport = 0x60 // Unreliable Datagram
	TransportCNP    Transport = 0x80 // Congestion Notification Packets
	TransportXRC    Transport = 0xA0 // eXtended Reliable Connection
	TransportVendor Transport = 0xC0 // manufacturer specific (0xC0–0xFF)
	// TransportDC is NVIDIA's Dynamically Connected transport. It has no
	// opcode range of its own: it uses the RD opcodes (0x40–0x5F), so
	// Opcode.Transport never returns it; BTH.Transport does for a packet
	// decoded as DC (see RDDecoding).
	TransportDC Transport = 0x41
)

// String returns the transport's abbreviation ("RC", "UD", …).
func (t Transport) String() string {
	switch t {
	case TransportRC:
		return "RC"
	case TransportUC:
		return "UC"
	case TransportRD:
		return "RD"
	case TransportUD:
		return "UD"
	case TransportCNP:
		return "CNP"
	case TransportXRC:
		return "XRC"
	case TransportDC:
		return "DC"
	}
	return "VENDOR"
}

// Operation is the low five bits of an opcode, shared by the transports
// (RC SEND_FIRST and UC SEND_FIRST are both OperationSendFirst).
type Operation uint8

// Operations (opcode bits 4–0), named after the RC opcodes.
const (
	OperationSendFirst                  Operation = 0x00
	OperationSendMiddle                 Operation = 0x01
	OperationSendLast                   Operation = 0x02
	OperationSendLastWithImmediate      Operation = 0x03
	OperationSendOnly                   Operation = 0x04
	OperationSendOnlyWithImmediate      Operation = 0x05
	OperationRDMAWriteFirst             Operation = 0x06
	OperationRDMAWriteMiddle            Operation = 0x07
	OperationRDMAWriteLast              Operation = 0x08
	OperationRDMAWriteLastWithImmediate Operation = 0x09
	OperationRDMAWriteOnly              Operation = 0x0A
	OperationRDMAWriteOnlyWithImmediate Operation = 0x0B
	OperationRDMAReadRequest            Operation = 0x0C
	OperationRDMAReadResponseFirst      Operation = 0x0D
	OperationRDMAReadResponseMiddle     Operation = 0x0E
	OperationRDMAReadResponseLast       Operation = 0x0F
	OperationRDMAReadResponseOnly       Operation = 0x10
	OperationAcknowledge                Operation = 0x11
	OperationAtomicAcknowledge          Operation = 0x12
	OperationCompareSwap                Operation = 0x13
	OperationFetchAdd                   Operation = 0x14
	OperationResync                     Operation = 0x15
	OperationSendLastWithInvalidate     Operation = 0x16
	OperationSendOnlyWithInvalidate     Operation = 0x17
	OperationFlush                      Operation = 0x1C
	OperationAtomicWrite                Operation = 0x1D
)

// Commonly used opcodes. Every opcode of the table has a name through
// String; these constants are the ones code refers to most.
const (
	OpcodeRCSendFirst              Opcode = 0x00
	OpcodeRCSendMiddle             Opcode = 0x01
	OpcodeRCSendLast               Opcode = 0x02
	OpcodeRCSendLastWithImmediate  Opcode = 0x03
	OpcodeRCSendOnly               Opcode = 0x04
	OpcodeRCSendOnlyWithImmediate  Opcode = 0x05
	OpcodeRCRDMAWriteFirst         Opcode = 0x06
	OpcodeRCRDMAWriteMiddle        Opcode = 0x07
	OpcodeRCRDMAWriteLast          Opcode = 0x08
	OpcodeRCRDMAWriteLastWithImm   Opcode = 0x09
	OpcodeRCRDMAWriteOnly          Opcode = 0x0A
	OpcodeRCRDMAWriteOnlyWithImm   Opcode = 0x0B
	OpcodeRCRDMAReadRequest        Opcode = 0x0C
	OpcodeRCRDMAReadResponseFirst  Opcode = 0x0D
	OpcodeRCRDMAReadResponseMiddle Opcode = 0x0E
	OpcodeRCRDMAReadResponseLast   Opcode = 0x0F
	OpcodeRCRDMAReadResponseOnly   Opcode = 0x10
	OpcodeRCAcknowledge            Opcode = 0x11
	OpcodeRCAtomicAcknowledge      Opcode = 0x12
	OpcodeRCCompareSwap            Opcode = 0x13
	OpcodeRCFetchAdd               Opcode = 0x14
	OpcodeRCSendLastWithInvalidate Opcode = 0x16
	OpcodeRCSendOnlyWithInvalidate Opcode = 0x17
	OpcodeRCFlush                  Opcode = 0x1C
	OpcodeRCAtomicWrite            Opcode = 0x1D
	OpcodeUCSendOnly               Opcode = 0x24
	OpcodeUCRDMAWriteOnly          Opcode = 0x2A
	OpcodeUDSendOnly               Opcode = 0x64
	OpcodeUDSendOnlyWithImmediate  Opcode = 0x65
	OpcodeCNP                      Opcode = 0x80 // native InfiniBand CNP
	OpcodeRoCEv2CNP                Opcode = 0x81 // RoCE v2 CNP, as ConnectX NICs send it
	OpcodeXRCSendOnly              Opcode = 0xA4
	OpcodeXRCRDMAWriteOnly         Opcode = 0xAA
	OpcodeXRCRDMAReadRequest       Opcode = 0xAC
	OpcodeXRCAcknowledge           Opcode = 0xB1
)

// Position tells where a packet sits in its message.
type Position uint8

// Positions of a packet in a message.
const (
	PositionNone   Position = iota // not part of a multi-packet message (ACK, CNP, atomic)
	PositionFirst                  // FIRST: exactly one path MTU of payload
	PositionMiddle                 // MIDDLE: exactly one path MTU of payload
	PositionLast                   // LAST: at most one path MTU
	PositionOnly                   // ONLY: the whole message, at most one path MTU
)

// String returns "first", "middle", "last", "only" or "none".
func (p Position) String() string {
	return [...]string{"none", "first", "middle", "last", "only"}[p%5]
}

// maxExtHeaders is the longest extension-header sequence of any opcode
// (DC RDMA WRITE ONLY WITH IMMEDIATE: RDETH, DETH, DCETH, RETH, ImmDt).
const maxExtHeaders = 5

type opInfo struct {
	name     string
	known    bool
	request  bool // carries the requester's PSN (else: a response or CNP)
	position Position
	nHeaders uint8
	headers  [maxExtHeaders]gopacket.LayerType
	hdrLen   uint8 // total length of headers
	dethOff  int8  // offset of the DETH after the BTH, -1 without one
}

// opTable is built once from the IBTA rules; read only afterwards.
var opTable = buildOpTable()

// dcTable holds the RD-range opcodes (index: operation, opcode bits 4–0)
// as DC packets carry them; built once, read only afterwards.
var dcTable = buildDCTable()

type opDef struct {
	name     string
	position Position
	response bool
	headers  []gopacket.LayerType
}

func baseOps() map[Operation]opDef {
	reth, imm, aeth := LayerTypeRETH, LayerTypeImmDt, LayerTypeAETH
	return map[Operation]opDef{
		OperationSendFirst:                  {"SEND_FIRST", PositionFirst, false, nil},
		OperationSendMiddle:                 {"SEND_MIDDLE", PositionMiddle, false, nil},
		OperationSendLast:                   {"SEND_LAST", PositionLast, false, nil},
		OperationSendLastWithImmediate:      {"SEND_LAST_WITH_IMMEDIATE", PositionLast, false, []gopacket.LayerType{imm}},
		OperationSendOnly:                   {"SEND_ONLY", PositionOnly, false, nil},
		OperationSendOnlyWithImmediate:      {"SEND_ONLY_WITH_IMMEDIATE", PositionOnly, false, []gopacket.LayerType{imm}},
		OperationRDMAWriteFirst:             {"RDMA_WRITE_FIRST", PositionFirst, false, []gopacket.LayerType{reth}},
		OperationRDMAWriteMiddle:            {"RDMA_WRITE_MIDDLE", PositionMiddle, false, nil},
		OperationRDMAWriteLast:              {"RDMA_WRITE_LAST", PositionLast, false, nil},
		OperationRDMAWriteLastWithImmediate: {"RDMA_WRITE_LAST_WITH_IMMEDIATE", PositionLast, false, []gopacket.LayerType{imm}},
		OperationRDMAWriteOnly:              {"RDMA_WRITE_ONLY", PositionOnly, false, []gopacket.LayerType{reth}},
		OperationRDMAWriteOnlyWithImmediate: {"RDMA_WRITE_ONLY_WITH_IMMEDIATE", PositionOnly, false, []gopacket.LayerType{reth, imm}},
		OperationRDMAReadRequest:            {"RDMA_READ_REQUEST", PositionNone, false, []gopacket.LayerType{reth}},
		OperationRDMAReadResponseFirst:      {"RDMA_READ_RESPONSE_FIRST", PositionFirst, true, []gopacket.LayerType{aeth}},
		OperationRDMAReadResponseMiddle:     {"RDMA_READ_RESPONSE_MIDDLE", PositionMiddle, true, nil},
		OperationRDMAReadResponseLast:       {"RDMA_READ_RESPONSE_LAST", PositionLast, true, []gopacket.LayerType{aeth}},
		OperationRDMAReadResponseOnly:       {"RDMA_READ_RESPONSE_ONLY", PositionOnly, true, []gopacket.LayerType{aeth}},
		OperationAcknowledge:                {"ACKNOWLEDGE", PositionNone, true, []gopacket.LayerType{aeth}},
		OperationAtomicAcknowledge:          {"ATOMIC_ACKNOWLEDGE", PositionNone, true, []gopacket.LayerType{aeth, LayerTypeAtomicAckETH}},
		OperationCompareSwap:                {"COMPARE_SWAP", PositionNone, false, []gopacket.LayerType{LayerTypeAtomicETH}},
		OperationFetchAdd:                   {"FETCH_ADD", PositionNone, false, []gopacket.LayerType{LayerTypeAtomicETH}},
		OperationSendLastWithInvalidate:     {"SEND_LAST_WITH_INVALIDATE", PositionLast, false, []gopacket.LayerType{LayerTypeIETH}},
		OperationSendOnlyWithInvalidate:     {"SEND_ONLY_WITH_INVALIDATE", PositionOnly, false, []gopacket.LayerType{LayerTypeIETH}},
		OperationFlush:                      {"FLUSH", PositionNone, false, []gopacket.LayerType{LayerTypeFETH, reth}},
		OperationAtomicWrite:                {"ATOMIC_WRITE", PositionNone, false, []gopacket.LayerType{reth}},
	}
}

// newOpInfo builds the table entry of an operation with the headers pre
// in front of its own.
func newOpInfo(prefix string, d opDef, pre ...gopacket.LayerType) opInfo {
	hs := append(append([]gopacket.LayerType{}, pre...), d.headers...)
	info := opInfo{name: prefix + d.name, known: true, request: !d.response, position: d.position, nHeaders: uint8(len(hs)), dethOff: -1}
	copy(info.headers[:], hs)
	for _, h := range hs {
		if h == LayerTypeDETH {
			info.dethOff = int8(info.hdrLen)
		}
		info.hdrLen += uint8(extHeaderLen(h))
	}
	return info
}

// buildDCTable builds the DC view of the RD opcodes 0x40–0x54: every
// packet, request or response, carries the RDETH, DETH and DCETH places,
// then the headers RC puts after the BTH (PROTOCOL.md; the RD_ACKNOWLEDGE
// of a real DC capture has RDETH, DETH, DCETH and AETH). 0x55 (RD RESYNC)
// has no known DC meaning and stays RD. The DETH place is not taken for a
// datagram source QP (dethOff −1): whether it is one is not public.
func buildDCTable() (t [32]opInfo) {
	for op, d := range baseOps() {
		if op <= OperationFetchAdd {
			info := newOpInfo("DC_", d, LayerTypeRDETH, LayerTypeDETH, LayerTypeDCETH)
			info.dethOff = -1
			t[op] = info
		}
	}
	return t
}

func buildOpTable() (t [256]opInfo) {
	base := baseOps()
	add := func(op Opcode, prefix string, d opDef, pre ...gopacket.LayerType) {
		t[op] = newOpInfo(prefix, d, pre...)
	}
	for op, d := range base {
		// RC: every operation.
		add(Opcode(TransportRC)|Opcode(op), "RC_", d)
		// UC: sends and writes only.
		if op <= OperationRDMAWriteOnlyWithImmediate {
			add(Opcode(TransportUC)|Opcode(op), "UC_", d)
		}
		// RD: RDETH on every packet, DETH on requests; no invalidate, flush
		// or atomic write.
		if op <= OperationFetchAdd {
			if d.response {
				add(Opcode(TransportRD)|Opcode(op), "RD_", d, LayerTypeRDETH)
			} else {
				add(Opcode(TransportRD)|Opcode(op), "RD_", d, LayerTypeRDETH, LayerTypeDETH)
			}
		}
		// XRC: XRCETH on requests; responses as RC.
		if op <= OperationSendOnlyWithInvalidate && op != OperationResync {
			if d.response {
				add(Opcode(TransportXRC)|Opcode(op), "XRC_", d)
			} else {
				add(Opcode(TransportXRC)|Opcode(op), "XRC_", d, LayerTypeXRCETH)
			}
		}
	}
	add(Opcode(TransportRD)|Opcode(OperationResync), "RD_", opDef{"RESYNC", PositionNone, false, nil}, LayerTypeRDETH, LayerTypeDETH)
	add(OpcodeUDSendOnly, "UD_", base[OperationSendOnly], LayerTypeDETH)
	add(OpcodeUDSendOnlyWithImmediate, "UD_", base[OperationSendOnlyWithImmediate], LayerTypeDETH)
	add(OpcodeCNP, "", opDef{"CNP", PositionNone, true, []gopacket.LayerType{LayerTypeCNP}})
	add(OpcodeRoCEv2CNP, "", opDef{"ROCE_CNP", PositionNone, true, []gopacket.LayerType{LayerTypeCNP}})
	return t
}

// Known reports whether the opcode is in the IBTA table. The extension
// headers of an unknown opcode cannot be known, so they are not decoded.
func (o Opcode) Known() bool { return opTable[o].known }

// Transport returns the transport service (high three bits).
func (o Opcode) Transport() Transport {
	if o >= 0xC0 {
		return TransportVendor
	}
	return Transport(o & 0xE0)
}

// Operation returns the operation (low five bits).
func (o Opcode) Operation() Operation { return Operation(o & 0x1F) }

// String returns the IBTA name with its transport, as Linux names it
// ("RC_RDMA_WRITE_FIRST", "UD_SEND_ONLY", "ROCE_CNP"), or
// "UNKNOWN_0xNN" for an opcode outside the table.
func (o Opcode) String() string {
	if opTable[o].known {
		return opTable[o].name
	}
	return fmt.Sprintf("UNKNOWN_0x%02X", uint8(o))
}

// Headers returns the extension headers the opcode implies, in wire
// order, between the BTH and the payload. Nil for an unknown opcode.
func (o Opcode) Headers() []gopacket.LayerType {
	info := &opTable[o]
	return info.headers[:info.nHeaders:info.nHeaders]
}

// HeaderLen returns the total length of the opcode's extension headers.
func (o Opcode) HeaderLen() int { return int(opTable[o].hdrLen) }

// IsRequest reports whether packets of this opcode carry the requester's
// PSN (sends, writes, read requests, atomics), as opposed to responses
// (ACK, NAK, read responses, atomic ACK) and CNPs.
func (o Opcode) IsRequest() bool { return opTable[o].known && opTable[o].request }

// IsResponse reports whether the opcode is a response (ACK/NAK, READ
// response, ATOMIC ACKNOWLEDGE).
func (o Opcode) IsResponse() bool {
	return opTable[o].known && !opTable[o].request && o.Transport() != TransportCNP
}

// IsCNP reports whether the opcode is a congestion notification (0x80, 0x81).
func (o Opcode) IsCNP() bool { return o == OpcodeCNP || o == OpcodeRoCEv2CNP }

// Position returns where a packet of this opcode sits in its message.
func (o Opcode) Position() Position { return opTable[o].position }

// HasPayload reports whether packets of this opcode may carry payload
// (false for read requests, ACKs, atomics, FLUSH and CNPs; ATOMIC_WRITE
// carries its 8 bytes as payload).
func (o Opcode) HasPayload() bool {
	if !opTable[o].known || o.IsCNP() {
		return false
	}
	switch o.Operation() {
	case OperationRDMAReadRequest, OperationAcknowledge, OperationAtomicAcknowledge,
		OperationCompareSwap, OperationFetchAdd, OperationResync, OperationFlush:
		return false
	}
	return true
}

// extHeaderLen returns the fixed wire length of an extension header.
func extHeaderLen(t gopacket.LayerType) int {
	switch t {
	case LayerTypeRDETH, LayerTypeXRCETH, LayerTypeAETH, LayerTypeImmDt, LayerTypeIETH, LayerTypeFETH:
		return 4
	case LayerTypeDETH, LayerTypeAtomicAckETH, LayerTypeDCETH:
		return 8
	case LayerTypeRETH, LayerTypeCNP:
		return 16
	case LayerTypeAtomicETH:
		return 28
	}
	return 0
}
