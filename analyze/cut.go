package analyze

import (
	"errors"
	"fmt"
	"time"
)

// Frames shorter than their own length fields.
//
// A header-only capture says it cut a frame: the original length of the
// record is larger than what it captured. Some capture tools cut frames
// and write original length = captured length (a real NCCL capture:
// 489 frames of 243 bytes whose IPv4 total length says 4156). The IP/UDP
// (RoCE v2), GRH PayLen (RoCE v1) or LRH PktLen (native IB) lengths still
// say how long the packet was. Such a frame is treated exactly as a
// snap-length cut: its ICRC is unverifiable (the layers flag it
// truncated), its payload is counted from the length fields, and its wire
// length is the one the headers give, so that bytes and throughput are
// right. Capture.CutFrames counts them and one info finding
// (KindToolCutFrames) says the tool cut frames without recording their
// length.

// ErrShortMAD is the error of a MAD shorter than 256 bytes in a frame that the
// capture did not cut.
var ErrShortMAD = errors.New("short MAD")

// errUDPLength reports a UDP length beyond the IP payload.
var errUDPLength = errors.New("UDP length beyond the IP payload")

// frameLens is what the length fields of a frame declare.
type frameLens struct {
	// end is the frame length the network headers imply (the largest of
	// their offsets in the frame plus the length each declares: IPv4
	// total length, IPv6 header + payload length, GRH + PayLen, LRH
	// PktLen + VCRC; a packet inside a tunnel may declare more than the
	// tunnel when a mirror cut it); 0 when unknown.
	end int
	// ipPayload is the IP payload length the innermost IP header
	// declares (the one around the RDMA packet when it arrived in a
	// tunnel); -1 when there is no IP header.
	ipPayload int
	set       bool
	// n is the packet length the innermost network header declares (from
	// that header on): the RDMA packet's, without the tunnels around it.
	n int
	// record is the end an ERF record declares: the larger of its record
	// length RLen and its headers plus wire length WLen; 0 when none.
	record int
	// badRecord: an ERF record length RLen shorter than its own headers.
	badRecord bool
	rlen, hdr int
}

// network records the lengths of a network header: off is its offset in
// the frame, n the packet length from it on, payload the IP payload
// length (-1 for a GRH or LRH). The innermost header's say how long the
// RDMA packet is.
func (l *frameLens) network(off, n, payload int) {
	l.set, l.end = true, max(l.end, off+n)
	l.ipPayload, l.n = payload, n
}

// erf records the lengths an ERF record of n bytes declares: its wire
// length after hdr bytes of headers, and its record length RLen unless
// that is only the padding to 8 bytes that a pcap writer may drop (real
// DAG captures: 306 bytes of a record whose RLen says 312).
func (l *frameLens) erf(rlen, wlen, hdr, n int) {
	l.record = hdr + wlen
	if rlen > (n+7)&^7 {
		l.record = max(l.record, rlen)
	}
	l.badRecord, l.rlen, l.hdr = rlen < hdr, rlen, hdr
}

// declared is the frame length the length fields declare: the outermost
// network header's end, or an ERF record's if longer; 0 when unknown.
func (l *frameLens) declared() int {
	if !l.set {
		return l.record
	}
	return max(l.end, l.record)
}

// checkUDP checks a RoCE v2 UDP length against the IP payload.
func (l *frameLens) checkUDP(udpLen int) error {
	if !l.set || l.ipPayload < 0 || udpLen <= l.ipPayload {
		return nil
	}
	return fmt.Errorf("RoCEv2 packet: %w: UDP length %d, IP payload %d bytes", errUDPLength, udpLen, l.ipPayload)
}

// shortFrame is what a frame shorter than its length fields is.
type shortFrame uint8

const (
	// shortToolCut: the capture tool cut it without recording its length.
	shortToolCut shortFrame = iota
	// shortMalformed: its length fields lie (reserved for the rule below).
	shortMalformed
)

// maxRDMAPacketLen is the longest packet a network header of an RDMA frame
// can declare: the largest IB payload (4,096 bytes, the largest path MTU)
// and 256 bytes of headers (IPv6 40 + UDP 8 + BTH 12 + extension headers
// 28 + ICRC 4, or LRH 8 + GRH 40 + … + VCRC 2, with room to spare). A longer
// length field is a lie, never a cut.
const maxRDMAPacketLen = 4096 + 256

