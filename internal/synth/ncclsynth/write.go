package ncclsynth

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// sight is a packet in one rank's capture: the packet and when the
// rank's NIC saw it (true time, ns).
type sight struct {
	t int64
	k int
}

// Write generates cfg and writes rank r's capture to outs[r] (names[r]
// is its file name in the truth). It returns the truth.
func Write(cfg Config, outs []io.Writer, names []string) (*Truth, error) {
	if err := cfg.Normalize(); err != nil {
		return nil, err
	}
	if len(outs) != cfg.Ranks || len(names) != cfg.Ranks {
		return nil, fmt.Errorf("%w: %d outputs, %d names for %d ranks", errNoRanks, len(outs), len(names), cfg.Ranks)
	}
	fb, err := synth.NewFrameBuilder(cfg.Encap, cfg.Ranks, cfg.Seed)
	if err != nil {
		return nil, err
	}
	j := newJob(&cfg)
	j.run()
	// Each packet is in its sender's capture when it leaves and in its
	// receiver's a link delay later.
	sights := make([][]sight, cfg.Ranks)
	for k, p := range j.packets {
		sights[p.Src] = append(sights[p.Src], sight{p.t, k})
		if !p.lost && p.pfc == 0 {
			sights[p.Dst] = append(sights[p.Dst], sight{p.t + int64(cfg.LinkDelay), k})
		}
	}
	tr := j.truth(fb.Addr)
	for r, ss := range sights {
		slices.SortStableFunc(ss, func(a, b sight) int { return cmp.Compare(a.t, b.t) })
		var off time.Duration
		if r < len(cfg.ClockOffsets) {
			off = cfg.ClockOffsets[r]
		}
		w, err := synth.NewCaptureWriter(outs[r], cfg.Format, cfg.Nanos, cfg.Encap, cfg.SnapLen)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			ts := timeOf(s.t).Add(off)
			var frame []byte
			if p := &j.packets[s.k]; p.pfc > 0 {
				frame, err = fb.PFC(pfcPriority, p.pfc)
			} else {
				frame, err = fb.Build(&p.RCPacket, ts)
			}
			if err != nil {
				return nil, err
			}
			if err := w.Write(ts, frame); err != nil {
				return nil, err
			}
		}
		if err := w.Flush(); err != nil {
			return nil, err
		}
		tr.Files = append(tr.Files, FileTruth{File: names[r], Rank: r, ClockOffsetNs: int64(off), Frames: len(ss)})
	}
	return tr, nil
}
