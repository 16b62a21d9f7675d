// Package hist is the histogram of the analyzer's times (RTTs, NIC
// times): add samples, read their count, minimum, median and maximum,
// merge the histograms of several parts exactly.
//
//	var h hist.Hist
//	h.Add(12_000) // ns
//	h.Add(15_000)
//	fmt.Println(h.N(), h.Min(), h.Median(), h.Max())
//
// The median is known within 1/16 (log-linear buckets, 16 per power of
// two); memory grows with the buckets the samples use, at most 4 KiB.
package hist
