package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/points"
)

// palette colours the text output: problems red, warnings yellow, healthy
// green. Each colour is set on or off for this run only (no global state).
type palette struct {
	on                       bool
	red, yellow, green, bold *color.Color
}

func newPalette(mode string, w io.Writer) palette {
	on := false
	switch mode {
	case "always":
		on = true
	case "auto":
		if f, ok := w.(*os.File); ok && os.Getenv("NO_COLOR") == "" {
			on = isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
		}
	}
	p := palette{on: on, red: color.New(color.FgRed, color.Bold), yellow: color.New(color.FgYellow), green: color.New(color.FgGreen), bold: color.New(color.Bold)}
	for _, c := range []*color.Color{p.red, p.yellow, p.green, p.bold} {
		if on {
			c.EnableColor()
		} else {
			c.DisableColor()
		}
	}
	return p
}

func (p palette) severity(s analyze.Severity) *color.Color {
	switch s {
	case analyze.SeverityError:
		return p.red
	case analyze.SeverityWarning:
		return p.yellow
	}
	return p.green
}

// writeJSON writes the report as indented JSON, exactly the JSON of
// analyze.Report, one element of its lists at a time: encoding the whole
// report at once holds it twice in memory (a million flows are gigabytes).
func writeJSON(w io.Writer, rep *analyze.Report) error { return writeJSONPoints(w, rep, nil) }

// writeJSONPoints is writeJSON with the capture points' "points" object
// when pts is not nil.
func writeJSONPoints(w io.Writer, rep *analyze.Report, pts *points.Report) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	put := func(prefix string, v any) error {
		b, err := json.MarshalIndent(v, prefix, "  ")
		if err == nil {
			_, err = bw.Write(b)
		}
		return err
	}
	list := func(name string, n int, elem func(int) any) error {
		fmt.Fprintf(bw, "  %q: [", name)
		for i := range n {
			if i > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("\n    ")
			if err := put("    ", elem(i)); err != nil {
				return err
			}
		}
		if n > 0 {
			bw.WriteString("\n  ")
		}
		_, err := bw.WriteString("],\n")
		return err
	}
	bw.WriteString("{\n  \"capture\": ")
	if err := put("  ", rep.Capture); err != nil {
		return err
	}
	bw.WriteString(",\n")
	for _, l := range []struct {
		name string
		n    int
		elem func(int) any
	}{
		{"connections", len(rep.Connections), func(i int) any { return &rep.Connections[i] }},
		{"flows", len(rep.Flows), func(i int) any { return &rep.Flows[i] }},
		{"findings", len(rep.Findings), func(i int) any { return &rep.Findings[i] }},
	} {
		if err := list(l.name, l.n, l.elem); err != nil {
			return err
		}
	}
	if pts != nil {
		bw.WriteString("  \"points\": ")
		if err := put("  ", pts); err != nil {
			return err
		}
		bw.WriteString(",\n")
	}
	fmt.Fprintf(bw, "  \"findings_dropped\": %d\n}\n", rep.FindingsDropped)
	return bw.Flush()
}

// cell is one table cell with an optional colour.
type cell struct {
	text string
	c    *color.Color
	left bool
}

// table writes aligned columns: the header, then n rows that row(i, buf)
// fills. Widths come from the plain text (a first pass over the rows),
// colour is added after padding; rows are made twice rather than kept, so
// that a table of a million flows is not held in memory.
func (p palette) table(w io.Writer, indent string, header []cell, n int, row func(i int, buf []cell) []cell) {
	widths := make([]int, len(header))
	measure := func(cells []cell) {
		for i, c := range cells {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c.text))
		}
	}
	measure(header)
	var buf []cell
	for i := range n {
		buf = row(i, buf[:0])
		measure(buf)
	}
	var b strings.Builder
	emit := func(cells []cell) {
		b.Reset()
		b.WriteString(indent)
		for i, c := range cells {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text))
			text := c.text
			if c.c != nil {
				text = c.c.Sprint(c.text)
			}
			if c.left {
				b.WriteString(text + pad)
			} else {
				b.WriteString(pad + text)
			}
			if i < len(cells)-1 {
				b.WriteString("  ")
			}
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	emit(header)
	for i := range n {
		buf = row(i, buf[:0])
		emit(buf)
	}
}

