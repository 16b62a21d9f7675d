package nic_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze/internal/nic"
)

// feedSteps feeds the stage the events data encodes, 4 bytes each: the
// event (a request of each order, a NAK, an RNR NAK, a CNP, a response
// latency, a CE mark), a PSN among 16, a step of time in µs that may go
// back (the capture's clock), and flags (duplicate, CE mark, captured,
// span). It returns the facts the events left.
func feedSteps(s *nic.Stage, f *nic.Flow, data []byte) []nic.Fact {
	var facts []nic.Fact
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i+4 <= len(data); i += 4 {
		op, psn, step, flags := data[i]%9, uint32(data[i+1]%16), int8(data[i+2]), data[i+3]
		t = t.Add(time.Duration(step) * time.Microsecond)
		switch op {
		case 0, 1, 2, 3:
			s.Request(f, nic.Request{T: t.UnixNano(), PSN: psn, Bytes: uint32(flags) * 64, Span: 1 + uint32(flags>>6), High: 15,
				Order: nic.Order(op), Dup: flags&1 != 0, CE: flags&2 != 0})
		case 4, 5:
			s.NAK(f, nic.NAK{T: t.UnixNano(), Frame: uint64(i), PSN: psn, RNR: op == 5, Timer: int64(flags) * 1000, Captured: flags&4 != 0})
		case 6:
			s.CNP(f, t, uint64(i))
		case 7:
			s.Response(f, int64(step)*1000)
		default:
			s.CE(f, t.UnixNano())
		}
		facts = append(facts, s.Facts()...)
	}
	return facts
}

// checkNIC requires every figure of o to be a summary of samples: at
// least one, no negative value, min ≤ median ≤ max.
func checkNIC(t *testing.T, o *nic.NIC) {
	for _, fg := range []*nic.Figure{o.NAKResendNs, o.TimeoutNs, o.RNRResendNs, o.CNPIntervalNs, o.ECNToCNPNs, o.ResponseLatencyNs,
		o.NAKResendSeenNs, o.RNRResendSeenNs, o.ECNToCNPSeenNs, o.RateBeforeCNPBps, o.RateAfterCNPBps} {
		if fg == nil {
			continue
		}
		require.Positive(t, fg.Samples)
		require.GreaterOrEqual(t, fg.Min, int64(0), "no negative duration or rate")
		require.LessOrEqual(t, fg.Min, fg.Median)
		require.LessOrEqual(t, fg.Median, fg.Max)
	}
}

// FuzzStage feeds arbitrary event sequences, as one flow and as two
// halves merged: no panic, no negative duration in a figure or a fact.
func FuzzStage(f *testing.F) {
	f.Add([]byte{0, 1, 1, 0, 0, 2, 1, 0, 4, 1, 5, 4, 3, 1, 3, 0, 3, 2, 1, 0})               // a NAK and its go-back-N resend
	f.Add([]byte{0, 1, 1, 255, 0, 2, 1, 255, 6, 0, 10, 0, 0, 3, 1, 255, 6, 0, 200, 0})      // CNPs, rates, the clock going back
	f.Add([]byte{0, 1, 1, 2, 5, 1, 1, 200, 3, 1, 1, 0, 8, 0, 1, 0, 6, 0, 3, 0, 7, 0, 9, 0}) // RNR, CE, response
	f.Fuzz(func(t *testing.T, data []byte) {
		var s nic.Stage
		var whole nic.Flow
		facts := feedSteps(&s, &whole, data)
		o, end := s.Report(&whole, nic.In{Requests: 3, ACKs: 1, ACKTimeout: 14}, nil)
		for _, x := range append(facts, end...) {
			require.GreaterOrEqual(t, x.Wait, int64(0), "fact %+v", x)
		}
		if o == nil {
			return
		}
		checkNIC(t, o)
		half := len(data) / 8 * 4
		var a, b nic.Flow
		feedSteps(&s, &a, data[:half])
		feedSteps(&s, &b, data[half:])
		pa, _ := s.Report(&a, nic.In{}, nil)
		pb, _ := s.Report(&b, nic.In{}, nil)
		if m := nic.Merge(pa, pb); m != nil {
			checkNIC(t, m)
		}
	})
}
