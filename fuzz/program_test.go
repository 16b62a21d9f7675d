package fuzz_test

import (
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/cm"
	"github.com/roce-dissect/roce-dissect/layers"
)

// maxProgramFrames bounds the frames one program expands to: enough for
// the paths that only long sequences reach (tens of thousands of flows,
// full gap lists and series, the flow cap), small enough for a fuzz run.
const maxProgramFrames = 1 << 15

// Program modes: what each repetition of an instruction changes in its
// template frame.
const (
	progNewQP      = 1 << iota // destination QP base+i: a new flow per frame
	progPSNJump                // PSN jumps pseudo-randomly: gaps, retransmissions
	progHugeLength             // original length 0xFFFFFFFF
	progClockBack              // the clock goes back (by arg µs) every other frame
	progOpcode                 // opcode = arg (0x1F: reserved; 0x81: CNP)
	progClockJump              // the clock jumps arg ms per frame (series)
	progCommID                 // a MAD's first CM word (REQ LocalCommID, REP LocalCommID) = base+i: CM floods
	progHugeDMA                // the RETH DMALength after the BTH = 0xFFFFFFFF: READ spans past the PSN space
)

// Where progCommID and progHugeDMA write, from the BTH: a UD MAD's CM
// message after BTH 12 + DETH 8 + MAD header 24; an RC READ request's
// DMALength after BTH 12 + VA 8 + R_Key 4.
const (
	commIDAt = 12 + 8 + 24
	dmaLenAt = 12 + 12
)

// instruction is one step of a program: repeat template tmpl count times
// in mode, with arg.
type instruction struct {
	tmpl  uint8
	mode  uint8
	arg   uint8
	count uint16
}

// cutProgram reads 5-byte instructions: template, mode, arg, count (big
// endian).
func cutProgram(in []byte) []instruction {
	var out []instruction
	for ; len(in) >= 5; in = in[5:] {
		out = append(out, instruction{tmpl: in[0], mode: in[1], arg: in[2], count: uint16(in[3])<<8 | uint16(in[4])})
	}
	return out
}

func encodeProgram(ins ...instruction) []byte {
	var out []byte
	for _, i := range ins {
		out = append(out, i.tmpl, i.mode, i.arg, byte(i.count>>8), byte(i.count))
	}
	return out
}

// bthOffset returns where the BTH starts in a frame, or -1: the analyzer
// decodes it, and its BTH aliases the frame.
func bthOffset(lt gplayers.LinkType, data []byte) int {
	a := analyze.New(analyze.Options{NoICRC: true})
	p := a.Feed(gopacket.CaptureInfo{CaptureLength: len(data), Length: len(data)}, lt, data)
	if p.BTH == nil || len(p.BTH.Contents) < layers.BTHLen {
		return -1
	}
	return cap(data) - cap(p.BTH.Contents)
}

// cnpSeed is a RoCE v2 CNP frame: flows of only CNPs took quadratic time
// to name.
func cnpSeed(t testing.TB) seedFrame {
	eth := &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: net.IPv4(10, 0, 0, 1), DstIP: net.IPv4(10, 0, 0, 2)}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: 4791}
	require.NoError(t, udp.SetNetworkLayerForChecksum(ip))
	bth := &layers.BTH{Opcode: layers.OpcodeRoCEv2CNP, PKey: 0xFFFF, BECN: true, DestQP: 1}
	require.NoError(t, bth.SetNetworkLayerForChecksum(ip, udp))
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, eth, ip, udp, bth, &layers.CNP{}, &layers.ICRC{}))
	return seedFrame{linkType: gplayers.LinkTypeEthernet, data: buf.Bytes()}
}

