package analyze

import (
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// slabCase is a TestSlab case: n values of T from one slab.
type slabCase struct {
	name string
	n    int
	run  func(t *testing.T, n int) (sizes []uintptr, elem uintptr)
}

// slabArrays takes n values from a slab of T, checks that each is zeroed
// and apart from the others, writes it, and returns the sizes of the
// arrays the slab allocated.
func slabArrays[T any](t *testing.T, n int, mark func(*T)) (sizes []uintptr, elem uintptr) {
	var s slab[T]
	var zero T
	seen := map[*T]bool{}
	for range n {
		before := s.bytes
		had := len(s.free)
		v := s.get()
		if had == 0 {
			sizes = append(sizes, uintptr(cap(s.free)+1)*unsafe.Sizeof(zero))
			require.GreaterOrEqual(t, s.bytes, before, "arrays never shrink")
		}
		require.False(t, seen[v], "a value handed out twice")
		seen[v] = true
		require.True(t, reflect.ValueOf(v).Elem().IsZero(), "a value handed out written")
		mark(v)
	}
	return sizes, unsafe.Sizeof(zero)
}

// TestSlab checks that a slab hands out distinct zeroed values from
// arrays that double from slabMin to slabMax bytes and never pass it
// (one value per array when a value is larger).
func TestSlab(t *testing.T) {
	type big struct{ b [slabMax + 8]byte }
	for _, tc := range []slabCase{
		{"responses", 2000, func(t *testing.T, n int) ([]uintptr, uintptr) {
			return slabArrays(t, n, func(r *Responses) { r.Packets, r.ACKs = 1, 2 })
		}},
		{"direction", 700, func(t *testing.T, n int) ([]uintptr, uintptr) {
			return slabArrays(t, n, func(d *hostDir) { d.inFlows[0] = 9 })
		}},
		{"head log", 3000, func(t *testing.T, n int) ([]uintptr, uintptr) {
			return slabArrays(t, n, func(l *headLog) { l.firstFrame = 3 })
		}},
		{"larger than slabMax", 3, func(t *testing.T, n int) ([]uintptr, uintptr) {
			return slabArrays(t, n, func(b *big) { b.b[0] = 1 })
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sizes, elem := tc.run(t, tc.n)
			require.NotEmpty(t, sizes)
			var total uintptr
			for i, sz := range sizes {
				total += sz / elem
				if elem > slabMax {
					assert.Equal(t, elem, sz, "array %d: one value", i)
					continue
				}
				assert.LessOrEqual(t, sz, uintptr(slabMax), "array %d", i)
				assert.Greater(t, sz+elem, min(uintptr(slabMin)<<i, slabMax), "array %d: doubles from slabMin", i)
			}
			assert.GreaterOrEqual(t, total, uintptr(tc.n))
			assert.Less(t, total-uintptr(tc.n), max(uintptr(slabMax)/elem, 1), "at most one array's spare values")
		})
	}
}

// TestFlowAllocations checks the allocations of a new flow: one-packet
// flows (a SEND ONLY to each of many QPs, as TestIdleFlowMemory) take
// their head log and series holder from the slabs, and the head log
// holds their first request and message; what is left is their state,
// their request awaiting an ACK, their share of the direction's QP map,
// and the series' samples. A flow of a direction of its own (a source
// address of its own) takes the direction from its slab, and lists its
// flow and QP in the direction's inline arrays. Before the slabs: 2, 5,
// 4 and 5 allocations a flow.
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
		{"one file, no series", Options{NoICRC: true, NoSeries: true, NoMerge: true}, false, 2.1},
		{"merged", Options{NoICRC: true, NoSeries: true}, false, 2.1},
		{"series", Options{NoICRC: true, NoMerge: true}, false, 3.1},
		{"a direction each", Options{NoICRC: true, NoSeries: true, NoMerge: true}, true, 2.1},
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
// log and its slab's array alive with the report), copies with the same
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
			var s slab[headLog]
			l := s.get()
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