// humanBytes renders a byte count in SI units.
func humanBytes(n uint64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, u := float64(n), 0
	for v >= unit && u < 5 {
		v /= unit
		u++
	}
	return fmt.Sprintf("%.1f %cB", v, "kMGTPE"[u-1])
}

// humanRate renders bits per second.
func humanRate(bps *float64) string {
	if bps == nil {
		return "-"
	}
	v, u := *bps, 0
	units := []string{"b/s", "kb/s", "Mb/s", "Gb/s", "Tb/s"}
	for v >= 1000 && u < len(units)-1 {
		v /= 1000
		u++
	}
	return fmt.Sprintf("%.2f %s", v, units[u])
}

func humanDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "0"
	case d < time.Millisecond:
		return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3fs", d.Seconds())
}

func qpString(qp uint32) string { return fmt.Sprintf("0x%06x", qp) }

func optInt(v *int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

// writeText prints the report for people. readErr, when not empty, says
// why the capture could not be read completely; the report then covers
// what was read, and says so.
func (r *runner) writeText(title string, rep *analyze.Report, readErr string) {
	w, p := r.stdout, r.pal
	c := rep.Capture
	p.bold.Fprintf(w, "Capture %s\n", title)
	fmt.Fprintf(w, "  %d frames: %d RDMA, %d other, ", c.Frames, c.RoCEPackets, c.OtherPackets)
	if c.Malformed > 0 {
		p.red.Fprintf(w, "%d malformed", c.Malformed)
	} else {
		fmt.Fprintf(w, "%d malformed", c.Malformed)
	}
	fmt.Fprintf(w, "; %s", humanBytes(c.Bytes))
	if c.FirstTime != nil {
		fmt.Fprintf(w, "; %s to %s (%s)", c.FirstTime.UTC().Format(time.RFC3339Nano), c.LastTime.UTC().Format(time.RFC3339Nano), humanDuration(c.LastTime.Sub(*c.FirstTime)))
	}
	fmt.Fprintln(w)
	writeCaptureFiles(w, c.Files)
	if readErr != "" {
		p.red.Fprintf(w, "  error: %s\n", readErr)
	}
	if c.NotCaptured > 0 {
		p.yellow.Fprintf(w, "  the capture missed %s that the responders acknowledged (capture-side drops, not network loss)\n", plural(int(c.NotCaptured), "request packet"))
	}
	writeSnifferNote(w, c)
	if c.FlowsDropped > 0 {
		p.yellow.Fprintf(w, "  flow table full: about %d more flows (%d packets) counted but not tracked (--max-flows)\n", c.FlowsDropped, c.PacketsOfDroppedFlows)
	}
	if c.ConnectionsDropped > 0 {
		p.yellow.Fprintf(w, "  connection table full: %d more CM connections (REQs) counted but not tracked (--max-connections)\n", c.ConnectionsDropped)
	}
	if c.CutFrames > 0 {
		fmt.Fprintf(w, "  %d frames cut by the capture tool without recording their length: sizes from their headers\n", c.CutFrames)
	}

	if len(rep.Connections) > 0 {
		fmt.Fprintln(w)
		p.bold.Fprintln(w, "Connections (CM)")
		header := []cell{{text: "#", left: true}, {text: "TRANSPORT", left: true}, {text: "REQUESTER", left: true}, {text: "QPN"}, {text: "SENDS FROM PSN"}, {text: ""}, {text: "RESPONDER", left: true}, {text: "QPN"}, {text: "SENDS FROM PSN"}, {text: "MTU"}, {text: "STATE", left: true}}
		p.table(w, "  ", header, len(rep.Connections), func(i int, row []cell) []cell {
			cn := &rep.Connections[i]
			state := cell{text: cn.State, left: true, c: p.green}
			switch cn.State {
			case analyze.StateRejected:
				state = cell{text: "rejected: " + cn.RejectReason, left: true, c: p.red}
			case analyze.StateRequested:
				state.c = p.yellow
			}
			return append(row,
				cell{text: fmt.Sprint(cn.ID), left: true}, cell{text: strOrUnknown(cn.Transport), left: true},
				cell{text: endpointAddr(cn.Requester), left: true}, cell{text: qpOrUnknown(cn.Requester.QPN)}, cell{text: optPSN(cn.Requester.SendPSN)},
				cell{text: "↔"},
				cell{text: endpointAddr(cn.Responder), left: true}, cell{text: qpOrUnknown(cn.Responder.QPN)}, cell{text: optPSN(cn.Responder.SendPSN)},
				cell{text: numOrUnknown(cn.PathMTU)}, state)
		})
		for _, cn := range rep.Connections {
			svc := "service " + strOrUnknown(cn.ServiceID)
			if cn.RDMACMPortSpace != "" {
				svc += fmt.Sprintf(" (RDMA-CM %s port %d)", cn.RDMACMPortSpace, cn.RDMACMPort)
			}
			fmt.Fprintf(w, "  #%d %s; LIDs %s / %s; GIDs %s / %s; frames%s%s\n", cn.ID, svc,
				lidString(cn.Requester), lidString(cn.Responder), strOrUnknown(cn.Requester.GID), strOrUnknown(cn.Responder.GID), connFrames(cn.Frames), cutNote(&cn))
		}
	}

	fmt.Fprintln(w)
	p.bold.Fprintln(w, "Flows")
	if len(rep.Flows) == 0 {
		fmt.Fprintln(w, "  no RDMA flows")
	} else {
		header := []cell{{text: "SRC → DST", left: true}, {text: "QP"}, {text: "TRANSPORT", left: true}, {text: "PACKETS"}, {text: "PAYLOAD"}, {text: "DURATION"}, {text: "THROUGHPUT"}, {text: "RTT"}, {text: "MTU INF/NEG"}, {text: "MISSING"}, {text: "RETX"}, {text: "NAKS"}, {text: "CNPS"}, {text: "ECN-CE"}, {text: "ICRC-ERR"}}
		sniffed := c.ICRCPortRewritten > 0
		if sniffed {
			header = append(header, cell{text: "SRC PORT", left: true})
		}
		listed, left := r.listedFlows(rep)
		p.table(w, "  ", header, len(listed), func(i int, row []cell) []cell {
			f := &rep.Flows[listed[i]]
			row = append(row,
				cell{text: f.Src + " → " + f.Dst, left: true}, cell{text: qpString(f.DestQP)}, cell{text: f.Transport, left: true},
				cell{text: fmt.Sprint(f.Packets)}, cell{text: humanBytes(f.PayloadBytes)}, cell{text: humanDuration(f.LastTime.Sub(f.FirstTime))},
				cell{text: humanRate(f.ThroughputBps)}, rttCell(f),
				mtuCell(p, f),
				countCell(p, f.Requests.Missing, p.red), countCell(p, f.Requests.Retransmitted+f.Requests.Duplicates, p.yellow),
				countCell(p, f.Responses.NAKs+f.Responses.RNRNAKs, p.red), countCell(p, f.Congestion.CNPs, p.yellow),
				countCell(p, f.Congestion.ECNCE, p.yellow), countCell(p, f.ICRC.Bad, p.red))
			if sniffed {
				row = append(row, srcPortCell(f))
			}
			return row
		})
		if left > 0 {
			fmt.Fprintf(w, "  … and %d more flows not listed (--all-flows lists them)\n", left)
		}
	}

	r.writeNIC(w, rep)

	fmt.Fprintln(w)
	if len(rep.Findings) == 0 {
		if readErr != "" {
			p.yellow.Fprintln(w, "No problems found in what could be read.")
		} else {
			p.green.Fprintln(w, "No problems found.")
		}
		return
	}
	fs := append([]analyze.Finding{}, rep.Findings...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Severity < fs[j].Severity })
	counts := map[analyze.Severity]int{}
	for _, f := range fs {
		counts[f.Severity]++
	}
	p.bold.Fprintf(w, "Findings (worst first): %s, %s, %s\n", plural(counts[analyze.SeverityError], "error"), plural(counts[analyze.SeverityWarning], "warning"), fmt.Sprintf("%d info", counts[analyze.SeverityInfo]))
	for _, f := range fs {
		where := fmt.Sprintf("frame %d", f.Frame)
		if f.File != "" {
			where = f.File + " " + where
		}
		fmt.Fprintf(w, "  %s %s %s  %s: %s\n", p.severity(f.Severity).Sprintf("%-7s", strings.ToUpper(f.Severity.String())), where, f.Kind, f.FlowName(), f.Detail)
	}
	if rep.FindingsDropped > 0 {
		p.yellow.Fprintf(w, "  … and %d more findings not listed\n", rep.FindingsDropped)
	}
}

