package analyze

import "time"

// A flow keeps its first and latest packet times as Unix nanoseconds (16
// bytes, not the 48 of two time.Time values): every flow of a capture
// shares the location of the times its reader gives (Analyzer.tloc), and
// the report rebuilds the same time.Time values from them. A time that
// does not fit — beyond the years 1678–2262 that int64 nanoseconds span,
// or in another location than the first flow's — moves the flow's times
// to its cold part as time.Time values, so the report is the same either
// way.

// flowTime accounts a packet's time to its flow (before the packet is
// counted), and to the time the flow was sending when it continues a
// message (cont: a MIDDLE or LAST), with its payload. The common case is
// inlined: a time in range, in the capture's location.
func (a *Analyzer) flowTime(f *flowState, t time.Time, cont bool, payload int) {
	sec := t.Unix()
	if f.wideTime || sec < minNanoSec || sec > maxNanoSec || t.Location() != a.tloc {
		a.flowTimeSlow(f, t, cont, payload)
		return
	}
	ns := sec*1e9 + int64(t.Nanosecond())
	if f.packets == 0 {
		f.first, f.last = ns, ns
		return
	}
	if cont {
		a.active(f, ns-f.last, payload)
	}
	if ns > f.last {
		f.last = ns
	}
}

// active accounts a packet that continues a message, and came gap after
// its flow's latest packet, to the time the flow was sending
// (Flow.ActiveNs): the gap was spent sending its payload. A gap longer
// than one Options.Interval (a resend after a timeout, a sender that
// stalled) is not sending, nor one across which the clock went back.
func (a *Analyzer) active(f *flowState, gap int64, payload int) {
	if gap < 0 || gap > int64(a.opts.Interval) {
		return
	}
	f.activeNs += gap
	if payload > 0 {
		f.activeBytes += uint64(payload)
	}
}

// flowTimeSlow is flowTime for the first time of the capture (which sets
// its location) and for times that do not fit.
func (a *Analyzer) flowTimeSlow(f *flowState, t time.Time, cont bool, payload int) {
	if a.tloc == nil {
		a.tloc = t.Location()
	}
	if !f.wideTime && (t.Location() != a.tloc || t.Unix() < minNanoSec || t.Unix() > maxNanoSec) {
		c := f.rare()
		if f.packets > 0 {
			c.firstT, c.lastT = time.Unix(0, f.first).In(a.tloc), time.Unix(0, f.last).In(a.tloc)
		}
		f.wideTime = true
	}
	if f.wideTime {
		c := f.cold
		if f.packets == 0 {
			c.firstT = t
		} else if cont {
			a.active(f, int64(t.Sub(c.lastT)), payload)
		}
		if t.After(c.lastT) {
			c.lastT = t
		}
		return
	}
	ns := t.UnixNano()
	if f.packets == 0 {
		f.first, f.last = ns, ns
		return
	}
	if cont {
		a.active(f, ns-f.last, payload)
	}
	if ns > f.last {
		f.last = ns
	}
}

// The seconds whose every nanosecond an int64 of Unix nanoseconds holds.
const (
	minNanoSec = -9223372036 + 1
	maxNanoSec = 9223372036 - 1
)

// firstTime returns the time of the flow's first packet.
func (a *Analyzer) firstTime(f *flowState) time.Time {
	if f.wideTime {
		return f.cold.firstT
	}
	return time.Unix(0, f.first).In(a.tloc)
}

// lastTime returns the time of the flow's latest packet.
func (a *Analyzer) lastTime(f *flowState) time.Time {
	if f.wideTime {
		return f.cold.lastT
	}
	return time.Unix(0, f.last).In(a.tloc)
}
