package analyze

import (
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/layers"
)

// TestOpenEndMessages: a message whose LAST was lost in the network, the
// next message beginning before the resend, is found incomplete when the
// next one begins and completed by the late LAST (as the responder, which
// NAKs and waits, completes it); the messages waiting so are bounded by
// maxOpenEnd, and those whose LAST the tap missed for good leave room for
// the messages whose LAST came with holes.
func TestOpenEndMessages(t *testing.T) {
	first := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendFirst, PKey: 0xFFFF}, gopacket.Payload(make([]byte, 256)))
	middle := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendMiddle, PKey: 0xFFFF}, gopacket.Payload(make([]byte, 256)))
	last := ibFrame(t, hostA, hostB, &layers.BTH{Opcode: layers.OpcodeRCSendLast, PKey: 0xFFFF, AckReq: true}, gopacket.Payload(make([]byte, 16)))
	type pkt struct {
		frame []byte
		psn   uint32
	}
	for _, tc := range []struct {
		name                        string
		pkts                        []pkt
		messages, incomplete        uint64
		bytes                       uint64
		incompleteFindings, openEnd int
	}{
		{"LAST lost and resent after the next message", []pkt{{first, 100}, {first, 102}, {last, 103}, {last, 101}},
			2, 0, 2 * 272, 1, 0},
		{"LAST and a MIDDLE lost, resent in order", []pkt{{first, 100}, {first, 103}, {last, 104}, {middle, 101}, {last, 102}},
			2, 0, 256 + 256 + 16 + 272, 1, 0},
		{"LAST lost, never resent", []pkt{{first, 100}, {first, 102}, {last, 103}},
			1, 1, 272, 1, 1},
		{"a MIDDLE resent, the LAST never", []pkt{{first, 100}, {first, 103}, {last, 104}, {middle, 101}},
			1, 1, 272, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(Options{NoICRC: true})
			ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			for i, p := range tc.pkts {
				b := append([]byte(nil), p.frame...)
				setQP(b, 0x100)
				setPSN(b, p.psn)
				a.Feed(gopacket.CaptureInfo{Timestamp: ts.Add(time.Duration(i) * time.Microsecond), CaptureLength: len(b), Length: len(b)}, gplayers.LinkTypeEthernet, b)
			}
			open := 0
			for _, pm := range a.flowList[0].reqMsg.pending() {
				if pm.openEnd {
					open++
				}
			}
			assert.Equal(t, tc.openEnd, open)
			rep := a.Finish()
			require.Len(t, rep.Flows, 1)
			m := rep.Flows[0].Messages
			assert.Equal(t, tc.messages, m.Count, "messages")
			assert.Equal(t, tc.bytes, m.Bytes, "message bytes")
			assert.Equal(t, tc.incomplete, m.Incomplete, "incomplete messages")
			n := 0
			for _, f := range rep.Findings {
				if f.Kind == KindIncomplete {
					n++
				}
			}
			assert.Equal(t, tc.incompleteFindings, n, "incomplete_message findings: one when the next message began, none at the end")
		})
	}

	t.Run("bounded", func(t *testing.T) {
		a := New(Options{NoICRC: true, MaxFindings: 1 << 20})
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		feed := func(frame []byte, psn uint32) {
			b := append([]byte(nil), frame...)
			setQP(b, 0x100)
			setPSN(b, psn)
			ts = ts.Add(time.Microsecond)
			a.Feed(gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(b), Length: len(b)}, gplayers.LinkTypeEthernet, b)
		}
		psn := uint32(1000)
		for range 4 * maxOpenEnd { // the tap misses every LAST
			feed(first, psn)
			psn += 2
		}
		feed(first, psn) // a message whose LAST comes with a hole
		feed(last, psn+2)
		feed(middle, psn+1) // fills it
		f := a.flowList[0]
		open := 0
		for _, pm := range f.reqMsg.pending() {
			if pm.openEnd {
				open++
			}
		}
		assert.Equal(t, maxOpenEnd, open)
		assert.Equal(t, uint64(1), f.msgs.count, "the message with a hole completed")
	})
}
