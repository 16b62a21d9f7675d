package analyze

import (
	"net"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/nic"
	"github.com/roce-dissect/roce-dissect/layers"
)

// ibFrame builds a RoCE v2 frame from src to dst (ICRC computed; the
// analyzers of these tests skip it, as the frames are patched).
func ibFrame(t testing.TB, src, dst net.IP, bth *layers.BTH, rest ...gopacket.SerializableLayer) []byte {
	t.Helper()
	eth := &gplayers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: gplayers.EthernetTypeIPv4}
	ip := &gplayers.IPv4{Version: 4, TTL: 64, Protocol: gplayers.IPProtocolUDP, SrcIP: src, DstIP: dst}
	udp := &gplayers.UDP{SrcPort: 49152, DstPort: 4791}
	require.NoError(t, udp.SetNetworkLayerForChecksum(ip))
	require.NoError(t, bth.SetNetworkLayerForChecksum(ip, udp))
	ls := append([]gopacket.SerializableLayer{eth, ip, udp, bth}, rest...)
	ls = append(ls, &layers.ICRC{})
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...))
	return append([]byte(nil), buf.Bytes()...)
}

// bthAt is where the BTH starts in ibFrame's frames.
const bthAt = 14 + 20 + 8

func setQP(b []byte, qp uint32) {
	b[bthAt+5], b[bthAt+6], b[bthAt+7] = byte(qp>>16), byte(qp>>8), byte(qp)
}
func setPSN(b []byte, psn uint32) {
	b[bthAt+9], b[bthAt+10], b[bthAt+11] = byte(psn>>16), byte(psn>>8), byte(psn)
}

// maxFlowBytes is the documented worst case of one flow's state
// (docs/robustness.md): what the flow cap multiplies.
const maxFlowBytes = 112 << 10

// worstFlows feeds flows request flows (QPs 0x100…, hostA to hostB) the
// most state-hungry pattern the analyzer knows, iters times each: a SEND
// FIRST, then a SEND LAST that jumps over a PSN (a gap, a jump in the loss
// log, a message with a hole left pending, then, pending full, an
// incomplete message noted in the loss log), an old PSN resent (a go-back
// episode), a NAK PSN sequence error and an RNR NAK in the same flow
// (responses and their loss log), a READ response MIDDLE (the response
// stream), each in a new throughput interval, the clock going back now and
// then so that the series inserts; and, from hostB, an ACK of each LAST of
// the first flow (RTT samples; one ACK flow in all). It returns the
// analyzer.
func worstFlows(t testing.TB, flows, iters int) *Analyzer {
	first := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendFirst, PKey: 0xFFFF}, gopacket.Payload(make([]byte, 256)))
	last := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendLast, PKey: 0xFFFF, AckReq: true}, gopacket.Payload(make([]byte, 16)))
	only := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF}, gopacket.Payload(make([]byte, 16)))
	nak := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCAcknowledge, PKey: 0xFFFF}, &layers.AETH{Syndrome: 0x60})
	rnr := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCAcknowledge, PKey: 0xFFFF}, &layers.AETH{Syndrome: 0x20 | 0x0E})
	mid := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCRDMAReadResponseMiddle, PKey: 0xFFFF}, gopacket.Payload(make([]byte, 256)))
	ack := ibFrame(t, hostB, hostA, &layers.BTH{Opcode: layers.OpcodeRCAcknowledge, PKey: 0xFFFF}, &layers.AETH{Syndrome: 0x1F})
	a := New(Options{NoICRC: true, MaxFindings: 1 << 30})
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	feed := func(b []byte, qp, psn uint32, at time.Time) {
		setQP(b, qp)
		setPSN(b, psn&psnMask)
		a.Feed(gopacket.CaptureInfo{Timestamp: at, CaptureLength: len(b), Length: len(b)}, gplayers.LinkTypeEthernet, b)
	}
	for j := range iters {
		at := ts.Add(time.Duration(j) * 3 * time.Millisecond)
		if j%5 == 4 {
			at = ts.Add(time.Duration(j-3) * 3 * time.Millisecond).Add(time.Millisecond) // back, into a new interval
		}
		for f := range flows {
			qp := uint32(0x100 + f)
			psn := uint32(5 * j)
			feed(first, qp, psn, at)
			feed(first, qp, psn+1, at) // the message begun at psn is incomplete
			feed(last, qp, psn+3, at)  // psn+2 missing
			if f == 0 {
				feed(ack, 0x8000, psn+3, at.Add(time.Microsecond))
			}
			feed(only, qp, psn-10, at)
			feed(nak, qp, psn+1, at)
			feed(rnr, qp, psn+1, at)
			feed(mid, qp, psn, at)
		}
	}
	return a
}

// TestWorstFlowMemory builds the worst flow the analyzer knows and checks
// that the state it holds stays within maxFlowBytes per flow, whatever the
// packets: the flow cap then bounds memory (1,000 flows × 4,096 hostile
// packets held 495 MiB, about 0.5 MB per flow, before the lists were
// bounded per flow).
func TestWorstFlowMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("feeds 1M frames")
	}
	flows, iters := 20, 10_000
	// ROCE_DISSECT_WORST_FLOWS=1000 ROCE_DISSECT_WORST_ITERS=2048 measures
	// more flows (docs/robustness.md).
	if s := os.Getenv("ROCE_DISSECT_WORST_FLOWS"); s != "" {
		flows, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("ROCE_DISSECT_WORST_ITERS"); s != "" {
		iters, _ = strconv.Atoi(s)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a := worstFlows(t, flows, iters)
	a.findings, a.shard.at = findingList{}, nil // findings are bounded per run (MaxFindings), not per flow: not counted here
	runtime.GC()
	runtime.ReadMemStats(&after)
	// The one ACK flow is counted as if it were a request flow too: the
	// bound is checked on the average of flows+1 flows, all but one of the
	// worst kind.
	// No packet pattern of the test fills the NIC timing figures of a
	// request flow: their worst, every figure's histogram full, is
	// package nic's MaxFlowBytes (its TestWorstFlowMemory), counted on
	// top of what the flow holds.
	perFlow := (int64(after.HeapAlloc)-int64(before.HeapAlloc))/int64(flows) + nic.MaxFlowBytes
	f := a.flowList[0]
	require.Len(t, a.flowList, flows+1)
	require.NotNil(t, f.loss.log)
	t.Logf("per flow: %d bytes; gaps %d, pending %d, series %d, jumps %d, backs %d, naks %d, incomplete %d, head %d, RTT %v",
		perFlow, len(f.psn.gaps()), len(f.reqMsg.pending()), len(f.series.samples), len(f.loss.log.jumps), len(f.loss.log.backs), len(f.loss.log.naks), len(f.loss.log.incomplete), len(f.log.head), f.rtt != nil)
	// The pattern reaches every bound.
	assert.Equal(t, maxGaps, len(f.psn.gaps()))
	assert.Equal(t, maxPending, len(f.reqMsg.pending()))
	assert.Equal(t, maxLossLog, len(f.loss.log.jumps))
	assert.Equal(t, maxLossLog, len(f.loss.log.backs))
	assert.Equal(t, maxLossLog, len(f.loss.log.naks))
	assert.Equal(t, maxLossLog, len(f.loss.log.incomplete))
	assert.NotNil(t, f.rtt)
	assert.Greater(t, len(f.series.samples), maxSeries/2)
	assert.Less(t, perFlow, int64(maxFlowBytes), "one flow's state must stay within the documented bound")
	runtime.KeepAlive(a)
}
