package analyze

import (
	"cmp"
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze/internal/decode"
)

// Encapsulation counts the frames that arrived in one chain of
// encapsulations (Capture.Encapsulations).
type Encapsulation struct {
	// Chain names the encapsulations outermost first, "/" between them:
	// "erspan2", "erspan3/vxlan", "qinq" (see WrapKind.String).
	Chain  string `json:"chain"`
	Frames uint64 `json:"frames"`
}

// Tunnel is one mirror session, overlay tunnel, S-VLAN or label that
// frames arrived through (Capture.Tunnels).
type Tunnel struct {
	// Kind is the encapsulation, as in Encapsulation.Chain.
	Kind string `json:"kind"`
	// Src and Dst are the outer IP addresses (the mirroring switch and
	// the collector, the tunnel's endpoints); "" for QinQ and MPLS.
	Src string `json:"src"`
	Dst string `json:"dst"`
	// ID is the ERSPAN session ID, VXLAN or GENEVE VNI, NVGRE VSID, GRE
	// key, S-VLAN ID or top MPLS label; IDName says which (null for
	// ERSPAN type I, which has none).
	ID     *uint32 `json:"id"`
	IDName string  `json:"id_name,omitempty"`
	Frames uint64  `json:"frames"`
}

// maxTunnels bounds Capture.Tunnels; the frames of further tunnels are
// counted in Capture.TunnelFramesUnlisted. maxChains bounds
// Capture.Encapsulations likewise (EncapsulationFramesUnlisted): a capture
// holds a few chains, but a hostile one could nest a new one in every frame.
const (
	maxTunnels = 1024
	maxChains  = 64
)

// wrapCounts counts the frames that arrived wrapped, by chain and by
// tunnel.
type wrapCounts struct {
	chains         map[decode.Chain]uint64
	tunnels        map[Wrap]uint64
	unlisted       uint64 // frames of tunnels beyond maxTunnels
	chainsUnlisted uint64 // frames of chains beyond maxChains
}

// count accounts the wraps of one frame.
func (c *wrapCounts) count(ws []Wrap) {
	if c.chains == nil {
		c.chains, c.tunnels = make(map[decode.Chain]uint64), make(map[Wrap]uint64)
	}
	if ch := decode.ChainOf(ws); c.chains[ch] > 0 || len(c.chains) < maxChains {
		c.chains[ch]++
	} else {
		c.chainsUnlisted++
	}
	for _, w := range ws {
		if _, ok := c.tunnels[w]; ok || len(c.tunnels) < maxTunnels {
			c.tunnels[w]++
		} else {
			c.unlisted++
		}
	}
}

// report fills in the capture's Encapsulations, Tunnels and their
// unlisted frames.
func (c *wrapCounts) report(out *Capture) {
	out.Encapsulations, out.Tunnels = nil, nil
	for ch, n := range c.chains {
		out.Encapsulations = append(out.Encapsulations, Encapsulation{Chain: ch.String(), Frames: n})
	}
	for w, n := range c.tunnels {
		out.Tunnels = append(out.Tunnels, tunnelOf(w, n))
	}
	out.TunnelFramesUnlisted, out.EncapsulationFramesUnlisted = c.unlisted, c.chainsUnlisted
	sortWraps(out)
}

// tunnelOf is the Tunnel of a wrap, with its frames.
func tunnelOf(w Wrap, frames uint64) Tunnel {
	t := Tunnel{Kind: w.Kind.String(), IDName: w.Kind.IDName(), Frames: frames}
	if w.Src.IsValid() {
		t.Src, t.Dst = w.Src.String(), w.Dst.String()
	}
	if t.IDName != "" {
		id := w.ID
		t.ID = &id
	}
	return t
}

// sortWraps orders the encapsulations by frames (most first) and the
// tunnels by kind, addresses and identifier.
func sortWraps(c *Capture) {
	slices.SortFunc(c.Encapsulations, func(x, y Encapsulation) int {
		return cmp.Or(cmp.Compare(y.Frames, x.Frames), cmp.Compare(x.Chain, y.Chain))
	})
	slices.SortFunc(c.Tunnels, func(x, y Tunnel) int {
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Src, y.Src), cmp.Compare(x.Dst, y.Dst), cmp.Compare(idOr(x.ID), idOr(y.ID)))
	})
}

func idOr(id *uint32) int64 {
	if id == nil {
		return -1
	}
	return int64(*id)
}

// addWraps adds o's encapsulations and tunnels to c's (Report.Merge, the
// combined report of shards), keeping at most maxChains chains and
// maxTunnels tunnels.
func (c *Capture) addWraps(o *Capture) {
	if len(o.Encapsulations) == 0 && len(o.Tunnels) == 0 && o.TunnelFramesUnlisted == 0 && o.EncapsulationFramesUnlisted == 0 {
		return
	}
	c.EncapsulationFramesUnlisted += o.EncapsulationFramesUnlisted
	for _, e := range o.Encapsulations {
		switch i := slices.IndexFunc(c.Encapsulations, func(x Encapsulation) bool { return x.Chain == e.Chain }); {
		case i >= 0:
			c.Encapsulations[i].Frames += e.Frames
		case len(c.Encapsulations) < maxChains:
			c.Encapsulations = append(c.Encapsulations, e)
		default:
			c.EncapsulationFramesUnlisted += e.Frames
		}
	}
	type key struct {
		kind, src, dst string
		id             int64
	}
	at := make(map[key]int, len(c.Tunnels))
	for i, t := range c.Tunnels {
		at[key{t.Kind, t.Src, t.Dst, idOr(t.ID)}] = i
	}
	c.TunnelFramesUnlisted += o.TunnelFramesUnlisted
	for _, t := range o.Tunnels {
		k := key{t.Kind, t.Src, t.Dst, idOr(t.ID)}
		switch i, ok := at[k]; {
		case ok:
			c.Tunnels[i].Frames += t.Frames
		case len(c.Tunnels) < maxTunnels:
			at[k] = len(c.Tunnels)
			c.Tunnels = append(c.Tunnels, t)
		default:
			c.TunnelFramesUnlisted += t.Frames
		}
	}
	sortWraps(c)
}
