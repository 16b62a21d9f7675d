package analyze

import (
	"fmt"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
	"github.com/roce-dissect/roce-dissect/analyze/internal/toolcut"
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
// right. The stage of package internal/toolcut judges which frames the
// tool cut (and which lie), in capture order, and combines the shards'
// judgements; Capture.CutFrames counts them and one info finding
// (KindToolCutFrames) says the tool cut frames without recording their
// length.

// ErrShortMAD is the error of a MAD shorter than 256 bytes in a frame that
// the capture did not cut: a malformed frame, counted in
// capture.malformed, listed, a malformed finding, and it makes no
// connection.
var ErrShortMAD = decode.ErrShortMAD

// checkCut has the toolcut stage judge an RDMA frame of capLen captured
// bytes (p.Length: its recorded length) against its length fields, and
// accounts a frame the capture tool cut at the length they give, or makes
// one whose length fields lie malformed.
func (a *Analyzer) checkCut(p *Packet, l *decode.Lens, capLen int) {
	if !p.IsRDMA || p.Err != nil {
		return
	}
	end := l.Declared()
	switch a.cut.Frame(p.Frame, p.Time, capLen, p.Length, end, l.Packet()) {
	case toolcut.Cut:
		a.capture.Bytes += uint64(end - p.Length)
		p.Length, p.CarriedLength = end, p.CarriedLength+end-p.Length
	case toolcut.Lie:
		p.Err = fmt.Errorf("%s packet: %w: %d bytes captured of a frame recorded whole, its headers say %d", p.Encap, ErrFrameLength, capLen, end)
	}
}

// ErrFrameLength is the error of a malformed frame recorded whole whose
// length fields point past its end (docs/robustness.md: a capture tool's
// systematic cut is told apart from such a frame).
var ErrFrameLength = decode.ErrFrameLength

// cutFinding returns the one finding of the frames the capture tool cut.
func (a *Analyzer) cutFinding() (Finding, bool) {
	c := a.cut.Facts()
	if c.Frames == 0 {
		return Finding{}, false
	}
	f := Finding{Frame: c.First, Time: c.Time, Kind: KindToolCutFrames, Severity: SeverityInfo, File: a.opts.File,
		Detail: fmt.Sprintf("the capture tool cut %d frames (the first to %d bytes) without recording their length: sizes are taken from their IP/UDP, GRH or LRH lengths, their ICRCs cannot be checked", c.Frames, c.Len)}
	if c.Broken != 0 {
		f.Severity = SeverityWarning
		f.Detail += fmt.Sprintf("; but %s was captured whole at %d bytes, longer than the cut length: no tool cut this capture at %d bytes, so the frames counted as cut before it may be frames whose length fields lie, and those after it are malformed", a.opts.Pieces.FrameName(c.Broken), c.BrokenLen, c.Len)
	}
	return f, true
}

// combineCut returns the capture's toolcut stage of the shards' parts
// (toolcut.Combine), and ErrNotDisjoint when a shard judged a frame
// otherwise than the capture-wide rule does.
func combineCut(parts []*Report) (*toolcut.Stage, error) {
	cuts := make([]*toolcut.Stage, len(parts))
	for s, p := range parts {
		cuts[s] = p.shard.cut
	}
	cut, frame := toolcut.Combine(cuts)
	if frame != 0 {
		return cut, fmt.Errorf("%w: frame %d (or the next of its shard) is judged cut by the capture tool in one shard and not in the capture, or the other way round", ErrNotDisjoint, frame)
	}
	return cut, nil
}
