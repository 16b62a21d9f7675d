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
		errs := "error unknown"
		if f.OffsetErrorNs >= 0 {
			errs = "± " + time.Duration(f.OffsetErrorNs).String()
		}
		if f.Method == points.MethodReference || f.Method == points.MethodOverride {
			errs = "exact"
		}
		fmt.Fprintf(w, "  %d. %s: clock %+v (%s, %s)\n", i+1, filename.Text(f.File), time.Duration(f.ClockOffsetNs), errs, f.Method)
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
		fmt.Fprintf(w, "  RTT measured at %s, nearest the requester (its requests leave and their ACKs arrive there): %s\n", filename.Text(a), plural(n[a], "flow"))
	}
}

// writeLinkLosses lists a link's lost and corrupted PSNs with their
// frames, and the ECN CE marks added on it.
func writeLinkLosses(w io.Writer, p Palette, l *points.Link) {
	from, to := filename.Text(l.From), filename.Text(l.To)
	for k, psn := range l.LostPSNs {
		p.Red.Fprintf(w, "  lost between %s and %s: PSN %d (%s frame %d), %s\n", from, to, psn, from, l.LostFrames[k], linkFlow(l))
	}
	for k, psn := range l.CorruptedPSNs {
		p.Red.Fprintf(w, "  corrupted between %s and %s: PSN %d (bad ICRC at %s frame %d), %s\n", from, to, psn, to, l.CorruptedFrames[k], linkFlow(l))
	}
	if n := uint64(len(l.LostPSNs)); l.Lost > n {
		fmt.Fprintf(w, "  … and %d more lost\n", l.Lost-n)
	}
	if l.ECNCEAdded > 0 {
		p.Yellow.Fprintf(w, "  ECN CE marks added between %s and %s: %d (ecn_ce findings at %s), %s\n", from, to, l.ECNCEAdded, to, linkFlow(l))
	}
}

// linkFlow names the flow of a link as findings do.
func linkFlow(l *points.Link) analyze.FlowID {
	return analyze.FlowID{Src: l.Src, Dst: l.Dst, DestQP: l.DestQP}
}
