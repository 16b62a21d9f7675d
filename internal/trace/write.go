package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// Source is one capture file of the trace: a process.
type Source struct {
	// Name is the file as the run names it (analyze.Options.File, which
	// findings name), and the process's name.
	Name      string
	Collector *Collector
	// ClockOffset is how far the file's clock runs ahead of the report's
	// (a capture point's, points.File.ClockOffsetNs): its messages and
	// CNPs are moved back by it.
	ClockOffset time.Duration
	// Files, when not nil, are the files read as one capture (pieces, or
	// files merged by time) that the Collector's messages are of: their
	// frames are numbered in the stream, and Files name each one's file
	// and number, as the report's findings do.
	Files *analyze.Pieces
}

// place is where a flow's events go: a process and a thread.
type place struct{ pid, tid int }

// writer writes the events, counting them against the cap.
type writer struct {
	w       *bufio.Writer
	base    int64 // Unix ns of ts 0
	n       int   // events written (metadata aside)
	max     int
	dropped uint64
	first   bool
}

// Write writes the trace of rep (the report of the files, merged and
// filtered as shown), of the sources' collectors and of NCCL's
// collectives in res (nil for none) to w. Only the flows of rep get a
// track; lim.Events caps the events written.
func Write(w io.Writer, rep *analyze.Report, srcs []Source, res *nccl.Result, lim Limits) error {
	if lim.Events <= 0 {
		lim.Events = DefaultLimits.Events
	}
	tw := &writer{w: bufio.NewWriter(w), max: lim.Events, first: true}
	if rep.Capture.FirstTime != nil {
		tw.base = rep.Capture.FirstTime.UnixNano()
	}
	fmt.Fprintf(tw.w, "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"capture_start\":%s},\"traceEvents\":[", quote(time.Unix(0, tw.base).UTC().Format(time.RFC3339Nano)))
	shown := make(map[analyze.FlowID]bool, len(rep.Flows))
	for i := range rep.Flows {
		shown[rep.Flows[i].ID()] = true
	}
	places, pids := tw.tracks(srcs, shown)
	tw.otherTracks(rep.Flows, srcs, places)
	for i, src := range srcs {
		tw.sourceEvents(i+1, src, shown)
	}
	tw.findings(rep.Findings, places, pids)
	end := int64(math.MaxInt64)
	if rep.Capture.LastTime != nil {
		end = rep.Capture.LastTime.UnixNano()
	}
	tw.series(rep.Flows, places, end)
	tw.steps(len(srcs)+1, res)
	if tw.dropped > 0 {
		tw.n = 0 // the note is written past the cap
		tw.event(1, 1, "i", "trace_capped", 0, -1, fmt.Sprintf(`"s":"g","args":{"events_left_out":%d,"cap":%d}`, tw.dropped, tw.max))
	}
	tw.w.WriteString("]}\n")
	return tw.w.Flush()
}

// tracks writes the processes' and flows' names and returns where each
// shown flow's events go (its first file's track) and the process of
// each file name.
func (tw *writer) tracks(srcs []Source, shown map[analyze.FlowID]bool) (map[analyze.FlowID]place, map[string]int) {
	places := make(map[analyze.FlowID]place)
	pids := make(map[string]int, len(srcs))
	for i, src := range srcs {
		pid := i + 1
		if _, ok := pids[src.Name]; !ok {
			pids[src.Name] = pid
		}
		tw.meta(pid, 0, "process_name", src.Name)
		tw.meta(pid, 1, "thread_name", "capture")
		if src.Collector == nil {
			continue
		}
		for _, t := range src.Collector.order {
			id := t.key.id()
			if !shown[id] {
				continue
			}
			tw.meta(pid, t.tid, "thread_name", id.String())
			if _, ok := places[id]; !ok {
				places[id] = place{pid, t.tid}
			}
		}
		tw.dropped += src.Collector.dropped + src.Collector.flowsOver
	}
	return places, pids
}

