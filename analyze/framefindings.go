package analyze

// FrameFindings returns the findings that the last Feed recorded for its
// frame (Packet.Findings counts them), in the order found. The slice
// aliases the analyzer's list: it is valid until the next Feed and must
// not be modified. Findings beyond Options.MaxFindings are counted in
// Packet.Findings but not listed; findings decided only when the capture
// ends (PSN gaps, incomplete messages), or later about an earlier frame
// (a sender that did not slow down after a CNP), are not among them.
func (a *Analyzer) FrameFindings() []Finding {
	if a.frameFindings > len(a.findings) {
		return nil
	}
	fs := a.findings[a.frameFindings:]
	// A Feed may also record findings about earlier frames: move the
	// frame's own to the front, keeping the order of each (the report
	// sorts findings by frame, so the list's order across frames does not
	// show).
	n := 0
	for i := range fs {
		if fs[i].Frame != a.pkt.Frame {
			continue
		}
		f := fs[i]
		copy(fs[n+1:i+1], fs[n:i])
		fs[n] = f
		n++
	}
	return fs[:n:n]
}