// classifyShort decides why an RDMA frame recorded whole (original length
// = captured length) of capLen bytes is shorter than its length fields
// say (n: the packet length its network header declares). This is the one
// place that decides it.
//
// A tool that cuts frames without recording their length cuts every
// longer frame at one length (its snap length, e.g. 243): its cut frames
// all have the same captured length, and no RDMA frame of the capture is
// captured longer. The analyzer is streaming, so the rule is applied at
// each frame with what came before it:
//
//   - a length field past maxRDMAPacketLen is malformed;
//   - the first such frame is cut by the tool unless an RDMA frame before
//     it was captured longer: its captured length becomes the capture's
//     cut length;
//   - a later one is cut by the tool when its captured length is the cut
//     length and no RDMA frame so far was captured longer than that;
//     otherwise it is malformed (its length fields lie).
//
// Once an RDMA frame longer than the cut length has been seen, no tool
// cut the capture at that length: every short frame after it is
// malformed, and the tool_cut_frames finding of those before it becomes a
// warning that names that frame (they stay counted as cut: a streaming
// analyzer has already accounted them).
func classifyShort(capLen, n int, s *cutState) shortFrame {
	switch {
	case n > maxRDMAPacketLen:
		return shortMalformed
	case s.maxWhole > capLen:
		return shortMalformed
	case s.capLen != 0 && capLen != s.capLen:
		return shortMalformed
	}
	return shortToolCut
}

// checkCut accounts a frame of capLen captured bytes recorded with its
// whole length (p.Length) that its length fields say is longer, and keeps
// the longest RDMA frame captured whole for classifyShort.
func (a *Analyzer) checkCut(p *Packet, capLen int) {
	l := &a.lens
	if !p.IsRDMA || p.Err != nil {
		return
	}
	if l.badRecord {
		p.Err = fmt.Errorf("%s packet: %w: ERF record length %d is shorter than its %d bytes of headers", p.Encap, ErrFrameLength, l.rlen, l.hdr)
		return
	}
	end := l.declared()
	if p.Length != capLen || end <= capLen {
		if capLen > a.cut.maxWhole {
			a.shard.noteWhole(p.Frame, capLen)
		}
		a.cut.noteWhole(p.Frame, capLen)
		return
	}
	kind := classifyShort(capLen, l.n, &a.cut)
	a.shard.noteShort(p, capLen, l.n, kind)
	switch kind {
	case shortToolCut:
		a.capture.CutFrames++
		if a.cut.first == 0 {
			a.cut.first, a.cut.capLen, a.cut.time = p.Frame, capLen, p.Time
		}
		a.capture.Bytes += uint64(end - p.Length)
		p.Length = end
	case shortMalformed:
		p.Err = fmt.Errorf("%s packet: %w: %d bytes captured of a frame recorded whole, its headers say %d", p.Encap, ErrFrameLength, capLen, end)
	}
}

// cutState is what classifyShort knows of the capture: the first frame the
// capture tool cut and its length, and the RDMA frames captured whole.
type cutState struct {
	first  uint64
	capLen int // the cut length: the captured length of the first frame cut
	time   time.Time
	// maxWhole is the longest captured length of the RDMA frames that were
	// not shorter than their length fields.
	maxWhole int
	// broken is the first frame captured longer than the cut length (0:
	// none), brokenLen its captured length.
	broken    uint64
	brokenLen int
}

// noteWhole records an RDMA frame whose length fields fit what was
// captured (or whose record says it was cut).
func (s *cutState) noteWhole(frame uint64, capLen int) {
	s.maxWhole = max(s.maxWhole, capLen)
	if s.capLen != 0 && capLen > s.capLen && s.broken == 0 {
		s.broken, s.brokenLen = frame, capLen
	}
}

// ErrFrameLength is the error of a malformed frame recorded whole whose
// length fields point past its end (docs/robustness.md: a capture tool's
// systematic cut is told apart from such a frame).
var ErrFrameLength = errors.New("length fields past the end of the frame")

// cutFinding returns the one finding of the frames the capture tool cut.
func (a *Analyzer) cutFinding() (Finding, bool) {
	if a.capture.CutFrames == 0 {
		return Finding{}, false
	}
	f := Finding{Frame: a.cut.first, Time: a.cut.time, Kind: KindToolCutFrames, Severity: SeverityInfo, File: a.opts.File,
		Detail: fmt.Sprintf("the capture tool cut %d frames (the first to %d bytes) without recording their length: sizes are taken from their IP/UDP, GRH or LRH lengths, their ICRCs cannot be checked", a.capture.CutFrames, a.cut.capLen)}
	if a.cut.broken != 0 {
		f.Severity = SeverityWarning
		f.Detail += fmt.Sprintf("; but %s was captured whole at %d bytes, longer than the cut length: no tool cut this capture at %d bytes, so the frames counted as cut before it may be frames whose length fields lie, and those after it are malformed", a.opts.Pieces.FrameName(a.cut.broken), a.cut.brokenLen, a.cut.capLen)
	}
	return f, true
}
