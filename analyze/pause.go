package analyze

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/pfc"
)

// Pause frames: IEEE 802.1Qbb Priority Flow Control and 802.3x PAUSE
// (MAC Control, EtherType 0x8808), the back-pressure of a lossless RoCE
// fabric. Package pfc follows them, per sender and priority (its doc
// says how a paused time and a storm are measured); here the Analyzer
// feeds it, the report lists its figures (Report.Pause), one
// pause_storm finding per sender and priority reports its storms, at the
// XOFF that began the first, and the flows' priorities and paused time
// are pausetime.go's.

// Defaults of the pause options.
const (
	DefaultLinkSpeed  = 100e9                  // bits per second
	DefaultPauseStorm = 200 * time.Millisecond // PFC watchdogs' common detection time
)

// Pause is what one sender's pause frames did to one priority
// (Report.Pause): the sender (SrcMAC), Kind "pfc" (802.1Qbb, Priority
// 0–7) or "802.3x" (PAUSE, every priority: Priority nil), its Frames,
// XOFFFrames (quanta > 0) and XONFrames (quanta 0) for the priority, the
// Quanta asked for (of 512 bit times), the time paused (PausedNs: the
// union of the pause intervals) and the longest stretch without a break
// (LongestPauseNs). docs/json.md defines each key.
type Pause = pfc.Pause

// pauseConfig is the pause stage's part of the options.
func pauseConfig(o Options) pfc.Config {
	return pfc.Config{LinkSpeed: o.LinkSpeed, Storm: o.PauseStorm}
}

// pauseFindings are the pause_storm findings, one per sender and
// priority, by frame and detail.
func pauseFindings(pt *pfc.Track, file string) []Finding {
	var out []Finding
	for _, st := range pt.Storms() {
		what := "every priority (802.3x PAUSE)"
		if st.Priority != nil {
			what = fmt.Sprintf("priority %d", *st.Priority)
		}
		more := ""
		if st.Count > 1 {
			more = fmt.Sprintf("; %d such stretches, the longest %s", st.Count, st.Longest)
		}
		out = append(out, Finding{Frame: st.Frame, Time: st.Time, Kind: KindPauseStorm, Severity: SeverityWarning, File: file,
			Detail: fmt.Sprintf("pause storm: %s paused by %s without a break for %s, beyond %s (--pause-storm)%s", what, st.SrcMAC, st.Paused, st.Threshold, more)})
	}
	// By detail within a frame, as they always were: the frame numbers of
	// files combined may meet, and sortFindings keeps that order.
	slices.SortFunc(out, func(x, y Finding) int { return cmp.Or(cmp.Compare(x.Frame, y.Frame), cmp.Compare(x.Detail, y.Detail)) })
	return out
}

// addPause merges o's pause frames into r's (Report.Merge, the combined
// report of shards): their figures and the flows' paused times.
func (r *Report) addPause(o *Report) {
	if o.pause == nil {
		return
	}
	if r.pause == nil {
		pt := pfc.New(o.pause.Config())
		r.pause = &pt
	}
	r.pause.Add(o.pause)
	r.Pause = r.pause.Stats()
	r.Capture.LinkSpeedBps, r.Capture.PauseFramesUnlisted = o.Capture.LinkSpeedBps, r.pause.Unlisted()
}

// decodeMACControl decodes a MAC Control frame and accounts its pause.
func (a *Analyzer) decodeMACControl(data []byte) {
	if a.mac.DecodeFromBytes(data, &a.fb) != nil {
		return
	}
	a.pkt.MACControl = &a.mac
	a.pkt.Src, a.pkt.Dst = Addr{}, Addr{}
	a.pause.Frame(a.pkt.Frame, a.pkt.Time, a.eth.SrcMAC, &a.mac)
}
