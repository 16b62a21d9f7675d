package synth

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/roce-dissect/roce-dissect/layers"
)

// FrameBuilder serializes the RC packets of a scenario generated outside
// this package (internal/synth/ncclsynth) between numbered hosts, with
// the hosts and serializers of every other scenario.
type FrameBuilder struct {
	b     *builder
	hosts []*host
	c     conn
	pause pauseGen // PFC's serializer
}

// RCPacket is one packet FrameBuilder.Build writes: its BTH, the
// extended headers its opcode has (RETH, ImmDt, AETH) and its payload.
type RCPacket struct {
	Src, Dst int    // host numbers
	SrcPort  uint16 // RoCE v2 UDP source port
	Opcode   layers.Opcode
	DestQP   uint32
	PSN      uint32
	AckReq   bool
	// RETH
	VA        uint64
	RKey      uint32
	DMALength uint32
	Immediate uint32 // ImmDt, as the header carries it (big-endian on the wire)
	// AETH
	Syndrome uint8
	MSN      uint32
	// Payload is written as is; when nil, PayloadLen bytes of the
	// pattern of the other scenarios are.
	Payload    []byte
	PayloadLen int
}

// NewFrameBuilder returns a builder of frames between n hosts in encap;
// host i has the addresses host i of the other scenarios has (seed
// draws what they draw).
func NewFrameBuilder(encap Encap, n int, seed uint64) (*FrameBuilder, error) {
	if int(encap) >= len(encapNames) {
		return nil, fmt.Errorf("synth: %w: encapsulation %d", ErrConfig, encap)
	}
	if n < 1 || n > 1<<16 {
		return nil, fmt.Errorf("synth: %w: %d hosts", ErrConfig, n)
	}
	rng := rand.New(rand.NewPCG(seed, 0x686f737473))
	f := &FrameBuilder{b: newBuilder(encap, true)}
	for i := range n {
		f.hosts = append(f.hosts, newHost(i, encap, rng))
	}
	return f, nil
}

// Addr returns host i's network address as the truth and the analyzer
// write it.
func (f *FrameBuilder) Addr(i int) string { return f.hosts[i].addr }

// Build serializes p at ts (the ERF record's time); the frame is valid
// until the next call.
func (f *FrameBuilder) Build(p *RCPacket, ts time.Time) ([]byte, error) {
	if p.Src < 0 || p.Src >= len(f.hosts) || p.Dst < 0 || p.Dst >= len(f.hosts) {
		return nil, fmt.Errorf("synth: %w: hosts %d → %d of %d", ErrConfig, p.Src, p.Dst, len(f.hosts))
	}
	f.c = conn{a: f.hosts[p.Src], b: f.hosts[p.Dst], sportA: p.SrcPort}
	q := pkt{c: &f.c, op: p.Opcode, destQP: p.DestQP, psn: p.PSN & psnMask, ackReq: p.AckReq,
		va: p.VA, rkey: p.RKey, dmaLen: p.DMALength, imm: p.Immediate, aeth: p.Syndrome, msn: p.MSN & psnMask,
		payload: p.Payload, payLen: p.PayloadLen}
	return f.b.build(&q, ts)
}

// PFC serializes a PFC frame (802.1Qbb) that a switch port sends to pause
// priority for quanta (512 bit times each), with the pause frames'
// serializer of every scenario; the frame is valid until the next call.
func (f *FrameBuilder) PFC(priority int, quanta uint16) ([]byte, error) {
	if priority < 0 || priority > 7 {
		return nil, fmt.Errorf("synth: %w: PFC priority %d", ErrConfig, priority)
	}
	if f.pause.buf == nil {
		f.pause.buf = gopacket.NewSerializeBuffer()
	}
	info := PauseInfo{Kind: PausePFC, Opcode: uint16(layers.MACControlOpcodePFC), ClassEnable: 1 << priority}
	info.Quanta[priority] = quanta
	return f.pause.serialize(pauseMAC(0, 0), &info)
}

// WriteOpcode is the RC RDMA WRITE opcode of a message's packet: ONLY,
// FIRST, MIDDLE or LAST by its place (first, last), WITH IMMEDIATE on
// the last when withImm.
func WriteOpcode(first, last, withImm bool) layers.Opcode {
	switch {
	case first && last && withImm:
		return layers.OpcodeRCRDMAWriteOnlyWithImm
	case first && last:
		return layers.OpcodeRCRDMAWriteOnly
	case first:
		return layers.OpcodeRCRDMAWriteFirst
	case last && withImm:
		return layers.OpcodeRCRDMAWriteLastWithImm
	case last:
		return layers.OpcodeRCRDMAWriteLast
	}
	return layers.OpcodeRCRDMAWriteMiddle
}

// CaptureWriter writes frames to a capture file as every scenario does:
// pcap (µs or ns) or pcapng, cut to a snap length.
type CaptureWriter struct {
	w    *capWriter
	snap int
}

// NewCaptureWriter starts a capture of encap's link type on out.
func NewCaptureWriter(out io.Writer, format Format, nanos bool, encap Encap, snapLen int) (*CaptureWriter, error) {
	if snapLen < 0 {
		return nil, fmt.Errorf("synth: %w: snap length %d", ErrConfig, snapLen)
	}
	w, err := newCapWriter(out, &Config{Format: format, Nanos: nanos, Encap: encap, SnapLen: snapLen})
	if err != nil {
		return nil, err
	}
	return &CaptureWriter{w: w, snap: snapLen}, nil
}

// Write writes frame at ts, cut to the snap length.
func (w *CaptureWriter) Write(ts time.Time, frame []byte) error {
	data := frame
	if w.snap > 0 && len(data) > w.snap {
		data = data[:w.snap]
	}
	return w.w.write(ts, data, len(frame))
}

// Flush writes what is buffered.
func (w *CaptureWriter) Flush() error { return w.w.flush() }
