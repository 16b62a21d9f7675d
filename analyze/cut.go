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

// errShortMAD reports a MAD shorter than 256 bytes in a frame that the
// capture did not cut.
var errShortMAD = errors.New("short MAD")

// errUDPLength reports a UDP length beyond the IP payload.
var errUDPLength = errors.New("UDP length beyond the IP payload")

// frameLens is what the length fields of a frame declare.
type frameLens struct {
	// end is the frame length the outermost network header implies (its
	// offset in the frame plus the length it declares: IPv4 total length,
	// IPv6 header + payload length, GRH + PayLen, LRH PktLen + VCRC); 0
	// when unknown.
	end int
	// ipPayload is the IP payload length the IP header declares; -1 when
	// there is no IP header.
	ipPayload int
	set       bool
}

// network records the lengths of the outermost network header: off is its
// offset in the frame, n the packet length from it on, payload the IP
// payload length (-1 for a GRH or LRH).
func (l *frameLens) network(off, n, payload int) {
	if l.set {
		return
	}
	l.set, l.end, l.ipPayload = true, off+n, payload
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

// classifyShort decides why a frame recorded whole (original length =
// captured length) is shorter than its length fields say. This is the one
// place that decides it. The rule today (the real-captures issue): every
// such frame was cut by the capture tool.
//
// A refinement would tell a tool's cut from a lying length field by the
// pattern: a tool cuts every long frame at one length (its snap length,
// e.g. 243), so its cut frames all have the same captured length, and no
// frame of the capture is longer than that; a frame shorter than its
// length fields whose captured length is not that cut length, or in a
// capture whose other RDMA frames are longer than it, is malformed. That
// needs the capture's first frames (or a second pass) before deciding.
func classifyShort(capLen int, c *Capture) shortFrame {
	return shortToolCut
}

// checkCut accounts a frame of capLen captured bytes recorded with its
// whole length (p.Length) that its length fields say is longer.
func (a *Analyzer) checkCut(p *Packet, capLen int) {
	l := &a.lens
	if !p.IsRDMA || p.Err != nil || !l.set || p.Length != capLen || l.end <= capLen {
		return
	}
	switch classifyShort(capLen, &a.capture) {
	case shortToolCut:
		a.capture.CutFrames++
		if a.cut.first == 0 {
			a.cut = cutState{first: p.Frame, capLen: capLen, time: p.Time}
		}
		a.capture.Bytes += uint64(l.end - p.Length)
		p.Length = l.end
	case shortMalformed:
		p.Err = fmt.Errorf("%s packet: %w: %d bytes captured of a frame recorded whole, its headers say %d", p.Encap, errFrameLength, capLen, l.end)
	}
}

// cutState remembers the first frame the capture tool cut.
type cutState struct {
	first  uint64
	capLen int
	time   time.Time
}

// errFrameLength reports length fields past the end of a whole frame.
var errFrameLength = errors.New("length fields past the end of the frame")

// cutFinding returns the one finding of the frames the capture tool cut.
func (a *Analyzer) cutFinding() (Finding, bool) {
	if a.capture.CutFrames == 0 {
		return Finding{}, false
	}
	return Finding{Frame: a.cut.first, Time: a.cut.time, Kind: KindToolCutFrames, Severity: SeverityInfo, File: a.opts.File,
		Detail: fmt.Sprintf("the capture tool cut %d frames (the first to %d bytes) without recording their length: sizes are taken from their IP/UDP, GRH or LRH lengths, their ICRCs cannot be checked", a.capture.CutFrames, a.cut.capLen)}, true
}

// addFinding appends a finding built at report time, within the cap.
func (r *Report) addFinding(f Finding, maxFindings int) {
	if len(r.Findings) >= maxFindings {
		r.FindingsDropped++
		return
	}
	r.Findings = append(r.Findings, f)
}