// otherTracks gives the flows of the report that no collector gave a
// track (no message, no CNP: an ACK flow) one in the first process, for
// their findings and counters.
func (tw *writer) otherTracks(flows []analyze.Flow, srcs []Source, places map[analyze.FlowID]place) {
	tid := 2
	if len(srcs) > 0 && srcs[0].Collector != nil {
		tid += len(srcs[0].Collector.order)
	}
	for i := range flows {
		id := flows[i].ID()
		if _, ok := places[id]; ok {
			continue
		}
		tw.meta(1, tid, "thread_name", id.String())
		places[id] = place{1, tid}
		tid++
	}
}

// id is the flow's report ID.
func (k flowKey) id() analyze.FlowID {
	return analyze.FlowID{Src: k.src.String(), Dst: k.dst.String(), DestQP: k.qp, Tunnel: k.tun.String()}
}

// sourceEvents writes a file's messages and CNPs of the shown flows.
func (tw *writer) sourceEvents(pid int, src Source, shown map[analyze.FlowID]bool) {
	c, off := src.Collector, int64(src.ClockOffset)
	if c == nil {
		return
	}
	ids := make(map[*track]bool, len(c.order))
	for _, t := range c.order {
		ids[t] = shown[t.key.id()]
	}
	for _, ev := range c.events {
		if !ids[ev.t] {
			continue
		}
		switch ev.kind {
		case evMessage:
			first, frame := ev.first, ev.frame
			var files string
			if firstFile, n := src.Files.Ref(first); firstFile != "" { // several files: each frame named by its own
				lastFile, m := src.Files.Ref(frame)
				first, frame = n, m
				files = fmt.Sprintf(`,"first_file":%s,"file":%s`, quote(firstFile), quote(lastFile))
			}
			tw.event(pid, ev.t.tid, "X", messageName(ev.op), ev.start-off, ev.end-ev.start,
				fmt.Sprintf(`"args":{"bytes":%d,"first_frame":%d,"frame":%d,"opcode":%q%s}`, ev.value, first, frame, ev.op.String(), files))
		case evCNP:
			tw.event(pid, ev.t.tid, "C", "CNPs "+ev.t.key.id().String(), ev.start-off, -1,
				fmt.Sprintf(`"args":{"cnps":%d}`, ev.value))
		}
	}
}

// findings writes an instant per finding, on its flow's track, else on
// its file's capture track.
func (tw *writer) findings(fds []analyze.Finding, places map[analyze.FlowID]place, pids map[string]int) {
	for i := range fds {
		fd := &fds[i]
		pl := place{1, 1}
		if p, ok := places[fd.Flow]; ok {
			pl = p
		}
		if pid, ok := pids[fd.File]; ok && fd.File != "" && pid != pl.pid {
			pl = place{pid, 1}
		}
		args := fmt.Sprintf(`"s":"t","args":{"severity":%s,"detail":%s,"frame":%d`, quote(fd.Severity.String()), quote(fd.Detail), fd.Frame)
		if fd.File != "" {
			args += `,"file":` + quote(fd.File)
		}
		if fd.Flow != (analyze.FlowID{}) {
			args += `,"flow":` + quote(fd.Flow.String())
		}
		tw.event(pl.pid, pl.tid, "i", string(fd.Kind), fd.Time.UnixNano(), -1, args+"}")
	}
}

// series writes each flow's throughput per interval as a counter in
// Gb/s of payload, back to 0 after an interval without packets (at the
// latest at end, the capture's last frame).
func (tw *writer) series(flows []analyze.Flow, places map[analyze.FlowID]place, end int64) {
	for i := range flows {
		f := &flows[i]
		iv := int64(f.IntervalSeconds * 1e9)
		if iv <= 0 || len(f.Series) == 0 {
			continue
		}
		pl, ok := places[f.ID()]
		if !ok {
			pl = place{1, 1}
		}
		name := "payload Gb/s " + f.ID().String()
		for j, s := range f.Series {
			ns := s.Start.UnixNano()
			gbps := float64(s.PayloadBytes) * 8 / float64(iv)
			// An interval may begin before the capture's first frame;
			// its value starts with the capture (Perfetto refuses a
			// time before the trace's start).
			tw.event(pl.pid, pl.tid, "C", name, max(ns, tw.base), -1, `"args":{"Gb/s":`+strconv.FormatFloat(gbps, 'g', 6, 64)+"}")
			if j+1 == len(f.Series) || f.Series[j+1].Start.UnixNano() != ns+iv {
				if zero := min(ns+iv, end); zero > ns {
					tw.event(pl.pid, pl.tid, "C", name, zero, -1, `"args":{"Gb/s":0}`)
				}
			}
		}
	}
}

