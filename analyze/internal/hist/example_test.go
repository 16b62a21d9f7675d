package hist_test

import (
	"fmt"

	"github.com/roce-dissect/roce-dissect/analyze/internal/hist"
)

// Example adds three round trips and merges a second part's one: the
// median, 14,000 ns, is given as the middle of its bucket (within 1/16).
func Example() {
	var h, part hist.Hist
	for _, ns := range []int64{12_000, 15_000, 90_000} {
		h.Add(ns)
	}
	part.Add(14_000)
	h.Merge(&part)
	fmt.Println(h.N(), h.Min(), h.Median(), h.Max())
	// Output: 4 12000 14080 90000
}
