package toolcut_test

import (
	"fmt"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze/internal/toolcut"
)

// A capture tool cut RoCE v2 frames at 243 bytes and wrote original
// length = captured length (a real NCCL capture); their IPv4 total
// length says 4156. A 200-byte frame whose headers say more is not cut at
// that length: its length fields lie. A 300-byte frame captured whole
// shows that no tool cut the capture at 243 bytes.
func Example() {
	s := toolcut.New(toolcut.Config{})
	t := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	frames := []struct {
		capLen, declared int
	}{
		{100, 100},  // a frame captured whole
		{243, 4170}, // cut: the first, 243 becomes the cut length
		{243, 4170}, // cut at the same length
		{200, 4170}, // shorter than the cut length: a lie
		{300, 300},  // captured whole, longer than the cut length
		{243, 4170}, // after it, a lie
	}
	for i, f := range frames {
		// Ethernet 14 bytes before the IPv4 header: the packet is 14 bytes shorter.
		v := s.Frame(uint64(i+1), t.Add(time.Duration(i)*time.Microsecond), f.capLen, f.capLen, f.declared, f.declared-14)
		fmt.Println(i+1, v)
	}
	c := s.Facts()
	fmt.Printf("%d frames cut, the first %d at %d bytes; frame %d captured whole at %d bytes\n", c.Frames, c.First, c.Len, c.Broken, c.BrokenLen)
	// Output:
	// 1 whole
	// 2 cut
	// 3 cut
	// 4 lie
	// 5 whole
	// 6 lie
	// 2 frames cut, the first 2 at 243 bytes; frame 5 captured whole at 300 bytes
}
