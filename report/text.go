package report

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fatih/color"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/filename"
)

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

// HumanRate writes bits per second as the reports do, "25.00 Gb/s"; "-"
// for nil (no rate).
func HumanRate(bps *float64) string {
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

// HumanDuration writes a duration as the reports do: "0", "12.3µs",
// "1.34ms" or "2.500s".
func HumanDuration(d time.Duration) string {
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

// QP writes a queue pair number as the reports do: 0x and six hex digits.
func QP(qp uint32) string { return fmt.Sprintf("0x%06x", qp) }

// writeOthers writes the line of the other frames by protocol, most
// frames first: "770 other frames: tcp 43021 (612), arp (8), 3 unlisted".
func writeOthers(w io.Writer, c *analyze.Capture) {
	if len(c.OtherProtocols) == 0 && c.OtherFramesUnlisted == 0 {
		return
	}
	fmt.Fprintf(w, "  %d other frames:", c.OtherPackets)
	sep := " "
	for _, o := range c.OtherProtocols {
		fmt.Fprintf(w, "%s%s", sep, o.Protocol)
		if o.Port != nil {
			fmt.Fprintf(w, " %d", *o.Port)
		}
		fmt.Fprintf(w, " (%d)", o.Frames)
		sep = ", "
	}
	if c.OtherFramesUnlisted > 0 {
		fmt.Fprintf(w, "%s%d unlisted", sep, c.OtherFramesUnlisted)
	}
	fmt.Fprintln(w)
}

func optInt(v *int) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprint(*v)
}

// report prints the report for people.
func (t *textWriter) report(rep *analyze.Report) {
	w, p, readErr := t.w, t.p, t.o.ReadErr
	c := rep.Capture
	p.Bold.Fprintf(w, "Capture %s\n", t.o.Title)
	fmt.Fprintf(w, "  %d frames: %d RDMA, %d other, ", c.Frames, c.RoCEPackets, c.OtherPackets)
	if c.Malformed > 0 {
		p.Red.Fprintf(w, "%d malformed", c.Malformed)
	} else {
		fmt.Fprintf(w, "%d malformed", c.Malformed)
	}
	fmt.Fprintf(w, "; %s", humanBytes(c.Bytes))
	if c.FirstTime != nil {
		fmt.Fprintf(w, "; %s to %s (%s)", c.FirstTime.UTC().Format(time.RFC3339Nano), c.LastTime.UTC().Format(time.RFC3339Nano), HumanDuration(c.LastTime.Sub(*c.FirstTime)))
	}
	fmt.Fprintln(w)
	writeOthers(w, &c)
	writeCaptureFiles(w, c.Files, c.FilesMerged)
	writeWraps(w, c)
	for _, n := range t.o.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
	t.writeInputs()
	if readErr != "" {
		p.Red.Fprintf(w, "  error: %s\n", readErr)
	}
	if c.NotCaptured > 0 {
		p.Yellow.Fprintf(w, "  the capture missed %s that the responders acknowledged (capture-side drops, not network loss)\n", Plural(int(c.NotCaptured), "request packet"))
	}
	writeSnifferNote(w, c)
	if c.FlowsDropped > 0 {
		p.Yellow.Fprintf(w, "  flow table full: about %d more flows (%d packets) counted but not tracked (--max-flows)\n", c.FlowsDropped, c.PacketsOfDroppedFlows)
	}
	if c.ConnectionsDropped > 0 {
		p.Yellow.Fprintf(w, "  connection table full: %d more CM connections (REQs) counted but not tracked (--max-connections)\n", c.ConnectionsDropped)
	}
	if c.CutFrames > 0 {
		fmt.Fprintf(w, "  %d frames cut by the capture tool without recording their length: sizes from their headers\n", c.CutFrames)
	}

	if len(rep.Connections) > 0 {
		fmt.Fprintln(w)
		p.Bold.Fprintln(w, connectionsTitle(rep.Connections))
		header := []cell{{text: "#", left: true}, {text: "TRANSPORT", left: true}, {text: "REQUESTER", left: true}, {text: "QPN"}, {text: "SENDS FROM PSN"}, {text: ""}, {text: "RESPONDER", left: true}, {text: "QPN"}, {text: "SENDS FROM PSN"}, {text: "MTU"}, {text: "STATE", left: true}}
		// Two tenants' connections of the same addresses and CommIDs are
		// told apart by their tunnel, as their flows are.
		tunneled := false
		for i := range rep.Connections {
			tunneled = tunneled || rep.Connections[i].Tunnel != nil
		}
		if tunneled {
			header = append(header, cell{text: "TUNNEL", left: true})
		}
		p.table(w, "  ", header, len(rep.Connections), func(i int, row []cell) []cell {
			cn := &rep.Connections[i]
			state := cell{text: cn.State, left: true, c: p.Green}
			reqPSN, respPSN, mtu := optPSN(cn.Requester.SendPSN), optPSN(cn.Responder.SendPSN), numOrUnknown(cn.PathMTU)
			switch cn.State {
			case analyze.StateRejected:
				state = cell{text: "rejected: " + cn.RejectReason, left: true, c: p.Red}
			case analyze.StateRequested:
				state.c = p.Yellow
			case analyze.StateInferred: // no CM message said these
				state.c, reqPSN, respPSN, mtu = nil, "-", "-", "-"
			}
			row = append(row,
				cell{text: fmt.Sprint(cn.ID), left: true}, cell{text: strOrUnknown(cn.Transport), left: true},
				cell{text: endpointAddr(cn.Requester), left: true}, cell{text: qpOrUnknown(cn.Requester.QPN)}, cell{text: reqPSN},
				cell{text: "↔"},
				cell{text: endpointAddr(cn.Responder), left: true}, cell{text: qpOrUnknown(cn.Responder.QPN)}, cell{text: respPSN},
				cell{text: mtu}, state)
			if tunneled {
				row = append(row, cell{text: cn.Tunnel.String(), left: true})
			}
			return row
		})
		for _, cn := range rep.Connections {
			if cn.State == analyze.StateInferred {
				continue // no CM message: nothing more to say
			}
			svc := "service " + strOrUnknown(cn.ServiceID)
			if cn.RDMACMPortSpace != "" {
				svc += fmt.Sprintf(" (RDMA-CM %s port %d)", cn.RDMACMPortSpace, cn.RDMACMPort)
			}
			fmt.Fprintf(w, "  #%d %s; LIDs %s / %s; GIDs %s / %s; frames%s%s\n", cn.ID, svc,
				lidString(cn.Requester), lidString(cn.Responder), strOrUnknown(cn.Requester.GID), strOrUnknown(cn.Responder.GID), connFrames(cn.Frames), cutNote(&cn))
		}
	}

	fmt.Fprintln(w)
	p.Bold.Fprintln(w, "Flows")
	if len(rep.Flows) == 0 {
		fmt.Fprintln(w, "  no RDMA flows")
	} else {
		header := []cell{{text: "SRC → DST", left: true}, {text: "QP"}, {text: "TRANSPORT", left: true}, {text: "PACKETS"}, {text: "PAYLOAD"}, {text: "DURATION"}, {text: "THROUGHPUT"}, {text: "ACTIVE"}, {text: "RTT"}, {text: "MTU INF/NEG"}, {text: "MISSING"}, {text: "RETX"}, {text: "NAKS"}, {text: "CNPS"}, {text: "ECN-CE"}, {text: "ICRC-ERR"}}
		sniffed := c.ICRCPortRewritten > 0
		if sniffed {
			header = append(header, cell{text: "SRC PORT", left: true})
		}
		tunneled := false // a flow arrived in a tunnel that keys flows (Flow.Tunnel)
		for i := range rep.Flows {
			tunneled = tunneled || rep.Flows[i].Tunnel != nil
		}
		if tunneled {
			header = append(header, cell{text: "TUNNEL", left: true})
		}
		listed, left := t.listedFlows(rep)
		p.table(w, "  ", header, len(listed), func(i int, row []cell) []cell {
			f := &rep.Flows[listed[i]]
			row = append(row,
				cell{text: f.Src + " → " + f.Dst, left: true}, cell{text: QP(f.DestQP)}, cell{text: f.Transport, left: true},
				cell{text: fmt.Sprint(f.Packets)}, payloadCell(f), cell{text: HumanDuration(f.LastTime.Sub(f.FirstTime))},
				cell{text: HumanRate(f.ThroughputBps)}, cell{text: HumanRate(f.ActiveThroughputBps)}, rttCell(f),
				mtuCell(p, f),
				missingCell(p, &f.Requests), countCell(p, f.Requests.Retransmitted+f.Requests.Duplicates, p.Yellow),
				countCell(p, f.Responses.NAKs+f.Responses.RNRNAKs, p.Red), countCell(p, f.Congestion.CNPs, p.Yellow),
				countCell(p, f.Congestion.ECNCE, p.Yellow), countCell(p, f.ICRC.Bad, p.Red))
			if sniffed {
				row = append(row, srcPortCell(f))
			}
			if tunneled {
				row = append(row, cell{text: f.Tunnel.String(), left: true})
			}
			return row
		})
		if left > 0 {
			fmt.Fprintf(w, "  … and %d more flows not listed (--all-flows lists them)\n", left)
		}
	}

	t.writeNIC(w, rep)
	t.writePause(rep)

	t.writeFindings(rep)
}

// payloadCell is the flow's payload bytes or, for a flow whose packets
// carry none by design, what they carried instead ("ACKs", "atomics",
// "READ requests", joined by "+"; "CNPs" for a flow of only CNPs): a bare "0 B" said nothing of an
// atomic flow (issue 40).
func payloadCell(f *analyze.Flow) cell {
	o := &f.Ops
	if f.PayloadBytes > 0 || o.Send+o.Write+o.WriteImm+o.ReadResponse+o.Other > 0 {
		return cell{text: humanBytes(f.PayloadBytes)}
	}
	var kinds []string
	for _, k := range []struct {
		n    uint64
		name string
	}{{o.ReadRequest, "READ requests"}, {o.Atomic, "atomics"}, {o.AtomicACK, "atomic ACKs"}, {o.ACK, "ACKs"}} {
		if k.n > 0 {
			kinds = append(kinds, k.name)
		}
	}
	if len(kinds) == 0 && o.CNP > 0 {
		kinds = append(kinds, "CNPs") // named only alone: CNPS counts them
	}
	if len(kinds) == 0 {
		return cell{text: humanBytes(f.PayloadBytes)}
	}
	return cell{text: strings.Join(kinds, "+")}
}

// rttCell is the median request → response time of the flow's requests
// (analysis.md, "RTT"), "-" without samples.
func rttCell(f *analyze.Flow) cell {
	if f.Responses.RTT == nil || f.Responses.RTT.Samples == 0 {
		return cell{text: "-"}
	}
	return cell{text: HumanDuration(time.Duration(f.Responses.RTT.MedianNs))}
}

// missingCell is a flow's missing PSNs, red only when some were lost in
// the network (NAKed or resent); yellow when the capture missed them or
// their fate is unknown (the summary says "the capture missed N request
// packets … not network loss").
func missingCell(p Palette, r *analyze.Requests) cell {
	if r.MissingLost > 0 {
		return countCell(p, r.Missing, p.Red)
	}
	return countCell(p, r.Missing, p.Yellow)
}

func countCell(p Palette, n uint64, bad *color.Color) cell {
	if n == 0 {
		return cell{text: "0", c: p.Green}
	}
	return cell{text: fmt.Sprint(n), c: bad}
}

func mtuCell(p Palette, f *analyze.Flow) cell {
	text := optInt(f.MTU.Inferred) + "/" + optInt(f.MTU.Negotiated)
	if f.MTU.Inferred != nil && f.MTU.Negotiated != nil && *f.MTU.Inferred != *f.MTU.Negotiated || f.MTU.AboveNegotiated > 0 {
		return cell{text: text, c: p.Red}
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

// writeInputs writes a line for each file of a run that analyzed several
// each on its own (TextOptions.Inputs): its frames, RDMA packets, time
// range and read error.
func (t *textWriter) writeInputs() {
	in := t.o.Inputs
	if len(in) == 0 {
		return
	}
	rows := make([][3]string, len(in))
	width := [2]int{}
	for i, f := range in {
		c := f.Capture
		rows[i] = [3]string{filename.Text(f.File), fmt.Sprintf("%d frames, %d RDMA", c.Frames, c.RoCEPackets), ""}
		if c.FirstTime != nil {
			rows[i][2] = fmt.Sprintf("%s to %s", c.FirstTime.UTC().Format(time.RFC3339Nano), c.LastTime.UTC().Format(time.RFC3339Nano))
		}
		width[0], width[1] = max(width[0], len(rows[i][0])), max(width[1], len(rows[i][1]))
	}
	for i, row := range rows {
		fmt.Fprintf(t.w, "    %-*s  %*s  %s\n", width[0], row[0], width[1], row[1], row[2])
		if in[i].Err != "" {
			t.p.Red.Fprintf(t.w, "      error: %s\n", in[i].Err)
		}
	}
}

// writeCaptureFiles writes a line for each of the files read as one
// capture (analyze.Capture.Files), read one after another or merged by
// time; none for one file.
func writeCaptureFiles(w io.Writer, files []analyze.CaptureFile, merged bool) {
	switch {
	case len(files) == 0:
		return
	case merged:
		fmt.Fprintf(w, "  merged by time as one capture: %d files, each next frame the earliest of theirs (as mergecap merges them); frames are numbered in their files\n", len(files))
	default:
		fmt.Fprintf(w, "  read as one capture: %d files whose time ranges follow one another; frames are numbered in their files\n", len(files))
	}
	rows := make([][3]string, len(files))
	width := [2]int{}
	for i, f := range files {
		rows[i] = [3]string{filename.Text(f.File), fmt.Sprintf("%d frames", f.Frames), ""}
		switch {
		case f.FirstTime != nil:
			rows[i][2] = fmt.Sprintf("%s to %s", f.FirstTime.UTC().Format(time.RFC3339Nano), f.LastTime.UTC().Format(time.RFC3339Nano))
		case f.Frames > 0:
			rows[i][2] = "no timestamps (pcapng simple packet blocks)"
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
			fmt.Fprintf(&b, " %s %s %d", x.name, filename.Text(x.file), x.frame)
		default:
			fmt.Fprintf(&b, " %s %d", x.name, x.frame)
		}
	}
	return b.String()
}

// Plural writes n and the noun, plural but for 1: "1 error", "2 errors".
// Every view counts things with it.
func Plural[N int | uint64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// connectionsTitle names the connections section by what set its
// connections up: CM, or the packets (analyze.StateInferred), or both.
func connectionsTitle(cs []analyze.Connection) string {
	cm, inferred := false, false
	for i := range cs {
		if cs[i].State == analyze.StateInferred {
			inferred = true
		} else {
			cm = true
		}
	}
	switch {
	case cm && inferred:
		return "Connections (CM, and RC pairs inferred without CM)"
	case inferred:
		return "Connections (RC pairs inferred without CM)"
	}
	return "Connections (CM)"
}
