package cli

import (
	"strconv"
	"strings"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/export"
	"github.com/roce-dissect/roce-dissect/layers"
	"github.com/roce-dissect/roce-dissect/report"
)

// What -P -o json and -P -o csv say of the way a frame travelled: the
// encapsulations it arrived in (a switch mirror's ERSPAN, an overlay's
// VXLAN…), its 802.1p priority, and for a PFC or 802.3x PAUSE frame, which
// both list unless --qp or --flow select RDMA packets, its pause times.

// wrapJSON is one encapsulation of a packet (-P -o json's wraps, outermost
// first), as the report's capture.tunnels names a tunnel.
type wrapJSON struct {
	Kind string `json:"kind"`
	// Src and Dst are the outer IP addresses; absent for QinQ and MPLS.
	Src string `json:"src,omitempty"`
	Dst string `json:"dst,omitempty"`
	// ID is the ERSPAN session ID, VNI, VSID, GRE key, S-VLAN ID or top
	// MPLS label, IDName says which; both absent for ERSPAN I.
	ID     *uint32 `json:"id,omitempty"`
	IDName string  `json:"id_name,omitempty"`
}

func wrapObjects(ws []analyze.Wrap) []wrapJSON {
	if len(ws) == 0 {
		return nil
	}
	out := make([]wrapJSON, len(ws))
	for i, w := range ws {
		out[i] = wrapJSON{Kind: w.Kind.String(), IDName: w.Kind.IDName()}
		if w.Src.IsValid() {
			out[i].Src, out[i].Dst = w.Src.String(), w.Dst.String()
		}
		if out[i].IDName != "" {
			out[i].ID = ptr(w.ID)
		}
	}
	return out
}

// macControlJSON is a PFC or 802.3x PAUSE frame (-P -o json's
// mac_control).
type macControlJSON struct {
	// Kind is "pfc" or "802.3x", as the report's pause[].kind; absent
	// for another opcode.
	Kind   string `json:"kind,omitempty"`
	Opcode uint16 `json:"opcode"`
	// ClassEnableVector is a PFC frame's: bit i enables priority i.
	ClassEnableVector *uint16 `json:"class_enable_vector,omitempty"`
	// Priorities are the pause times the frame asks for: one per enabled
	// priority of a PFC frame, one with priority null (every priority)
	// of an 802.3x frame.
	Priorities []pauseTimeJSON `json:"priorities,omitempty"`
}

type pauseTimeJSON struct {
	Priority *int `json:"priority"`
	// Quanta is the pause time asked for (0: XON), PauseNs that time at
	// --link-speed.
	Quanta  uint16 `json:"quanta"`
	PauseNs int64  `json:"pause_ns"`
}

// macControlObject is mc's object, its times at linkBps.
func macControlObject(mc *layers.MACControl, linkBps float64) *macControlJSON {
	o := &macControlJSON{Opcode: uint16(mc.Opcode)}
	pause := func(prio *int, q uint16) pauseTimeJSON {
		return pauseTimeJSON{Priority: prio, Quanta: q, PauseNs: layers.PauseDuration(q, linkBps).Nanoseconds()}
	}
	switch mc.Opcode {
	case layers.MACControlOpcodePause:
		o.Kind = "802.3x"
		o.Priorities = []pauseTimeJSON{pause(nil, mc.PauseTime)}
	case layers.MACControlOpcodePFC:
		o.Kind, o.ClassEnableVector = "pfc", ptr(mc.ClassEnableVector)
		for i := range 8 {
			if mc.Enabled(i) {
				o.Priorities = append(o.Priorities, pause(ptr(i), mc.PauseTimes[i]))
			}
		}
	}
	return o
}

// frameMACs are the addresses of the Ethernet header that carries a MAC
// Control frame (the innermost one), which src and dst show for it: the
// analyzer's Packet has no IP addresses for it.
func frameMACs(f *frame) (src, dst string) {
	pkt := gopacket.NewPacket(f.data, f.linkType, gopacket.DecodeOptions{NoCopy: true, Lazy: true})
	for _, l := range pkt.Layers() {
		if e, ok := l.(*gplayers.Ethernet); ok {
			src, dst = e.SrcMAC.String(), e.DstMAC.String()
		}
	}
	return src, dst
}

// pauseFrameObject makes o, a MAC Control frame's object, say so.
func (r *runner) pauseFrameObject(o *packetJSON, p *analyze.Packet, f *frame) {
	o.Src, o.Dst = frameMACs(f)
	o.MACControl = macControlObject(p.MACControl, r.cfg.linkGbps*1e9)
}

// packetCSVWrapHeader are the columns of -P -o csv after
// packetCSVExtraHeader's: the packet's encapsulations as the Parquet
// packets table has them (docs/parquet.md), its priority, and a MAC
// Control frame's kind and pause times.
var packetCSVWrapHeader = []string{
	"encapsulation", "mirror_src", "mirror_session", "tunnel_id", "tunnel_id_name",
	"priority", "mac_control", "pause_quanta",
}

// packetCSVWrap is the end of p's -P -o csv row (packetCSVWrapHeader).
func packetCSVWrap(p *analyze.Packet) []string {
	row := make([]string, len(packetCSVWrapHeader))
	if ws := p.Wraps; len(ws) > 0 {
		row[0] = analyze.ChainName(ws)
		m, tu := export.MirrorTunnel(ws)
		if m >= 0 {
			row[1] = report.CSVText(ws[m].Src.String())
			if ws[m].Kind.IDName() != "" {
				row[2] = u(uint64(ws[m].ID))
			}
		}
		if tu >= 0 {
			row[3], row[4] = u(uint64(ws[tu].ID)), ws[tu].Kind.IDName()
		}
	}
	if p.Priority >= 0 {
		row[5] = strconv.Itoa(int(p.Priority))
	}
	if mc := p.MACControl; mc != nil {
		o := macControlObject(mc, 0)
		row[6] = o.Kind
		times := make([]string, len(o.Priorities))
		for i, t := range o.Priorities {
			prio := "all"
			if t.Priority != nil {
				prio = strconv.Itoa(*t.Priority)
			}
			times[i] = prio + ":" + strconv.Itoa(int(t.Quanta))
		}
		row[7] = strings.Join(times, " ")
	}
	return row
}
