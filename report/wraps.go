package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// maxTextTunnels and maxTextChains are how many tunnels and chains of
// encapsulations the text report names; the rest are summed.
const (
	maxTextTunnels = 8
	maxTextChains  = 8
)

// writeWraps says how frames arrived encapsulated: the frames of each chain of
// encapsulations, and the mirror sessions and tunnels they came through.
func writeWraps(w io.Writer, c analyze.Capture) {
	if len(c.Encapsulations) == 0 && c.EncapsulationFramesUnlisted == 0 {
		return
	}
	var parts []string
	other := c.EncapsulationFramesUnlisted
	for i, e := range c.Encapsulations {
		if i >= maxTextChains {
			other += e.Frames
			continue
		}
		parts = append(parts, fmt.Sprintf("%s in %s", Plural(int(e.Frames), "frame"), e.Chain))
	}
	if other > 0 {
		parts = append(parts, fmt.Sprintf("%s in other chains", Plural(int(other), "frame")))
	}
	fmt.Fprintf(w, "  arrived encapsulated: %s\n", strings.Join(parts, ", "))
	more, moreFrames := 0, uint64(0)
	for i, t := range c.Tunnels {
		if i >= maxTextTunnels {
			more++
			moreFrames += t.Frames
			continue
		}
		fmt.Fprintf(w, "    %s: %s\n", TunnelName(t), Plural(int(t.Frames), "frame"))
	}
	if more > 0 {
		fmt.Fprintf(w, "    %s more: %s\n", Plural(more, "tunnel"), Plural(int(moreFrames), "frame"))
	}
	if c.TunnelFramesUnlisted > 0 {
		fmt.Fprintf(w, "    more tunnels than the %d counted one by one: %s\n", len(c.Tunnels), Plural(int(c.TunnelFramesUnlisted), "frame"))
	}
}

// TunnelName names a tunnel as the reports do: its kind, identifier and
// outer addresses, "erspan2 session 7, 10.0.0.1 → 10.0.0.9".
func TunnelName(t analyze.Tunnel) string {
	s := t.Kind
	if t.ID != nil {
		s += fmt.Sprintf(" %s %d", t.IDName, *t.ID)
	}
	if t.Src != "" {
		s += fmt.Sprintf(", %s → %s", t.Src, t.Dst)
	}
	return s
}
