package report

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// maxTextPausedFlows is how many paused flows the text report names, and
// maxTextPause how many senders and priorities.
const (
	maxTextPausedFlows = 10
	maxTextPause       = 32
)

// writePause prints what the PFC and 802.3x PAUSE frames did: per sender
// and priority, then the flows that were on a paused priority.
func (t *textWriter) writePause(rep *analyze.Report) {
	if len(rep.Pause) == 0 {
		return
	}
	w, p := t.w, t.p
	fmt.Fprintln(w)
	p.Bold.Fprintln(w, "Pause (PFC)")
	fmt.Fprintf(w, "  timed at %s (--link-speed)\n", HumanRate(&rep.Capture.LinkSpeedBps))
	header := []cell{{text: "SENDER", left: true}, {text: "KIND", left: true}, {text: "PRIORITY"}, {text: "FRAMES"}, {text: "XOFF"}, {text: "XON"}, {text: "QUANTA"}, {text: "PAUSED"}, {text: "LONGEST"}}
	rows := min(len(rep.Pause), maxTextPause)
	p.table(w, "  ", header, rows, func(i int, row []cell) []cell {
		s := &rep.Pause[i]
		prio := "all"
		if s.Priority != nil {
			prio = fmt.Sprint(*s.Priority)
		}
		return append(row, cell{text: s.SrcMAC, left: true}, cell{text: s.Kind, left: true}, cell{text: prio},
			cell{text: fmt.Sprint(s.Frames)}, cell{text: fmt.Sprint(s.XOFFFrames)}, cell{text: fmt.Sprint(s.XONFrames)}, cell{text: fmt.Sprint(s.Quanta)},
			cell{text: HumanDuration(time.Duration(s.PausedNs))}, cell{text: HumanDuration(time.Duration(s.LongestPauseNs))})
	})
	if more := len(rep.Pause) - rows; more > 0 {
		fmt.Fprintf(w, "  and %d more senders and priorities (-o json: pause[])\n", more)
	}
	if u := rep.Capture.PauseFramesUnlisted; u > 0 {
		fmt.Fprintf(w, "  more senders and priorities than the %d followed one by one: %s\n", len(rep.Pause), Plural(int(u), "frame"))
	}
	n := 0
	for i := range rep.Flows {
		f := &rep.Flows[i]
		if f.PausedNs == nil {
			continue
		}
		if n == 0 {
			fmt.Fprintln(w, "  flows on a priority while it was paused:")
		}
		if n++; n > maxTextPausedFlows {
			continue
		}
		fmt.Fprintf(w, "    %s, priority %d: paused %s of its %s\n", f.Name(), *f.Priority,
			HumanDuration(time.Duration(*f.PausedNs)), HumanDuration(f.LastTime.Sub(f.FirstTime)))
	}
	if n > maxTextPausedFlows {
		fmt.Fprintf(w, "    and %d more (-o json: flows[].paused_ns)\n", n-maxTextPausedFlows)
	}
}
