package analyze

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
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

// ErrShortMAD is the error of a MAD shorter than 256 bytes in a frame that
// the capture did not cut: a malformed frame, counted in
// capture.malformed, listed, a malformed finding, and it makes no
// connection.
var ErrShortMAD = decode.ErrShortMAD

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
func (a *Analyzer) checkCut(p *Packet, l *decode.Lens, capLen int) {
	if !p.IsRDMA || p.Err != nil {
		return
	}
	end := l.Declared()
	if p.Length != capLen || end <= capLen {
		if capLen > a.cut.maxWhole {
			a.shard.noteWhole(p.Frame, capLen)
		}
		a.cut.noteWhole(p.Frame, capLen)
		return
	}
	kind := classifyShort(capLen, l.Packet(), &a.cut)
	a.shard.noteShort(p, capLen, l.Packet(), kind)
	switch kind {
	case shortToolCut:
		a.capture.CutFrames++
		if a.cut.first == 0 {
			a.cut.first, a.cut.capLen, a.cut.time = p.Frame, capLen, p.Time
		}
		a.capture.Bytes += uint64(end - p.Length)
		p.Length, p.CarriedLength = end, p.CarriedLength+end-p.Length
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
var ErrFrameLength = decode.ErrFrameLength

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