// FuzzAnalyzerProgram feeds the analyzer long hostile sequences from a
// compact input: a few template frames (cut as FuzzAnalyzerSequence cuts
// its input) and a program that repeats them up to 32,768 frames in all,
// changing the destination QP (a flow per frame), the PSN, the original
// length, the clock, the opcode, a CM message's CommID (REQ floods past the
// connection cap, REP floods colliding on one connection) or a READ's
// DMALength (spans past the PSN space) at each repetition. The existing targets'
// inputs are a few KiB: they never reach the flow cap, full gap lists or
// series, or report building over tens of thousands of flows. It checks
// what FuzzAnalyzerSequence checks (counters reconcile, caps hold, the
// report encodes, halves merged count the whole), that no frame's
// original length counts above MaxOriginalLength, that the connections
// stay within MaxConnections and no flow misses more PSNs than the 24-bit
// space holds, and, through the
// watchdog, that no input takes 10 s.
func FuzzAnalyzerProgram(f *testing.F) {
	caps := seedCaptures(f)
	var frames []seedFrame
	for _, name := range sortedKeys(caps) {
		fr := readFrames(f, name, caps[name])
		if len(fr) > 2 {
			fr = fr[:2]
		}
		frames = append(frames, fr...)
	}
	cnp0 := cnpSeed(f)
	cnp := encodeSequence([]seedFrame{cnp0})
	f.Add(uint16(20000), cnp, encodeProgram(instruction{0, progNewQP, 0, 40000}))                   // 32,768 CNP-only flows
	f.Add(uint16(100), cnp, encodeProgram(instruction{0, progNewQP | progOpcode, 0x1F, 20000}))     // reserved-opcode flows
	f.Add(uint16(2), cnp, encodeProgram(instruction{0, progHugeLength, 0, 4}))                      // 4 × 4 GiB
	f.Add(uint16(3000), cnp, encodeProgram(instruction{0, progClockJump | progClockBack, 7, 9000})) // series
	req, rep, read := cmSeeds(f)
	cmPair := encodeSequence([]seedFrame{req, rep})
	f.Add(uint16(9000), encodeSequence([]seedFrame{req}), encodeProgram(instruction{0, progCommID, 0, 30000}))                   // REQ flood past the connection cap
	f.Add(uint16(9000), cmPair, encodeProgram(instruction{0, 0, 0, 1}, instruction{1, progCommID, 7, 30000}))                    // REP flood colliding on one connection
	f.Add(uint16(100), encodeSequence([]seedFrame{req}), encodeProgram(instruction{0, 0, 0, 20000}))                             // one REQ retransmitted
	f.Add(uint16(5000), encodeSequence([]seedFrame{read}), encodeProgram(instruction{0, progHugeDMA | progPSNJump, 255, 20000})) // READ spans past the PSN space
	f.Add(uint16(5000), encodeSequence([]seedFrame{req, rep, read}),                                                             // the same with the path MTU of a connection (256)
		encodeProgram(instruction{0, 0, 0, 1}, instruction{1, 0, 0, 1}, instruction{2, progHugeDMA | progPSNJump, 255, 20000}))
	cutReq := seedFrame{linkType: req.linkType, data: req.data[:60]}                                                              // a REQ cut at 60 bytes, recorded whole
	f.Add(uint16(1), encodeSequence([]seedFrame{cnp0, cutReq}), encodeProgram(instruction{0, 0, 0, 1}, instruction{1, 0, 0, 20})) // a 74-byte frame captured whole, then cut REQs: lies in the whole, tool cuts in the second half
	for i := range min(len(frames), 8) {
		seq := encodeSequence(frames[i : i+1])
		f.Add(uint16(5000), seq, encodeProgram(instruction{0, progPSNJump, 3, 10000}))                                      // gaps
		f.Add(uint16(500), seq, encodeProgram(instruction{0, progNewQP | progPSNJump, 1, 3000}, instruction{0, 0, 0, 100})) // many flows, then one
	}
	f.Fuzz(func(t *testing.T, split uint16, templates, program []byte) {
		defer watchdog(append(templates, program...))()
		tmpls := cutSequence(templates)
		if len(tmpls) == 0 {
			return
		}
		opts := analyze.Options{NoICRC: true, MaxFindings: 1000, Interval: time.Microsecond, MaxConnections: 1000}
		whole := analyze.New(opts)
		parts := [2]*analyze.Analyzer{analyze.New(opts), analyze.New(opts)}
		fed := feedProgram(tmpls, program, int(split), whole, parts)
		r := whole.Finish()
		checkProgramReport(t, r, opts, fed)
		merged := parts[0].Finish()
		require.NoError(t, merged.Merge(parts[1].Finish()))
		checkMergedHalves(t, r, merged)
	})
}

