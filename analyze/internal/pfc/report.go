package pfc

import (
	"bytes"
	"cmp"
	"slices"
	"time"
)

// Storm is a sender's priority that stayed paused without a break for
// longer than Config.Storm: its first such stretch, and how many there
// were.
type Storm struct {
	// Frame is the XOFF that began the first storm, Time its time as the
	// capture gave it.
	Frame uint64
	Time  time.Time
	// SrcMAC is the sender; Priority the priority paused, nil for 802.3x
	// (every priority).
	SrcMAC   string
	Priority *int
	// Paused is the first storm's length, Longest the sender's
	// priority's longest stretch (Pause.LongestPauseNs).
	Paused, Longest time.Duration
	// Count is how many stretches were storms.
	Count int
	// Threshold is Config.Storm.
	Threshold time.Duration
}

// Snapshot is the track as a report sees it: every open stretch ended at
// its deadline, t left as it is (it may be fed on). It is nil when t has
// seen no pause frame.
func (t *Track) Snapshot() *Track {
	if len(t.byKey) == 0 {
		return nil
	}
	out := &Track{cfg: t.cfg, byKey: make(map[key]*state, len(t.byKey)), quantum: t.quantum, stretches: t.stretches, unlisted: t.unlisted}
	for k, s := range t.byKey {
		c := *s
		c.stretches = slices.Clone(s.stretches)
		if c.open {
			c.close(out, c.deadline)
		}
		out.byKey[k] = &c
	}
	return out
}

// Add adds o, another part's snapshot, to t, within t's bounds: senders
// and priorities beyond MaxKeys count as Unlisted, taken in order of
// MAC and priority so that the same ones are kept whatever the order of
// the parts' maps.
func (t *Track) Add(o *Track) {
	if t.byKey == nil {
		t.byKey = make(map[key]*state, len(o.byKey))
	}
	t.unlisted += o.unlisted
	for _, k := range o.keys() {
		s := o.byKey[k]
		d := t.byKey[k]
		if d == nil && len(t.byKey) >= MaxKeys {
			t.unlisted += s.Frames
			continue
		}
		if d == nil {
			c := *s
			c.stretches = nil
			for _, iv := range s.stretches {
				c.keep(t, iv)
			}
			t.byKey[k] = &c
			continue
		}
		d.Frames += s.Frames
		d.XOFFFrames += s.XOFFFrames
		d.XONFrames += s.XONFrames
		d.Quanta += s.Quanta
		d.PausedNs += s.PausedNs
		d.LongestPauseNs = max(d.LongestPauseNs, s.LongestPauseNs)
		for _, iv := range s.stretches {
			d.keep(t, iv)
		}
		if s.storm.count > 0 && (d.storm.count == 0 || s.storm.frame < d.storm.frame) {
			d.storm.frame, d.storm.at, d.storm.from, d.storm.to = s.storm.frame, s.storm.at, s.storm.from, s.storm.to
		}
		d.storm.count += s.storm.count
	}
}

// keys are the senders and priorities of t in order of MAC and priority.
func (t *Track) keys() []key {
	ks := make([]key, 0, len(t.byKey))
	for k := range t.byKey {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(x, y key) int {
		return cmp.Or(bytes.Compare(x.mac[:], y.mac[:]), cmp.Compare(x.prio, y.prio))
	})
	return ks
}

// Unlisted counts the frames of senders and priorities beyond MaxKeys.
func (t *Track) Unlisted() uint64 { return t.unlisted }

// Stats lists the pause of each sender and priority, by MAC, kind and
// priority; nil for a nil t.
func (t *Track) Stats() []Pause {
	if t == nil {
		return nil
	}
	out := make([]Pause, 0, len(t.byKey))
	for _, s := range t.byKey {
		out = append(out, s.Pause)
	}
	slices.SortFunc(out, func(x, y Pause) int {
		return cmp.Or(cmp.Compare(x.SrcMAC, y.SrcMAC), cmp.Compare(x.Kind, y.Kind), cmp.Compare(prioOr(x.Priority), prioOr(y.Priority)))
	})
	return out
}

func prioOr(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// Storms lists the storms, one per sender and priority that had any, by
// frame and priority (a frame has one sender); nil for a nil t.
func (t *Track) Storms() []Storm {
	if t == nil {
		return nil
	}
	var out []Storm
	for _, s := range t.byKey {
		st := s.storm
		if st.count == 0 {
			continue
		}
		out = append(out, Storm{Frame: st.frame, Time: st.at, SrcMAC: s.SrcMAC, Priority: s.Priority,
			Paused: time.Duration(st.to - st.from), Longest: time.Duration(s.LongestPauseNs), Count: st.count, Threshold: t.cfg.Storm})
	}
	slices.SortFunc(out, func(x, y Storm) int {
		return cmp.Or(cmp.Compare(x.Frame, y.Frame), cmp.Compare(x.SrcMAC, y.SrcMAC), cmp.Compare(prioOr(x.Priority), prioOr(y.Priority)))
	})
	return out
}
