package analyze

// FrameFindings returns the findings that the last Feed recorded for its
// frame (Packet.Findings counts them), in the order found. The slice
// aliases the analyzer's list: it is valid until the next Feed and must
// not be modified. Findings beyond Options.MaxFindings are counted in
// Packet.Findings but not listed; findings decided only when the capture
// ends (PSN gaps, incomplete messages) are not among them.
func (a *Analyzer) FrameFindings() []Finding {
	if a.frameFindings > len(a.findings) {
		return nil
	}
	return a.findings[a.frameFindings:len(a.findings):len(a.findings)]
}
