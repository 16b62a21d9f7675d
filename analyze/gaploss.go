package analyze

import "time"

// GapLoss splits PSNs the capture did not see as the report splits a
// flow's missing PSNs (MissingLost, MissingNotCaptured and the psn_gap
// and capture_gap findings): lost before the responder (NAKed or
// resent), missed by the capture (a later response of the responder
// covers them and nobody resent them), and of unknown fate (the rest).
type GapLoss struct {
	Lost, NotCaptured, Unknown uint64
}

// Jump is a jump of a flow's requests over PSNs the capture had not seen
// (From to To), at the request that jumped (Frame, Time): the event the
// psn_gap findings and the flow's capture_gap finding are of. Its PSNs
// count as lost when NAKed or resent, even when a resend filled them
// later; the others only while still missing.
type Jump struct {
	From, To uint32
	Frame    uint64
	Time     time.Time
	GapLoss
}

// GapLosses returns the split of each of r.Gaps (the PSNs still missing),
// in their order, by the evidence the report classified the flow's
// missing PSNs with, so that the views drawing gaps (a plot, a sequence
// chart) colour them as the report counts them. A report decoded from
// JSON carries no evidence: its gaps are all of unknown fate.
func (r *Requests) GapLosses() []GapLoss {
	if len(r.Gaps) == 0 {
		return nil
	}
	c := classify(&r.ev, r.Gaps, r.low)
	out := make([]GapLoss, len(r.Gaps))
	for i, g := range r.Gaps {
		s := spanSet{{c.offset(g.From), c.offset(g.To) + 1}}
		still := s.minus(c.lostSet)
		out[i] = GapLoss{Lost: s.intersect(c.lostSet).size(), NotCaptured: still.intersect(c.covered).size()}
		out[i].Unknown = still.size() - out[i].NotCaptured
	}
	return out
}

// Jumps returns the flow's jumps the report kept evidence of, in capture
// order, each split as the report's findings split it (lossFindings).
func (r *Requests) Jumps() []Jump {
	c := classify(&r.ev, r.Gaps, r.low)
	if len(c.jumps) == 0 {
		return nil
	}
	out := make([]Jump, len(c.jumps))
	for i, j := range c.jumps {
		out[i] = Jump{From: j.ev.from, To: j.ev.to, Frame: j.ev.frame, Time: j.ev.t,
			GapLoss: GapLoss{Lost: j.lost, NotCaptured: j.notCaptured, Unknown: j.unknown}}
	}
	return out
}
