package analyze

// FrameFindings returns the findings that the last Feed recorded for its
// frame (Packet.Findings counts them), in the order found. The slice is
// the analyzer's own: it is valid until the next Feed and must not be
// modified. Findings beyond Options.MaxFindings are counted in
// Packet.Findings but not listed; findings decided only when the capture
// ends (PSN gaps, incomplete messages), or later about an earlier frame
// (a sender that did not slow down after a CNP), are not among them.
func (a *Analyzer) FrameFindings() []Finding {
	a.frameBuf = a.frameBuf[:0]
	l := a.findings.list
	if a.frameFindings > len(l) {
		return nil
	}
	// A Feed may also record findings about earlier frames, and the cap
	// may have evicted some (left as zero entries): keep the frame's own.
	for _, f := range l[a.frameFindings:] {
		if f.Severity != 0 && f.Frame == a.pkt.Frame {
			a.frameBuf = append(a.frameBuf, f)
		}
	}
	return a.frameBuf
}