// feedProgram expands program over the templates tmpls and feeds each
// frame to whole and to one of parts: the first split frames to parts[0],
// the rest to parts[1]. It returns the frames fed, at most
// maxProgramFrames.
func feedProgram(tmpls []sequenceFrame, program []byte, split int, whole *analyze.Analyzer, parts [2]*analyze.Analyzer) int {
	offs := make([]int, len(tmpls))
	for i, tm := range tmpls {
		offs[i] = bthOffset(linkTypes[int(tm.linkType)%len(linkTypes)], tm.data)
	}
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fed := 0
	var frame []byte
	rng := uint32(1)
	for _, in := range cutProgram(program) {
		tm := tmpls[int(in.tmpl)%len(tmpls)]
		lt := linkTypes[int(tm.linkType)%len(linkTypes)]
		off := offs[int(in.tmpl)%len(tmpls)]
		frame = append(frame[:0], tm.data...)
		for i := range min(int(in.count), maxProgramFrames-fed) {
			if off >= 0 {
				rewriteBTH(frame[off:], in, i, &rng)
			}
			ts = programClock(ts, in, i, len(frame))
			length := len(frame)
			if in.mode&progHugeLength != 0 {
				length = 0xFFFFFFFF
			}
			ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(frame), Length: length}
			whole.Feed(ci, lt, frame)
			part := parts[0]
			if fed >= split {
				part = parts[1]
			}
			part.Feed(ci, lt, frame)
			fed++
		}
	}
	return fed
}

// rewriteBTH changes the i-th repetition of in's template, from its BTH
// b on, as in's mode says: the opcode, the destination QP, a MAD's first
// CM word, a READ's DMALength, the PSN (drawn from rng).
func rewriteBTH(b []byte, in instruction, i int, rng *uint32) {
	if in.mode&progOpcode != 0 {
		b[0] = in.arg
	}
	if in.mode&progNewQP != 0 {
		qp := uint32(i + 1)
		b[5], b[6], b[7] = byte(qp>>16), byte(qp>>8), byte(qp)
	}
	if in.mode&progCommID != 0 && len(b) >= commIDAt+4 {
		id := uint32(in.arg)<<24 | uint32(i+1)
		b[commIDAt], b[commIDAt+1], b[commIDAt+2], b[commIDAt+3] = byte(id>>24), byte(id>>16), byte(id>>8), byte(id)
	}
	if in.mode&progHugeDMA != 0 && len(b) >= dmaLenAt+4 {
		copy(b[dmaLenAt:], []byte{0xFF, 0xFF, 0xFF, 0xFF})
	}
	if in.mode&progPSNJump != 0 {
		*rng ^= *rng << 13
		*rng ^= *rng >> 17
		*rng ^= *rng << 5
		psn := uint32(i) + *rng%(uint32(in.arg)+1)*uint32(i%7)
		b[9], b[10], b[11] = byte(psn>>16), byte(psn>>8), byte(psn)
	}
}

// programClock returns the time of the i-th repetition of in, of a frame
// of n bytes, after ts: back arg µs every other frame, arg ms on, or the
// frame's bytes in ns.
func programClock(ts time.Time, in instruction, i, n int) time.Time {
	switch {
	case in.mode&progClockBack != 0 && i%2 == 1:
		return ts.Add(-time.Duration(in.arg) * time.Microsecond)
	case in.mode&progClockJump != 0:
		return ts.Add(time.Duration(in.arg) * time.Millisecond)
	default:
		return ts.Add(time.Duration(n) * time.Nanosecond)
	}
}

// checkProgramReport checks the report of the fed frames of a program:
// the counters reconcile, no frame's or flow's original length counts
// above MaxOriginalLength, the caps of opts hold, no flow misses more
// PSNs than the 24-bit space holds, and the report encodes.
func checkProgramReport(t *testing.T, r *analyze.Report, opts analyze.Options, fed int) {
	t.Helper()
	c := r.Capture
	require.Equal(t, uint64(fed), c.Frames)
	require.Equal(t, c.Frames, c.RoCEPackets+c.OtherPackets+c.Malformed)
	require.LessOrEqual(t, c.Bytes, c.Frames*analyze.MaxOriginalLength)
	var flowPackets uint64
	for _, fl := range r.Flows {
		flowPackets += fl.Packets
		require.NotEmpty(t, fl.Transport)
		require.LessOrEqual(t, fl.WireBytes, fl.Packets*analyze.MaxOriginalLength)
	}
	require.Equal(t, c.RoCEPackets, flowPackets+c.PacketsOfDroppedFlows)
	require.LessOrEqual(t, len(c.MalformedFrames), opts.MaxFindings)
	require.LessOrEqual(t, len(r.Connections), opts.MaxConnections)
	for _, fl := range r.Flows {
		require.LessOrEqual(t, fl.Requests.Missing, uint64(1<<24-1), "a flow misses at most the 24-bit PSN space")
	}
	_, err := json.Marshal(r)
	require.NoError(t, err)
}