// rttCell is the median request → response time of the flow's requests
// (analysis.md, "RTT"), "-" without samples.
func rttCell(f *analyze.Flow) cell {
	if f.Responses.RTT == nil || f.Responses.RTT.Samples == 0 {
		return cell{text: "-"}
	}
	return cell{text: humanDuration(time.Duration(f.Responses.RTT.MedianNs))}
}

func countCell(p palette, n uint64, bad *color.Color) cell {
	if n == 0 {
		return cell{text: "0", c: p.green}
	}
	return cell{text: fmt.Sprint(n), c: bad}
}

func mtuCell(p palette, f *analyze.Flow) cell {
	text := optInt(f.MTU.Inferred) + "/" + optInt(f.MTU.Negotiated)
	if f.MTU.Inferred != nil && f.MTU.Negotiated != nil && *f.MTU.Inferred != *f.MTU.Negotiated || f.MTU.AboveNegotiated > 0 {
		return cell{text: text, c: p.red}
	}
	return cell{text: text}
}

// optPSN prints a PSN that may not have been captured.
func optPSN(v *uint32) string {
	if v == nil {
		return "?"
	}
	return fmt.Sprint(*v)
}

func endpointAddr(e analyze.Endpoint) string {
	if e.IP != "" {
		return e.IP
	}
	return strOrUnknown(e.GID)
}

