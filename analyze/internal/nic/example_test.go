package nic_test

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/nic"
)

// Example follows a requester that sends PSNs 10 to 12, gets a NAK for
// PSN 11 (captured before it: the capture is at the requester) and
// resends 11 and 12 (go-back-N) 5 µs after the NAK.
func Example() {
	var s nic.Stage
	var f nic.Flow
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	us := int64(time.Microsecond)
	send := func(at int64, psn uint32, order nic.Order) {
		s.Request(&f, nic.Request{T: t0 + at, PSN: psn, Bytes: 1100, Span: 1, High: 12, Order: order})
	}
	send(0, 10, nic.InOrder)
	send(1*us, 11, nic.InOrder)
	send(2*us, 12, nic.InOrder)
	s.NAK(&f, nic.NAK{T: t0 + 10*us, Frame: 4, PSN: 11, Captured: true})
	send(15*us, 11, nic.Old)
	send(16*us, 12, nic.Old)
	fmt.Println("facts:", len(s.Facts()))

	part, facts := s.Report(&f, nic.In{Requests: 5, ACKs: 1}, nil)
	fmt.Println(part.CaptureSide, part.NAKResendNs.Samples, part.NAKResendNs.Median, part.GoBackNViolations, *part.RequestsPerACK, len(facts))
	// Output:
	// facts: 0
	// requester 1 5000 0 5 0
}
