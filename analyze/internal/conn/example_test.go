package conn_test

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/conn"
)

// Example deals 1,200 REPs without their REQ and one REQ to two parts
// of a capture: the REQ explains 100 messages, so the messages flood at
// the 1,125th (100 + 1,024 + 1), whichever part holds it.
func Example() {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var a, b conn.Log
	a.Add(1, t0)
	a.MarkGrew() // frame 1: a REQ with a new CommID
	for f := uint64(2); f <= 1200; f++ {
		l := &a
		if f%2 == 0 {
			l = &b
		}
		l.Add(f, t0.Add(time.Duration(f)*time.Millisecond))
	}
	e, ok := conn.FirstFlood(conn.Counts{}, []*conn.Log{&a, &b})
	fmt.Println(ok, e.Frame, e.Time.Sub(t0))
	// Output: true 1125 1.125s
}
