package report

import (
	"fmt"
	"io"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/filename"
	"github.com/roce-dissect/roce-dissect/points"
)

// writePoints writes the "Capture points" text section.
func (t *textWriter) writePoints(pts *points.Report, rep *analyze.Report) {
	if pts == nil {
		return
	}
	w, p := t.w, t.p
	fmt.Fprintln(w)
	p.Bold.Fprintln(w, "Capture points")
	for i, f := range pts.Files {
		fmt.Fprintf(w, "  %d. %s: %s\n", i+1, filename.Text(f.File), PointClock(f))
	}
	if len(pts.Links) == 0 {
		fmt.Fprintln(w, "  no flow seen at two points")
		return
	}
	header := []cell{{text: "FLOW", left: true}, {text: "FROM → TO", left: true}, {text: "MATCHED"}, {text: "LOST"}, {text: "NOT CAPTURED"}, {text: "CORRUPTED"}, {text: "REORDERED"}, {text: "DELAY MIN"}, {text: "MEDIAN"}, {text: "P99"}, {text: "MAX"}}
	p.table(w, "  ", header, len(pts.Links), func(i int, row []cell) []cell {
		l := &pts.Links[i]
		lost := cell{text: fmt.Sprint(l.Lost)}
		if l.Lost > 0 {
			lost.c = p.Red
		}
		corr := cell{text: fmt.Sprint(l.Corrupted)}
		if l.Corrupted > 0 {
			corr.c = p.Red
		}
		d := l.OneWayDelayNs
		return append(row,
			cell{text: linkFlow(l).String(), left: true},
			cell{text: filename.Text(l.From) + " → " + filename.Text(l.To), left: true},
			cell{text: fmt.Sprint(l.Matched)}, lost, cell{text: fmt.Sprint(l.NotCaptured)}, corr, cell{text: fmt.Sprint(l.Reordered)},
			cell{text: time.Duration(d.Min).String()}, cell{text: time.Duration(d.Median).String()},
			cell{text: time.Duration(d.P99).String()}, cell{text: time.Duration(d.Max).String()})
	})
	for i := range pts.Links {
		writeLinkLosses(w, p, &pts.Links[i])
	}
	writeRTTAt(w, rep)
}

// writeRTTAt says where the flows' RTT was measured: at the point
// nearest each flow's requester (Responses.RTTAt), a line per point.
func writeRTTAt(w io.Writer, rep *analyze.Report) {
	var at []string
	n := map[string]int{}
	for i := range rep.Flows {
		if a := rep.Flows[i].Responses.RTTAt; a != "" {
			if n[a] == 0 {
				at = append(at, a)
			}
			n[a]++
		}
	}
	for _, a := range at {
		fmt.Fprintf(w, "  RTT measured at %s, nearest the requester (its requests leave and their ACKs arrive there): %s\n", filename.Text(a), Plural(n[a], "flow"))
	}
}

// PointClock says how a capture point's clock stands to the reference
// file's: "clock 1.499988ms (± 3.018µs, two_way)", "clock 0s (exact,
// reference)".
func PointClock(f points.File) string {
	errs := "error unknown"
	if f.OffsetErrorNs >= 0 {
		errs = "± " + time.Duration(f.OffsetErrorNs).String()
	}
	if f.Method == points.MethodReference || f.Method == points.MethodOverride {
		errs = "exact"
	}
	return fmt.Sprintf("clock %+v (%s, %s)", time.Duration(f.ClockOffsetNs), errs, f.Method)
}

// writeLinkLosses lists a link's lost and corrupted PSNs with their
// frames, and the ECN CE marks added on it.
func writeLinkLosses(w io.Writer, p Palette, l *points.Link) {
	for _, line := range LinkLosses(l) {
		switch {
		case line.Bad:
			p.Red.Fprintf(w, "  %s\n", line.Text)
		case line.Warn:
			p.Yellow.Fprintf(w, "  %s\n", line.Text)
		default:
			fmt.Fprintf(w, "  %s\n", line.Text)
		}
	}
}

// LossLine is a line of a capture points report on PSNs lost or corrupted
// between two points, or ECN CE marks added there; Bad ones are shown as
// problems (red), Warn ones as warnings (yellow).
type LossLine struct {
	Text      string
	Bad, Warn bool
}

// LinkLosses are the lines on a link's lost and corrupted PSNs, with their
// frames ("lost between a.pcap and b.pcap: PSN 105 (a.pcap frame 8), …").
func LinkLosses(l *points.Link) []LossLine {
	var out []LossLine
	from, to := filename.Text(l.From), filename.Text(l.To)
	for k, psn := range l.LostPSNs {
		out = append(out, LossLine{Text: fmt.Sprintf("lost between %s and %s: PSN %d (%s frame %d), %s", from, to, psn, from, l.LostFrames[k], linkFlow(l)), Bad: true})
	}
	for k, psn := range l.CorruptedPSNs {
		out = append(out, LossLine{Text: fmt.Sprintf("corrupted between %s and %s: PSN %d (bad ICRC at %s frame %d), %s", from, to, psn, to, l.CorruptedFrames[k], linkFlow(l)), Bad: true})
	}
	if n := uint64(len(l.LostPSNs)); l.Lost > n {
		out = append(out, LossLine{Text: fmt.Sprintf("… and %d more lost", l.Lost-n)})
	}
	if l.ECNCEAdded > 0 {
		out = append(out, LossLine{Text: fmt.Sprintf("ECN CE marks added between %s and %s: %d (ecn_ce findings at %s), %s", from, to, l.ECNCEAdded, to, linkFlow(l)), Warn: true})
	}
	return out
}

// linkFlow names the flow of a link as findings do.
func linkFlow(l *points.Link) analyze.FlowID {
	return analyze.FlowID{Src: l.Src, Dst: l.Dst, DestQP: l.DestQP}
}