// checkMergedHalves checks the report of the two halves of a program
// merged against the report of the whole r: they count the same frames,
// and the same RoCE packets, bytes and flows but for the frames the
// second half judged otherwise; the merged report encodes.
func checkMergedHalves(t *testing.T, r, merged *analyze.Report) {
	t.Helper()
	c, mc := r.Capture, merged.Capture
	require.Equal(t, c.Frames, mc.Frames)
	require.Equal(t, c.OtherPackets, mc.OtherPackets)
	if c.CutFrames == 0 && mc.CutFrames == 0 {
		require.Equal(t, c.RoCEPackets, mc.RoCEPackets)
		require.Equal(t, c.Bytes, mc.Bytes)
		require.Equal(t, len(r.Flows), len(merged.Flows), "the halves merged have the flows of the whole (no cap is reached)")
	} else {
		// A frame shorter than its length fields is judged against the
		// frames before it (docs/robustness.md): a tool's cut, counted
		// with its wire length, or a lie, malformed. The second half,
		// without the first, may judge such a frame otherwise; only
		// those frames move between CutFrames and Malformed.
		require.Equal(t, c.RoCEPackets-c.CutFrames, mc.RoCEPackets-mc.CutFrames, "RoCE packets other than tool cuts")
		require.Equal(t, c.RoCEPackets+c.Malformed, mc.RoCEPackets+mc.Malformed)
		judged := c.CutFrames + mc.CutFrames // each frame judged otherwise is a cut on one side
		require.LessOrEqual(t, absDiff(c.Bytes, mc.Bytes), judged*analyze.MaxOriginalLength, "only the wire length of frames judged otherwise differs")
		require.LessOrEqual(t, absDiff(uint64(len(r.Flows)), uint64(len(merged.Flows))), judged, "only frames judged otherwise make other flows")
	}
	_, err := json.Marshal(merged)
	require.NoError(t, err)
}

// absDiff returns |a − b|.
func absDiff(a, b uint64) uint64 {
	return max(a, b) - min(a, b)
}

// cmSeeds returns a CM REQ and its REP (UD SEND ONLY to QP1, 256-byte
// MADs) and an RC READ request after a WRITE FIRST of 256 bytes (the path
// MTU known), the templates of the CM flood and READ span programs.
func cmSeeds(t testing.TB) (req, rep, read seedFrame) {
	frame := func(src, dst net.IP, bth *layers.BTH, rest ...gopacket.SerializableLayer) seedFrame {
		eth := &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
		ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: src, DstIP: dst}
		udp := &gplayers.UDP{SrcPort: 49152, DstPort: 4791}
		require.NoError(t, udp.SetNetworkLayerForChecksum(ip))
		require.NoError(t, bth.SetNetworkLayerForChecksum(ip, udp))
		buf := gopacket.NewSerializeBuffer()
		ls := append([]gopacket.SerializableLayer{eth, ip, udp, bth}, rest...)
		require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, append(ls, &layers.ICRC{})...))
		return seedFrame{linkType: gplayers.LinkTypeEthernet, data: append([]byte(nil), buf.Bytes()...)}
	}
	a, b := net.IPv4(10, 0, 0, 1), net.IPv4(10, 0, 0, 2)
	hdr := cm.Header{BaseVersion: 1, MgmtClass: cm.ClassCM, ClassVersion: 2, Method: 3}
	deth := &layers.DETH{QKey: 0x80010000, SrcQP: 1}
	req = frame(a, b, &layers.BTH{Opcode: layers.OpcodeUDSendOnly, PKey: 0xFFFF, DestQP: 1}, deth,
		&cm.MAD{Header: hdr, Message: &cm.ConnectRequest{LocalCommID: 1, LocalQPN: 0x100, StartingPSN: 7, PathMTU: cm.MTU256, TransportServiceType: cm.TransportRC}})
	rep = frame(b, a, &layers.BTH{Opcode: layers.OpcodeUDSendOnly, PKey: 0xFFFF, DestQP: 1}, deth,
		&cm.MAD{Header: hdr, Message: &cm.ConnectReply{LocalCommID: 2, RemoteCommID: 1, LocalQPN: 0x200, StartingPSN: 9}})
	read = frame(a, b, &layers.BTH{Opcode: layers.OpcodeRCRDMAReadRequest, PKey: 0xFFFF, DestQP: 0x200, AckReq: true, PSN: 7},
		&layers.RETH{VA: 0x1000, RKey: 7, DMALength: 4096})
	return req, rep, read
}
