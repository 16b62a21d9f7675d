package wrap

import "net/netip"

// Truth is what a Wrapper did to the frames it wrapped: the truth of a
// generated capture's encapsulations, for an analyzer's summary to match.
type Truth struct {
	// Chains counts the frames wrapped by chain (Chain.String:
	// "erspan2/vxlan", outermost first).
	Chains map[string]int `json:"chains"`
	// Tunnels are the tunnels and sessions the frames went through, in
	// the order of their first frame (within a frame, innermost first).
	Tunnels []Tunnel `json:"tunnels"`
}

// Tunnel is one tunnel or session of an encapsulation.
type Tunnel struct {
	Kind string `json:"kind"`
	// Src and Dst are the outer IPv4 addresses: the switch and the
	// collector of an ERSPAN session, the VTEPs of an overlay tunnel;
	// none for QinQ and MPLS.
	Src string `json:"src,omitempty"`
	Dst string `json:"dst,omitempty"`
	// ID is the ERSPAN session ID, the VNI (VXLAN, Geneve), the VSID
	// (NVGRE), the S-VLAN ID (QinQ) or the top label (MPLS).
	ID     uint32 `json:"id"`
	Frames int    `json:"frames"`
}

// tunnelKey names a tunnel: one per kind, outer source and destination,
// and ID.
type tunnelKey struct {
	kind     Kind
	src, dst netip.Addr
	id       uint32
}

// record is what a Wrapper counts.
type record struct {
	frames  int
	index   map[tunnelKey]int
	tunnels []Tunnel
}

// count records a wrapped frame and its tunnels (w.pending).
func (w *Wrapper) count() {
	r := &w.record
	r.frames++
	if r.index == nil {
		r.index = make(map[tunnelKey]int)
	}
	for _, k := range w.pending {
		i, ok := r.index[k]
		if !ok {
			i = len(r.tunnels)
			r.index[k] = i
			t := Tunnel{Kind: k.kind.String(), ID: k.id}
			if k.src.IsValid() {
				t.Src, t.Dst = k.src.String(), k.dst.String()
			}
			r.tunnels = append(r.tunnels, t)
		}
		r.tunnels[i].Frames++
	}
}

// Truth returns what the Wrapper did so far (a copy).
func (w *Wrapper) Truth() Truth {
	t := Truth{Chains: map[string]int{}, Tunnels: append([]Tunnel{}, w.record.tunnels...)}
	if w.record.frames > 0 {
		t.Chains[w.name] = w.record.frames
	}
	return t
}
