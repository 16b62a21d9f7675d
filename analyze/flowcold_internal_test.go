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

// maxIdleFlowBytes is the documented bound on the analyzer state of an
// idle flow, one with a single packet (docs/robustness.md, "Scale").
const maxIdleFlowBytes = 400

// idleFlowBytes feeds n one-packet flows (a SEND ONLY to each of n QPs)
// with opts and returns the heap the analyzer holds per flow.
func idleFlowBytes(t testing.TB, n int, opts Options) int64 {
	only := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, AckReq: true}, gopacket.Payload(make([]byte, 64)))
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a := New(opts)
	for i := range n {
		setQP(only, uint32(0x100+i))
		setPSN(only, uint32(i))
		a.Feed(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(only), Length: len(only)}, gplayers.LinkTypeEthernet, only)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Len(t, a.flowList, n)
	runtime.KeepAlive(a)
	return (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(n)
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
		name string
		opts Options
	}{
		{"no series (text, CSV)", Options{NoICRC: true, NoSeries: true}},
		{"series (JSON, --plot, --html)", Options{NoICRC: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			per := idleFlowBytes(t, n, tc.opts)
			t.Logf("%d one-packet flows: %d bytes each", n, per)
			assert.LessOrEqual(t, per, int64(maxIdleFlowBytes))
		})
	}
}
