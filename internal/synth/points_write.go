package synth

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// writeFiles sorts each point's sights by time and writes them on the
// point's clock to outs[i]; it returns the files' truth.
func (r *pointsRun) writeFiles(sights [][]ptSight, outs []io.Writer) ([]PointFileTruth, error) {
	res := int64(1000)
	if r.base.Nanos || r.base.Format == FormatPcapNG {
		res = 1
	}
	var files []PointFileTruth
	var jit int64
	for i, p := range r.pc.Points {
		if i > 0 {
			jit += int64(p.Jitter)
		}
		files = append(files, PointFileTruth{File: p.Name, ClockOffsetNs: int64(p.ClockOffset), ResolutionNs: res, JitterNs: jit})
		ss := sights[i]
		sort.SliceStable(ss, func(a, b int) bool { return ss[a].t < ss[b].t })
		enc, err := r.writeFile(outs[i], p, ss)
		if err != nil {
			return nil, err
		}
		files[i].Encapsulation = enc
	}
	return files, nil
}

// writeFile writes the sights ss of point p to out, wrapped in p.Wrap;
// it returns the wrapper's truth (nil without p.Wrap).
func (r *pointsRun) writeFile(out io.Writer, p Point, ss []ptSight) (*wrap.Truth, error) {
	cfg := r.base
	w, err := newCapWriter(out, &cfg)
	if err != nil {
		return nil, err
	}
	var wr *wrap.Wrapper
	var buf []byte
	if len(p.Wrap) > 0 {
		wr = &wrap.Wrapper{Chain: p.Wrap}
	}
	for _, s := range ss {
		ts := StartTime.Add(time.Duration(s.t + int64(p.ClockOffset)))
		data, orig := s.data, r.frames[s.k].orig
		if wr != nil {
			if buf, orig, err = wr.Wrap(buf[:0], data, orig, ts); err != nil {
				return nil, err
			}
			data = buf
		}
		if err := w.write(ts, data, orig); err != nil {
			return nil, err
		}
	}
	if wr == nil {
		return nil, w.flush()
	}
	t := wr.Truth()
	return &t, w.flush()
}

// checkPointWrap checks a point's Wrap against the scenario base.
func checkPointWrap(base Config, p Point) error {
	if len(p.Wrap) == 0 {
		return nil
	}
	if err := (&wrap.Wrapper{Chain: p.Wrap}).Check(); err != nil {
		return fmt.Errorf("synth: %w: point %s: wrap: %w", ErrConfig, p.Name, err)
	}
	if slices.Contains(p.Wrap, wrap.MPLS) && (base.Encap == EncapRoCEv1 || base.V1Requester) {
		return fmt.Errorf("synth: %w: point %s: wrap mpls labels IP packets: RoCE v1 frames carry none", ErrConfig, p.Name)
	}
	return nil
}