// steps writes NCCL's collectives as process pid, "NCCL": a thread per
// rank, "rank N", with a slice per step the rank sent (a receive its
// successor posted: from the CTS to the last data packet, of no
// duration when no data came), named by its collective. Steps of an
// unknown sender are left out.
func (tw *writer) steps(pid int, res *nccl.Result) {
	if res == nil || len(res.Collectives) == 0 {
		return
	}
	tw.meta(pid, 0, "process_name", "NCCL")
	named := map[int]bool{}
	for _, rk := range res.Ranks {
		if !named[rk.Rank] {
			named[rk.Rank] = true
			tw.meta(pid, rk.Rank+1, "thread_name", "rank "+strconv.Itoa(rk.Rank))
		}
	}
	for _, c := range res.Collectives {
		name := fmt.Sprintf("%s %d", c.Kind, c.Index)
		for _, s := range c.Steps {
			if s.SenderRank < 0 {
				continue
			}
			if !named[s.SenderRank] {
				named[s.SenderRank] = true
				tw.meta(pid, s.SenderRank+1, "thread_name", "rank "+strconv.Itoa(s.SenderRank))
			}
			at, dur := s.CTS.UnixNano(), int64(0)
			if !s.Last.IsZero() {
				dur = max(s.Last.UnixNano()-at, 0)
			}
			receiver := "null"
			if s.ReceiverRank >= 0 {
				receiver = strconv.Itoa(s.ReceiverRank)
			}
			tw.event(pid, s.SenderRank+1, "X", name, at, dur,
				fmt.Sprintf(`"args":{"collective":%d,"receiver_rank":%s,"idx":%d,"messages":%d,"bytes":%d}`, c.Index, receiver, s.Idx, s.Messages, s.Bytes))
		}
	}
}

// meta writes a metadata event naming a process or thread.
func (tw *writer) meta(pid, tid int, what, name string) {
	tw.sep()
	fmt.Fprintf(tw.w, `{"ph":"M","pid":%d,"tid":%d,"name":%q,"args":{"name":%s}}`, pid, tid, what, quote(name))
}

// event writes one event at Unix ns at, of duration dur ns (-1: none),
// with the extra fields rest; beyond the cap it is counted instead.
func (tw *writer) event(pid, tid int, ph, name string, at, dur int64, rest string) {
	if tw.n >= tw.max {
		tw.dropped++
		return
	}
	tw.n++
	tw.sep()
	fmt.Fprintf(tw.w, `{"ph":%q,"pid":%d,"tid":%d,"name":%s,"ts":%s`, ph, pid, tid, quote(name), micros(at-tw.base))
	if dur >= 0 {
		fmt.Fprintf(tw.w, `,"dur":%s`, micros(dur))
	}
	if rest != "" {
		tw.w.WriteString("," + rest)
	}
	tw.w.WriteString("}")
}

// sep writes the separator before an event.
func (tw *writer) sep() {
	if tw.first {
		tw.first = false
		tw.w.WriteString("\n")
		return
	}
	tw.w.WriteString(",\n")
}

// micros renders ns as microseconds, exactly (three decimals).
func micros(ns int64) string {
	sign := ""
	if ns < 0 {
		sign, ns = "-", -ns
	}
	return fmt.Sprintf("%s%d.%03d", sign, ns/1000, ns%1000)
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
