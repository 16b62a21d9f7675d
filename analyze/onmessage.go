package analyze

import (
	"time"

	"github.com/roce-dissect/roce-dissect/layers"
)

// Message is a message completed, as Options.OnMessage is told of it.
type Message struct {
	// Src, Dst, DestQP and Tunnel name the flow that counts it (Flow.ID;
	// Tunnel is Flow.Tunnel, the zero FlowTunnel for a flow in none).
	Src, Dst Addr
	DestQP   uint32
	Tunnel   FlowTunnel
	// First is the frame of the message's first packet seen (its FIRST,
	// or the packet itself for a one-packet message); 0 when unknown (a
	// message completed by packets that came out of order).
	First uint64
	// Frame and Time are those of the packet that completed it: its LAST
	// or ONLY, or the late packet that filled its last hole.
	Frame uint64
	Time  time.Time
	// Bytes is its payload size.
	Bytes uint64
	// Opcode is that of the packet that completed it, which says its
	// operation (SEND, RDMA WRITE, READ response, …).
	Opcode layers.Opcode
}

// first is the frame of a pending message's first packet: known only
// for one kept open at the next message's FIRST (keepOpen), whose frame
// is its FIRST's; the others' frame is their LAST's.
func (pm *pendingMsg) first() uint64 {
	if pm.reported {
		return pm.frame
	}
	return 0
}

// messageDone tells Options.OnMessage of the message p completed in f.
func (a *Analyzer) messageDone(f *flowState, p *Packet, first, size uint64) {
	a.opts.OnMessage(Message{Src: f.dir.src, Dst: f.dir.dst, DestQP: f.qp, Tunnel: f.dir.tun.value(), First: first, Frame: p.Frame, Time: p.Time, Bytes: size, Opcode: p.BTH.Opcode})
}
