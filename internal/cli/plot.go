package cli

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// The --plot view: each data flow's payload throughput over time as a
// step line (throughput is constant over an interval), the top flows by
// bytes in distinct colours and the rest summed as "others" (above the
// scale when higher); PSN gaps and CNPs marked on their flow's line. CM
// traffic (QP0/QP1) is not data and is left out. This file computes what
// the view shows (buildPlot); plotdraw.go draws it.

// plotTopFlows is how many flows get a line of their own; plotMaxBuckets
// bounds the points of a line (a smaller --interval is widened to it).
const (
	plotTopFlows   = 8
	plotMaxBuckets = 20_000
)

// plotLine is one line of the plot: bucket k covers [t0+k·iv, t0+(k+1)·iv).
type plotLine struct {
	name  string
	flows []int // indexes in the report's flows
	bytes uint64
	bps   []float64 // per bucket; NaN: omitted (see plotData.note)
}

// isOthers reports the line that sums the flows beyond the named ones.
func (l *plotLine) isOthers() bool { return strings.HasPrefix(l.name, "others (") }

// scale returns the highest rate of the named lines, which sets the
// plot's scale (the "others" line's when none is named), and that of the
// "others" line, whose line is then clipped at the top.
func (d *plotData) scale() (peak, others float64) {
	for _, l := range d.lines {
		for _, v := range l.bps {
			switch {
			case math.IsNaN(v):
			case l.isOthers():
				others = max(others, v)
			default:
				peak = max(peak, v)
			}
		}
	}
	if peak == 0 {
		peak = others
	}
	return peak, others
}

// markKind is what a marker shows: a jump's PSNs of one loss class (as
// the report splits them: analyze.GapLoss), a NAK or a CNP.
type markKind uint8

const (
	markLost        markKind = iota // PSNs lost in the network (psn_gap error)
	markUnknown                     // PSNs of unknown fate (psn_gap warning)
	markNotCaptured                 // PSNs the capture missed (capture_gap)
	markNAK
	markCNP
)

// plotMarker is a jump, a NAK or a CNP drawn on a line.
type plotMarker struct {
	kind markKind
	at   time.Duration // since t0
	line int           // index in plotData.lines, -1: on the time axis
	psns uint64        // a jump's PSNs of its class
}

// plotData is what the plot shows, computed from a report.
type plotData struct {
	t0      time.Time
	dur     time.Duration
	iv      time.Duration
	lines   []plotLine
	markers []plotMarker
	notes   []string
}

// niceDuration rounds d up to 1, 2 or 5 × 10ⁿ nanoseconds.
func niceDuration(d time.Duration) time.Duration {
	if d <= 1 {
		return 1
	}
	p := time.Duration(1)
	for p*10 <= d {
		p *= 10
	}
	for _, m := range []time.Duration{1, 2, 5, 10} {
		if m*p >= d {
			return m * p
		}
	}
	return 10 * p
}

// dataFlow says whether a flow is data to plot: not QP0/QP1 (CM, subnet
// management) and with requests or read responses.
func dataFlow(f *analyze.Flow) bool {
	return f.DestQP > 1 && len(f.Series) > 0 && (f.Requests.Packets > 0 || f.Responses.ReadResponses > 0)
}

// buildPlot computes the lines. interval is --interval, 0 when not given:
// the interval is then chosen from the capture's duration (about 80
// steps across it).
func buildPlot(rep *analyze.Report, interval time.Duration) (*plotData, error) {
	if rep.Capture.FirstTime == nil || rep.Capture.LastTime == nil {
		return nil, fmt.Errorf("no frames to plot")
	}
	d := &plotData{t0: *rep.Capture.FirstTime, dur: rep.Capture.LastTime.Sub(*rep.Capture.FirstTime)}
	var flows []int
	var finest time.Duration
	for i := range rep.Flows {
		f := &rep.Flows[i]
		if !dataFlow(f) {
			continue
		}
		flows = append(flows, i)
		finest = max(finest, time.Duration(math.Round(f.IntervalSeconds*1e9)))
	}
	if len(flows) == 0 {
		return nil, fmt.Errorf("no data flow to plot (only CM or management traffic)")
	}
	switch {
	case interval > 0:
		d.iv = interval
	default:
		d.iv = niceDuration(d.dur / 80)
	}
	if d.iv < finest {
		d.notes = append(d.notes, fmt.Sprintf("interval %s: the finest the analysis kept", plotDuration(finest)))
		d.iv = finest
	}
	if n := d.dur / d.iv; n > plotMaxBuckets {
		d.iv = niceDuration(d.dur / plotMaxBuckets)
		d.notes = append(d.notes, fmt.Sprintf("interval widened to %s (at most %d steps)", plotDuration(d.iv), plotMaxBuckets))
	}
	buckets := int(d.dur/d.iv) + 1
	// The last interval ends after the capture: its throughput is over
	// the part the capture covers; below a quarter of it, it is left out.
	lastCover := d.dur - time.Duration(buckets-1)*d.iv
	omitLast := buckets > 1 && lastCover < d.iv/4
	if omitLast {
		d.notes = append(d.notes, fmt.Sprintf("last %s interval left out: the capture covers %s of it", plotDuration(d.iv), plotDuration(lastCover)))
	} else if buckets > 1 && lastCover < d.iv {
		d.notes = append(d.notes, fmt.Sprintf("last interval scaled to the %s the capture covers", plotDuration(lastCover)))
	}

	slices.SortStableFunc(flows, func(a, b int) int { return cmp.Compare(rep.Flows[b].PayloadBytes, rep.Flows[a].PayloadBytes) })
	lineOf := map[int]int{} // flow index → line
	for k, fi := range flows {
		f := &rep.Flows[fi]
		if k < plotTopFlows || len(flows) == plotTopFlows+1 {
			lineOf[fi] = len(d.lines)
			d.lines = append(d.lines, plotLine{name: f.Name()})
		} else {
			if k == plotTopFlows {
				d.lines = append(d.lines, plotLine{})
			}
			lineOf[fi] = len(d.lines) - 1
		}
		l := &d.lines[lineOf[fi]]
		l.flows = append(l.flows, fi)
		l.bytes += f.PayloadBytes
	}
	if n := len(d.lines); n > plotTopFlows {
		d.lines[n-1].name = fmt.Sprintf("others (%d flows)", len(d.lines[n-1].flows))
	}
	for li := range d.lines {
		l := &d.lines[li]
		bytes := make([]uint64, buckets)
		for _, fi := range l.flows {
			for _, s := range rep.Flows[fi].Series {
				k := int(max(s.Start.Sub(d.t0), 0) / d.iv)
				bytes[min(k, buckets-1)] += s.PayloadBytes
			}
		}
		l.bps = make([]float64, buckets)
		for k, b := range bytes {
			w := d.iv
			if k == buckets-1 && buckets > 1 {
				w = lastCover
			}
			if k == buckets-1 && omitLast || w <= 0 {
				l.bps[k] = math.NaN()
				continue
			}
			l.bps[k] = float64(b) * 8 / w.Seconds()
		}
	}
	d.markers = markersOf(rep, d, lineOf)
	return d, nil
}

