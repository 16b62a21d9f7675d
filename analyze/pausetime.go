package analyze

import "github.com/roce-dissect/roce-dissect/analyze/internal/pfc"

// The flows' priorities and paused time: a frame's 802.1p priority, and
// the time that priority was paused while the flow was active (package
// pfc's Timeline of the pause stretches of every sender).

// applyPause gives a flow its priority and the time that priority was
// paused while the flow was active (its first to its last packet); nil
// tl: the capture holds no pause frames.
func applyPause(tl *pfc.Timeline, f *Flow) {
	if tl == nil || f.prio < 0 {
		return
	}
	p := int(f.prio)
	f.Priority = &p
	if n := tl.Overlap(p, f.FirstTime.UnixNano(), f.LastTime.UnixNano()); n > 0 {
		f.PausedNs = &n
	}
}

// PausedTime is how long PFC or 802.3x PAUSE frames paused the flow's
// priority while it was active: PausedNs, or 0 when they never did; ok
// is false when the figure is unknown (Priority nil: the capture holds no
// pause frames, or the flow has no priority), where the JSON report
// omits both keys. Tables use it to tell "not paused" (0) from "not
// known" (null).
func (f *Flow) PausedTime() (ns int64, ok bool) {
	switch {
	case f.Priority == nil:
		return 0, false
	case f.PausedNs == nil:
		return 0, true
	}
	return *f.PausedNs, true
}

// priority is the 802.1p priority of the frame decoded: its innermost
// VLAN tag's, else its DSCP's (Options.DSCPPriority); -1 for neither.
func (a *Analyzer) priority(h *frameHeaders) int8 {
	switch {
	case h.pcp >= 0:
		return h.pcp
	case h.dscp < 0:
		return -1
	case int(h.dscp) < len(a.opts.DSCPPriority):
		return int8(a.opts.DSCPPriority[h.dscp] & 7)
	}
	return h.dscp >> 3
}
