package wrap

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// ErrConfig is wrapped by the errors of a Wrapper's configuration.
var ErrConfig = errors.New("invalid wrap configuration")

// ErrFrame is wrapped by the errors of a frame the chain cannot wrap: no
// whole Ethernet header, an original length below the captured one, an
// outer IPv4 packet over 65,535 bytes, MPLS around no IP packet.
var ErrFrame = errors.New("frame cannot be wrapped")

// Defaults of a Wrapper's zero fields.
var (
	defaultMirrorSrc = netip.AddrFrom4([4]byte{192, 0, 2, 1})
	defaultMirrorDst = netip.AddrFrom4([4]byte{192, 0, 2, 2})
	defaultUnderlay  = netip.PrefixFrom(netip.AddrFrom4([4]byte{172, 16, 0, 0}), 12)
	defaultLabels    = [2]uint32{16001, 10001}
)

const (
	defaultSessionID = 1
	defaultVNI       = 5001
	defaultSVID      = 200
)

// Wrapper wraps Ethernet frames in its Chain of encapsulations and keeps
// the Truth of what it did. Set the fields before the first Wrap (later
// changes are ignored); a zero field takes the default it names. A
// Wrapper is not safe for concurrent use.
//
// The outer addresses are deterministic: an ERSPAN session goes from
// MirrorSrc (the switch) to MirrorDst (the collector); an overlay gives
// each inner host (its IP address, or its MAC address when the frame
// carries no IP header) its own VTEP address from Underlay, in the order
// the hosts appear, and tunnels each frame from its source's VTEP to its
// destination's. Outer Ethernet addresses are 02:77 and the outer IPv4
// address.
type Wrapper struct {
	// Chain is the nesting, outermost first.
	Chain Chain
	// SessionID is the ERSPAN session ID, 10 bits (default 1).
	SessionID uint16
	// VNI is the VXLAN and Geneve VNI and the NVGRE VSID, 24 bits
	// (default 5001).
	VNI uint32
	// SVID is the VLAN ID of the QinQ S-tag, 1…4094 (default 200).
	SVID uint16
	// Labels is the MPLS label stack pushed, top first, each 16…2^20-1
	// (default 16001, 10001).
	Labels [2]uint32
	// MirrorSrc and MirrorDst are the IPv4 addresses of the ERSPAN
	// session's switch and collector (default 192.0.2.1 and 192.0.2.2).
	MirrorSrc, MirrorDst netip.Addr
	// Underlay is the IPv4 prefix the VTEP addresses are taken from,
	// first host address first (default 172.16.0.0/12).
	Underlay netip.Prefix

	started bool
	err     error
	cfg     settings // the fields with their defaults
	name    string   // Chain.String()
	seq     uint32   // the GRE sequence number of ERSPAN II and III: the frames wrapped before
	vteps   map[host]netip.Addr
	scratch [2][]byte
	pending []tunnelKey
	record  record
}

// Check reports whether the configuration is valid (an error wrapping
// ErrConfig if not).
func (w *Wrapper) Check() error {
	_, err := w.resolve()
	return err
}

// settings are a Wrapper's exported fields with their defaults.
type settings struct {
	Chain                Chain
	SessionID            uint16
	VNI                  uint32
	SVID                 uint16
	Labels               [2]uint32
	MirrorSrc, MirrorDst netip.Addr
	Underlay             netip.Prefix
}

// resolve returns the fields with their defaults, checked.
func (w *Wrapper) resolve() (settings, error) {
	c := settings{Chain: slices.Clone(w.Chain), SessionID: w.SessionID, VNI: w.VNI, SVID: w.SVID, Labels: w.Labels,
		MirrorSrc: w.MirrorSrc, MirrorDst: w.MirrorDst, Underlay: w.Underlay}
	bad := func(format string, a ...any) (settings, error) {
		return c, fmt.Errorf("wrap: %w: %s", ErrConfig, fmt.Sprintf(format, a...))
	}
	if len(c.Chain) == 0 {
		return bad("no encapsulation to wrap in")
	}
	for _, k := range c.Chain {
		if !k.Valid() {
			return bad("encapsulation %s", k)
		}
	}
	if c.SessionID == 0 {
		c.SessionID = defaultSessionID
	}
	if c.VNI == 0 {
		c.VNI = defaultVNI
	}
	if c.SVID == 0 {
		c.SVID = defaultSVID
	}
	if c.Labels == [2]uint32{} {
		c.Labels = defaultLabels
	}
	if !c.MirrorSrc.IsValid() {
		c.MirrorSrc = defaultMirrorSrc
	}
	if !c.MirrorDst.IsValid() {
		c.MirrorDst = defaultMirrorDst
	}
	if !c.Underlay.IsValid() {
		c.Underlay = defaultUnderlay
	}
	switch {
	case c.SessionID > 0x3FF:
		return bad("ERSPAN session ID %d exceeds 10 bits", c.SessionID)
	case c.VNI > 0xFFFFFF:
		return bad("VNI %d exceeds 24 bits", c.VNI)
	case c.SVID > 4094:
		return bad("S-VLAN ID %d (want 1…4094)", c.SVID)
	case !c.MirrorSrc.Is4() || !c.MirrorDst.Is4():
		return bad("mirror addresses %s → %s: want IPv4", c.MirrorSrc, c.MirrorDst)
	case !c.Underlay.Addr().Is4() || c.Underlay.Bits() > 30:
		return bad("underlay %s: want an IPv4 prefix of /30 or wider", c.Underlay)
	}
	for _, l := range c.Labels {
		if l < 16 || l > 0xFFFFF {
			return bad("MPLS label %d (want 16…%d)", l, 0xFFFFF)
		}
	}
	c.Underlay = c.Underlay.Masked()
	return c, nil
}

