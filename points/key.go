package points

import (
	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/layers"
)

// flowKey is a flow: source, destination, destination QP.
type flowKey struct {
	src, dst analyze.Addr
	qp       uint32
}

// Key is what a transmission has at every point, the ICRC aside (a
// header-only capture has none): flow, PSN, opcode, payload length, IPv4
// identification.
type Key struct {
	flow       flowKey
	psn        uint32
	opcode     layers.Opcode
	ipID       uint16
	payloadLen int32
}

// sighting is one packet at one point.
type sighting struct {
	key     Key
	icrc    uint32
	hasICRC bool
	status  layers.ICRCStatus
	ce      bool // ECN Congestion Experienced
}

// sightingOf returns the sighting of p, false for packets without a BTH
// (not RDMA, malformed).
func sightingOf(p *analyze.Packet) (sighting, bool) {
	if p == nil || p.BTH == nil || p.Err != nil {
		return sighting{}, false
	}
	s := sighting{key: Key{
		flow:       flowKey{src: p.Src, dst: p.Dst, qp: p.BTH.DestQP},
		psn:        p.BTH.PSN,
		opcode:     p.BTH.Opcode,
		ipID:       p.IPID,
		payloadLen: int32(p.PayloadLen),
	}, status: p.ICRC.Status, ce: p.ECN == 3}
	s.icrc, s.hasICRC = p.BTH.ICRCValue()
	return s, true
}

// hash mixes the key's flow and PSN (FNV-1a): the same transmission
// hashes alike in every file, which makes Sampler's sampling consistent.
func (k *Key) hash() uint64 {
	h := uint64(14695981039346656037)
	mix := func(v uint64) {
		for range 8 {
			h ^= v & 0xFF
			h *= 1099511628211
			v >>= 8
		}
	}
	for _, a := range [2]analyze.Addr{k.flow.src, k.flow.dst} {
		b := a.IP.As16()
		mix(uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 | uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56)
		mix(uint64(b[8]) | uint64(b[9])<<8 | uint64(b[10])<<16 | uint64(b[11])<<24 | uint64(b[12])<<32 | uint64(b[13])<<40 | uint64(b[14])<<48 | uint64(b[15])<<56)
		mix(uint64(a.LID))
	}
	// Only flow and PSN: every transmission of one PSN (resends, and a
	// different packet an unrelated capture has at that PSN) is sampled
	// alike, so that two files' samples show the PSNs they disagree on.
	mix(uint64(k.flow.qp)<<32 | uint64(k.psn))
	// final avalanche (splitmix64), so that the low bits are well mixed
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

// management says whether the flow carries management datagrams (QP0
// subnet management, QP1 general services: CM, SA).
func (k flowKey) management() bool { return k.qp <= 1 }

// psnDiff is a - b in 24-bit serial arithmetic.
func psnDiff(a, b uint32) int32 { return int32((a-b)<<8) >> 8 }

// ackedPSN returns the request PSN a response acknowledges (every request
// up to it reached the responder), false for packets that acknowledge
// nothing: ACK → its PSN; NAK and RNR NAK → the PSN before; READ responses
// and ATOMIC ACK → their PSN.
func ackedPSN(p *analyze.Packet) (uint32, bool) {
	op := p.BTH.Opcode
	switch op.Transport() {
	case layers.TransportRC, layers.TransportXRC:
	default:
		return 0, false
	}
	switch op.Operation() {
	case 0x11: // ACKNOWLEDGE
		if p.AETH != nil && !p.AETH.IsACK() {
			return (p.BTH.PSN - 1) & 0xFFFFFF, true
		}
		return p.BTH.PSN, true
	case 0x0D, 0x0E, 0x0F, 0x10, 0x12: // READ responses, ATOMIC ACK
		return p.BTH.PSN, true
	}
	return 0, false
}

// ackable says whether the responder acknowledges the packet (RC and XRC
// requests).
func ackable(op layers.Opcode) bool {
	t := op.Transport()
	return (t == layers.TransportRC || t == layers.TransportXRC) && op.IsRequest()
}
