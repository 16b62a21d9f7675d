package analyze

import (
	"runtime"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// maxIdleFlowBytes bounds the analyzer state of an idle flow, one with a
// single request packet, as the command keeps it for one file (no
// throughput series, no head log for Merge; docs/robustness.md, "Scale"):
// the 400 bytes issue 14 asked for, and what the flow carried (issue 40:
// its packets by operation and messages by size, flowMix, 144 bytes with
// the flow state's pointer to it). 563 bytes measured, of which the flow
// state is 384 (its size class; its size 360), its mix 144, its one
// request awaiting an ACK 16, and its QP in its direction's map the rest.
// Before: 394 (without the mix), 2,100 (RTT
// histogram, CNP candidates and series held from the start), 1,479 (NIC
// state from the first request), 999 (flow state 768 bytes: two
// addresses, two time.Time, counts of anomalies, gaps, orphan and pending
// messages, series held in every flow), 489 (flow state 448 bytes: request
// and ICRC counts the others give, retransmit causes, incomplete messages,
// DMA length mismatches, recovered ports and READ responses held in every
// flow).
const maxIdleFlowBytes = 570

// headLogBytes is what the head log Merge reads costs an idle flow (one
// request, its completed message, the log): kept when reports are merged.
const headLogBytes = 128

// seriesSampleBytes is what the series costs an idle flow: its holder
// (flowSeries, 32 bytes) and one slice of one sample.
const seriesSampleBytes = 32 + 48

// idleFlowBytes feeds n one-packet flows (a SEND ONLY to each of n QPs)
// with opts and returns the heap the analyzer holds per flow.
func idleFlowBytes(t testing.TB, n int, opts Options) int64 {
	only := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, AckReq: true}, gopacket.Payload(make([]byte, 64)))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a := New(opts)
	feedIdleFlows(a, only, n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Len(t, a.flowList, n)
	runtime.KeepAlive(a)
	return (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(n)
}

// feedIdleFlows feeds a n one-packet flows: the frame only (a request
// from one host to another) to QPs 0x100 on, with PSNs 0 on, a
// microsecond apart.
func feedIdleFlows(a *Analyzer, only []byte, n int) {
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		setQP(only, uint32(0x100+i))
		setPSN(only, uint32(i))
		a.Feed(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(only), Length: len(only)}, gplayers.LinkTypeEthernet, only)
	}
}

// TestIdleFlowMemory checks that an idle flow costs at most
// maxIdleFlowBytes of analyzer state, with and without the throughput
// series.
func TestIdleFlowMemory(t *testing.T) {
	n := 200_000
	if testing.Short() {
		n = 20_000
	}
	for _, tc := range []struct {
		name  string
		opts  Options
		bound int64
	}{
		{"one file, no series (text, CSV)", Options{NoICRC: true, NoSeries: true, NoMerge: true}, maxIdleFlowBytes},
		{"no series, merged (several files)", Options{NoICRC: true, NoSeries: true}, maxIdleFlowBytes + headLogBytes},
		{"one file, series (JSON, --plot, --html)", Options{NoICRC: true, NoMerge: true}, maxIdleFlowBytes + seriesSampleBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			per := idleFlowBytes(t, n, tc.opts)
			t.Logf("%d one-packet flows: %d bytes each", n, per)
			assert.LessOrEqual(t, per, tc.bound)
		})
	}
}