// start resolves the configuration at the first Wrap.
func (w *Wrapper) start() error {
	if w.started {
		return w.err
	}
	w.started = true
	w.cfg, w.err = w.resolve()
	if w.err == nil {
		w.name = w.cfg.Chain.String()
		w.vteps = make(map[host]netip.Addr)
	}
	return w.err
}

// Overhead is the number of bytes the Wrapper adds to every frame.
func (w *Wrapper) Overhead() int { return w.Chain.Overhead() }

// Wrap appends to dst the frame wrapped in the chain, the innermost
// encapsulation first. frame is the captured bytes of an Ethernet frame
// (without FCS) and origLen its length on the wire; the outer headers
// declare the wire length (the outer IPv4 total length and UDP length
// count origLen bytes of frame), the captured bytes are kept as they are,
// and outOrigLen is origLen plus the chain's overhead: a frame cut to a
// snap length stays cut the same way inside its new headers. ts is the
// frame's time (ERSPAN III timestamps). dst must not overlap frame. On
// error, dst is returned unchanged and nothing is counted.
func (w *Wrapper) Wrap(dst, frame []byte, origLen int, ts time.Time) (out []byte, outOrigLen int, err error) {
	if err := w.start(); err != nil {
		return dst, 0, err
	}
	if len(frame) < ethLen {
		return dst, 0, fmt.Errorf("wrap: %w: %d bytes hold no whole Ethernet header", ErrFrame, len(frame))
	}
	if origLen < len(frame) {
		return dst, 0, fmt.Errorf("wrap: %w: original length %d below the %d bytes captured", ErrFrame, origLen, len(frame))
	}
	w.pending = w.pending[:0]
	cur, orig := frame, origLen
	chain := w.cfg.Chain
	for i := len(chain) - 1; i >= 0; i-- {
		buf := dst
		if i > 0 {
			buf = w.scratch[i%2][:0]
		}
		res, tk, err := w.apply(i, buf, cur, orig, ts)
		if err != nil {
			return dst, 0, err
		}
		w.pending = append(w.pending, tk)
		orig += chain[i].Overhead()
		if i > 0 {
			w.scratch[i%2], cur = res, res
		} else {
			out = res
		}
	}
	w.seq++
	w.count()
	return out, orig, nil
}

// apply wraps f (orig bytes on the wire) in the chain's kind at position
// i, appending to out.
func (w *Wrapper) apply(i int, out, f []byte, orig int, ts time.Time) ([]byte, tunnelKey, error) {
	k := w.cfg.Chain[i]
	fi := readFrame(f)
	if n := k.Overhead(); isIP(k) && orig+n-ethLen > maxIPv4 {
		return out, tunnelKey{}, fmt.Errorf("wrap: %w: %s of a %d-byte frame exceeds the 65,535 bytes of an IPv4 packet", ErrFrame, k, orig)
	}
	switch k {
	case ERSPAN1, ERSPAN2, ERSPAN3, ERSPAN3Platform:
		return w.erspan(k, w.seq, out, f, orig, ts, &fi)
	case VXLAN, Geneve, NVGRE:
		return w.overlay(k, out, f, orig, &fi)
	case QinQ:
		return w.qinq(out, f, &fi)
	case MPLS:
		return w.mpls(out, f, &fi)
	}
	return out, tunnelKey{}, fmt.Errorf("wrap: %w: encapsulation %s", ErrConfig, k)
}

// isIP reports whether the kind writes outer IPv4.
func isIP(k Kind) bool { return k != QinQ && k != MPLS }
