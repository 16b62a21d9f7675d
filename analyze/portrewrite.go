package analyze

import (
	"encoding/binary"
	"slices"

	"github.com/roce-dissect/roce-dissect/layers"
)

// NIC sniffer captures: the ConnectX NIC sniffer writes UDP source port
// 4791 on every RoCE v2 packet whose ICRC was computed over the real
// source port (the ECMP entropy port), so every ICRC fails as captured.
// When a RoCE v2 packet with source port 4791 fails its ICRC, the
// analyzer solves for the source port that makes it verify
// (layers.SolveICRCSrcPort: the CRC is affine in the 16 port bits); when
// exactly one does, the packet's ICRC is ok, the flow counts it in
// ICRCCounts.PortRewritten and lists the port. A packet damaged elsewhere
// is explained by some port with probability 2^−16; such a packet shows
// as a second port of its flow.

// snifferSrcPort is the UDP source port the NIC sniffer writes.
const snifferSrcPort = uint16(layers.UDPPortRoCEv2)

// maxOriginalPorts caps the distinct recovered ports a flow lists.
const maxOriginalPorts = 8

// portRecovery is what a flow's ICRCs said about its real source port.
type portRecovery struct {
	ports []uint16 // distinct recovered ports, first seen first (≤ maxOriginalPorts)
	port  uint16   // the last recovered port, tried first
	// rewritten counts the flow's packets whose ICRC verified only with a
	// recovered port (ICRCCounts.PortRewritten).
	rewritten uint64
	// diffs caches, by covered length, the ICRC change that port makes
	// (the ICRC on the wire XOR the one with port 4791): a packet of a
	// length seen before is checked with one comparison.
	diffs [diffCacheLen]diffEntry
}

// diffCacheLen is the number of packet lengths a flow caches the ICRC
// change of its port for (direct-mapped by length: FIRST, MIDDLE, LAST
// and ONLY packets of one message size take up to four).
const diffCacheLen = 4

// diffEntry is the ICRC change of a flow's port at one covered length.
type diffEntry struct {
	covered int32 // covered length + 1; 0 marks an empty entry
	diff    uint32
}

// verifies reports whether the flow's port explains diff, the ICRC
// change of a packet with covered bytes after the UDP header: from the
// cache, or with one multiplication (then cached).
func (r *portRecovery) verifies(a *Analyzer, icrc layers.ICRCResult, covered int) bool {
	diff := icrc.Value ^ icrc.Expected
	e := &r.diffs[covered%diffCacheLen]
	if int(e.covered) == covered+1 {
		return e.diff == diff
	}
	if !layers.VerifyICRCSrcPort(icrc, snifferSrcPort, r.port, a.srcPortShift(covered)) {
		return false
	}
	*e = diffEntry{covered: int32(covered + 1), diff: diff}
	return true
}

// shiftCacheLen is the number of packet lengths whose ICRC shift factor
// an Analyzer keeps (direct-mapped by length).
const shiftCacheLen = 64

// shiftEntry is layers.ICRCSrcPortShift of one covered length.
type shiftEntry struct {
	covered int32 // covered length + 1; 0 marks an empty entry
	shift   uint32
}

// srcPortShift returns layers.ICRCSrcPortShift(covered), computed once
// per length while it stays in the cache: packets of one length then cost
// one multiplication in GF(2)[x]/P to check or solve.
func (a *Analyzer) srcPortShift(covered int) uint32 {
	e := &a.shifts[covered%shiftCacheLen]
	if int(e.covered) != covered+1 {
		*e = shiftEntry{covered: int32(covered + 1), shift: layers.ICRCSrcPortShift(covered)}
	}
	return e.shift
}

// recoverSrcPort is called for a RoCE v2 packet whose ICRC failed. If its
// UDP source port is the sniffer's 4791 and exactly one port makes the
// ICRC verify, the packet's ICRC becomes ok with that port: the flow's
// last recovered port is tried first, then the port is solved for. f is
// nil for a packet of a flow the table has no room for, or of none (a
// malformed frame). It reports whether it recovered a port; the caller
// counts the packet in Capture.ICRCPortRewritten.
func (a *Analyzer) recoverSrcPort(f *flowState, p *Packet, udpHdr []byte) bool {
	if len(udpHdr) < 8 || p.BTH == nil {
		return false
	}
	captured := binary.BigEndian.Uint16(udpHdr)
	if captured != snifferSrcPort {
		return false
	}
	covered := len(p.BTH.ICRCCovered())
	var port uint16
	var rec *portRecovery
	if f != nil && f.cold != nil {
		rec = f.cold.srcPorts
	}
	switch {
	case rec != nil && rec.verifies(a, p.ICRC, covered):
		port = rec.port
	default:
		delta, ok := layers.SolveICRCSrcPortDelta(p.ICRC.Value^p.ICRC.Expected, a.srcPortShift(covered))
		if !ok {
			return false
		}
		port = captured ^ delta
	}
	p.ICRC = layers.ICRCResult{Status: layers.ICRCOK, Value: p.ICRC.Value, Expected: p.ICRC.Value}
	p.SrcPortRewritten, p.OriginalSrcPort = true, port
	if f == nil {
		return true
	}
	if rec == nil {
		rec = &portRecovery{}
		f.rare().srcPorts = rec
	}
	rec.rewritten++
	if rec.port != port {
		rec.port, rec.diffs = port, [diffCacheLen]diffEntry{}
	}
	if len(rec.ports) < maxOriginalPorts && !slices.Contains(rec.ports, port) {
		rec.ports = append(rec.ports, port)
	}
	return true
}

// list returns a copy of the recovered ports (nil for none, or r nil).
func (r *portRecovery) list() []uint16 {
	if r == nil {
		return nil
	}
	return slices.Clone(r.ports)
}

// mergePorts adds the ports of b to a, distinct, first seen first, at
// most maxOriginalPorts.
func mergePorts(a, b []uint16) []uint16 {
	for _, p := range b {
		if len(a) < maxOriginalPorts && !slices.Contains(a, p) {
			a = append(a, p)
		}
	}
	return a
}