func lidString(e analyze.Endpoint) string {
	if e.LID == nil {
		return uncaptured
	}
	if e.LIDPlaceholder != nil && *e.LIDPlaceholder {
		return fmt.Sprintf("%d (placeholder)", *e.LID)
	}
	return fmt.Sprint(*e.LID)
}

// writeCaptureFiles writes a line for each of the files read as one
// capture (analyze.Capture.Files), none for one file.
func writeCaptureFiles(w io.Writer, files []analyze.CaptureFile) {
	if len(files) == 0 {
		return
	}
	fmt.Fprintf(w, "  read as one capture: %d files whose time ranges follow one another; frames are numbered in their files\n", len(files))
	rows := make([][3]string, len(files))
	width := [2]int{}
	for i, f := range files {
		rows[i] = [3]string{f.File, fmt.Sprintf("%d frames", f.Frames), ""}
		if f.FirstTime != nil {
			rows[i][2] = fmt.Sprintf("%s to %s", f.FirstTime.UTC().Format(time.RFC3339Nano), f.LastTime.UTC().Format(time.RFC3339Nano))
		}
		width[0], width[1] = max(width[0], len(rows[i][0])), max(width[1], len(rows[i][1]))
	}
	for _, row := range rows {
		fmt.Fprintf(w, "    %-*s  %*s  %s\n", width[0], row[0], width[1], row[1], row[2])
	}
}

func connFrames(f analyze.ConnFrames) string {
	var b strings.Builder
	var files analyze.ConnFrameFiles
	if f.Files != nil {
		files = *f.Files
	}
	for _, x := range []struct {
		name, file string
		frame      uint64
	}{{"REQ", files.REQ, f.REQ}, {"REP", files.REP, f.REP}, {"RTU", files.RTU, f.RTU}, {"REJ", files.REJ, f.REJ}, {"DREQ", files.DREQ, f.DREQ}, {"DREP", files.DREP, f.DREP}} {
		switch {
		case x.frame == 0:
		case x.file != "":
			fmt.Fprintf(&b, " %s %s %d", x.name, x.file, x.frame)
		default:
			fmt.Fprintf(&b, " %s %d", x.name, x.frame)
		}
	}
	return b.String()
}

// plural writes "1 error", "2 errors".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
