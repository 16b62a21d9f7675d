package synth

import (
	"fmt"
	"slices"
	"time"

	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// --wrap (Config.Wrap) writes every frame as a switch mirror or an
// overlay delivers it to the capture: wrapped by internal/wrap, once the
// frame is finished (ICRC and all), around the whole frame. The capture
// point is the collector's (or the underlay's): --snaplen and
// --cut-frames cut the wrapped frame, as a collector's capture cuts the
// outer frame, so a snap length of N keeps N minus the wrap's overhead
// bytes of the RoCE frame. The timestamps are those of the traffic
// unwrapped, and the truth's flows, connections and findings are those of
// the RoCE frames inside: the same as without --wrap with a snap length
// shorter by the overhead (its NIC rates count the RoCE frames' bytes).
// The truth's "encapsulation" is the wrapper's wrap.Truth.

// checkWrap checks Config.Wrap against the rest of the configuration.
func (c *Config) checkWrap() error {
	if len(c.Wrap) == 0 {
		return nil
	}
	if err := (&wrap.Wrapper{Chain: c.Wrap}).Check(); err != nil {
		return fmt.Errorf("synth: %w: --wrap: %w", ErrConfig, err)
	}
	n := c.Wrap.Overhead()
	switch {
	case c.Encap.Native():
		return fmt.Errorf("synth: %w: --wrap wraps Ethernet frames, not %s", ErrConfig, c.Encap)
	case slices.Contains(c.Wrap, wrap.MPLS) && (c.Encap == EncapRoCEv1 || c.V1Requester):
		return fmt.Errorf("synth: %w: --wrap mpls labels IP packets: RoCE v1 frames carry none", ErrConfig)
	case c.Pause.any():
		return fmt.Errorf("synth: %w: --wrap: pause frames are link-local, no mirror or overlay delivers them wrapped", ErrConfig)
	case c.SnapLen > 0 && c.SnapLen <= n:
		return fmt.Errorf("synth: %w: --snaplen %d keeps nothing of the frames inside the %d bytes of --wrap %s", ErrConfig, c.SnapLen, n, c.Wrap)
	case c.CutFrames > 0 && c.CutFrames < minCut+n:
		return fmt.Errorf("synth: %w: --cut-frames %d with --wrap %s (want %d or more: the headers stay whole)", ErrConfig, c.CutFrames, c.Wrap, minCut+n)
	}
	return nil
}

// wrapping is the generator's wrapper and its buffer.
type wrapping struct {
	w   wrap.Wrapper
	buf []byte
}

// wrapFrame returns the finished frame wrapped in Config.Wrap; the slice
// is valid until the next call.
func (g *generator) wrapFrame(frame []byte, ts time.Time) ([]byte, error) {
	if g.wrap == nil {
		g.wrap = &wrapping{w: wrap.Wrapper{Chain: g.cfg.Wrap}}
	}
	out, _, err := g.wrap.w.Wrap(g.wrap.buf[:0], frame, len(frame), ts)
	g.wrap.buf = out
	return out, err
}

// unwrapped returns what the capture holds of the frame inside a wrapped
// frame of which it holds captured bytes, and the frame's length.
func (g *generator) unwrapped(frame []byte, captured int) ([]byte, int) {
	return frame[:max(0, captured-g.cfg.Wrap.Overhead())], len(frame)
}

// wrapTruth is the truth's encapsulation summary; nil without --wrap.
func (g *generator) wrapTruth() *wrap.Truth {
	if len(g.cfg.Wrap) == 0 {
		return nil
	}
	if g.wrap == nil { // no frame written
		g.wrap = &wrapping{w: wrap.Wrapper{Chain: g.cfg.Wrap}}
	}
	t := g.wrap.w.Truth()
	return &t
}