// markersOf places each jump over PSNs not seen (once per class of its
// PSNs: lost, not captured, unknown, as the report splits them) on its
// flow's line, and the NAKs and CNPs on the line of the data flow they
// concern: a NAK's or a CNP's own flow (responder to requester) carries
// no data, so it goes on the other direction of its connection, or of the
// same two hosts. The marks follow the report's findings (--severity,
// --kind): a class of a flow's jumps is drawn when a finding of it is
// kept (psn_gap error, psn_gap warning, capture_gap).
func markersOf(rep *analyze.Report, d *plotData, lineOf map[int]int) []plotMarker {
	byID := map[analyze.FlowID]int{}
	for i := range rep.Flows {
		byID[rep.Flows[i].ID()] = i
	}
	lineFor := func(id analyze.FlowID) int {
		fi, ok := byID[id]
		if !ok {
			return -1
		}
		if l, ok := lineOf[fi]; ok {
			return l
		}
		if l, ok := reverseLine(rep, fi, lineOf); ok {
			return l
		}
		return -1
	}
	type flowMark struct {
		flow analyze.FlowID
		kind markKind
	}
	kept := map[flowMark]bool{}
	var out []plotMarker
	for _, fd := range rep.Findings {
		switch {
		case fd.Kind == analyze.KindPSNGap && fd.Severity == analyze.SeverityError:
			kept[flowMark{fd.Flow, markLost}] = true
		case fd.Kind == analyze.KindPSNGap:
			kept[flowMark{fd.Flow, markUnknown}] = true
		case fd.Kind == analyze.KindCaptureGap:
			kept[flowMark{fd.Flow, markNotCaptured}] = true
		case fd.Kind == analyze.KindNAK:
			out = append(out, plotMarker{kind: markNAK, at: fd.Time.Sub(d.t0), line: lineFor(fd.Flow)})
		case fd.Kind == analyze.KindCNP:
			out = append(out, plotMarker{kind: markCNP, at: fd.Time.Sub(d.t0), line: lineFor(fd.Flow)})
		}
	}
	for i := range rep.Flows {
		f := &rep.Flows[i]
		id := f.ID()
		for _, j := range f.Requests.Jumps() {
			for _, c := range []struct {
				kind markKind
				n    uint64
			}{{markLost, j.Lost}, {markUnknown, j.Unknown}, {markNotCaptured, j.NotCaptured}} {
				if c.n > 0 && kept[flowMark{id, c.kind}] {
					out = append(out, plotMarker{kind: c.kind, at: j.Time.Sub(d.t0), line: lineFor(id), psns: c.n})
				}
			}
		}
	}
	return out
}

// reverseLine finds the plotted flow going the other way between the
// same hosts, in the same connection when it has one.
func reverseLine(rep *analyze.Report, fi int, lineOf map[int]int) (int, bool) {
	f := &rep.Flows[fi]
	best, found := 0, false
	for j, l := range lineOf {
		g := &rep.Flows[j]
		if g.Src != f.Dst || g.Dst != f.Src {
			continue
		}
		if f.Connection != nil && g.Connection != nil && *f.Connection == *g.Connection {
			return l, true
		}
		if !found {
			best, found = l, true
		}
	}
	return best, found
}

// plotDuration prints a duration with a unit that keeps it short ("20 µs").
func plotDuration(d time.Duration) string {
	u, name := time.Nanosecond, "ns"
	for _, c := range []struct {
		u    time.Duration
		name string
	}{{time.Microsecond, "µs"}, {time.Millisecond, "ms"}, {time.Second, "s"}} {
		if d >= c.u {
			u, name = c.u, c.name
		}
	}
	return fmt.Sprintf("%g %s", math.Round(float64(d)/float64(u)*1000)/1000, name)
}

// plotInterval is the analyzer's series interval: --interval, or with
// --plot and no --interval a fine one (1 µs) that the analyzer widens by
// itself (at most 4096 intervals per flow), so that the plot can choose
// its interval from the capture's duration.
func (r *runner) plotInterval() time.Duration {
	if r.cfg.plot != "" && !r.cfg.intervalSet {
		return time.Microsecond
	}
	return r.cfg.interval
}
