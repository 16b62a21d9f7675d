package analyze

import (
	"testing"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestFlowAllocations bounds the allocations of a new flow: a one-packet
// flow (a SEND ONLY to each of many QPs, as TestIdleFlowMemory) allocates
// its state, its mix and its request awaiting an ACK; merged, its head
// log too, which holds its first request and message; with a series, its
// series holder and samples. A flow of a direction of its own (a source
// address of its own) allocates the direction, which lists its flow and
// QP in its inline arrays.
func TestFlowAllocations(t *testing.T) {
	only := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendOnly, PKey: 0xFFFF, AckReq: true}, gopacket.Payload(make([]byte, 64)))
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const perRun = 1000
	for _, tc := range []struct {
		name  string
		opts  Options
		hosts bool    // each flow from a source address of its own
		max   float64 // allocations per flow
	}{
		{"one file, no series", Options{NoICRC: true, NoSeries: true, NoMerge: true}, false, 3.1},
		{"merged", Options{NoICRC: true, NoSeries: true}, false, 4.1},
		{"series", Options{NoICRC: true, NoMerge: true}, false, 5.1},
		{"a direction each", Options{NoICRC: true, NoSeries: true, NoMerge: true}, true, 4.1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(tc.opts)
			qp := uint32(0x100)
			feed := func() {
				for range perRun {
					setQP(only, qp)
					setPSN(only, qp)
					if tc.hosts { // 10.x.y.z, the IPv4 source (the analyzer reads no IP checksum)
						only[26], only[27], only[28], only[29] = 10, byte(qp>>16), byte(qp>>8), byte(qp)
					}
					a.Feed(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(qp) * time.Microsecond), CaptureLength: len(only), Length: len(only)}, gplayers.LinkTypeEthernet, only)
					qp++
				}
			}
			per := testing.AllocsPerRun(20, feed) / perRun
			t.Logf("%.3f allocations a flow", per)
			assert.LessOrEqual(t, per, tc.max)
			require.Len(t, a.flowList, int(qp-0x100))
		})
	}
}

// TestHeadLogLists checks what a flow's report takes of its head log: the
// log's own grown lists when the flow is discarded, and otherwise, or
// while a list is still in the log's inline array (which would keep the
// log alive with the report), copies with the same
// entries.
func TestHeadLogLists(t *testing.T) {
	for _, tc := range []struct {
		name         string
		reqs, msgs   int
		move         bool
		ownHead, own bool // whether the report takes the log's own lists
	}{
		{"empty, discarded", 0, 0, true, false, false},
		{"inline, discarded", 2, 1, true, false, false},
		{"inline, kept", 1, 1, false, false, false},
		{"grown, discarded", 5, 3, true, true, true},
		{"grown, kept", 5, 3, false, false, false},
		{"requests grown, message inline, discarded", 3, 1, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := new(headLog)
			l.head, l.msgs = l.inHead[:0], l.inMsgs[:0]
			for i := range tc.reqs {
				l.head = append(l.head, headReq{psn: uint32(i + 1)})
			}
			for i := range tc.msgs {
				l.msgs = append(l.msgs, headMsg{from: uint32(i), to: uint32(i + 1), bytes: 8})
			}
			head, msgs := l.lists(tc.move)
			require.Len(t, head, tc.reqs)
			require.Len(t, msgs, tc.msgs)
			for i := range head {
				assert.Equal(t, l.head[i], head[i])
			}
			for i := range msgs {
				assert.Equal(t, l.msgs[i], msgs[i])
			}
			inLog := func(p, lo, hi unsafe.Pointer) bool { return uintptr(p) >= uintptr(lo) && uintptr(p) < uintptr(hi) }
			logStart, logEnd := unsafe.Pointer(l), unsafe.Add(unsafe.Pointer(l), unsafe.Sizeof(*l))
			if len(head) > 0 {
				assert.False(t, inLog(unsafe.Pointer(&head[0]), logStart, logEnd), "requests in the log's inline array")
				assert.Equal(t, tc.ownHead, &head[0] == &l.head[0], "the log's own requests")
			}
			if len(msgs) > 0 {
				assert.False(t, inLog(unsafe.Pointer(&msgs[0]), logStart, logEnd), "messages in the log's inline array")
				assert.Equal(t, tc.own, &msgs[0] == &l.msgs[0], "the log's own messages")
			}
		})
	}
}
