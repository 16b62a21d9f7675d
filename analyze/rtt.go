package analyze

import "github.com/roce-dissect/roce-dissect/analyze/internal/hist"

// rttHist is the histogram of a flow's RTTs (package hist).
type rttHist = hist.Hist

// rttSummary returns the RTT figures of h, nil without samples.
func rttSummary(h *rttHist) *RTT {
	if h == nil || h.N() == 0 {
		return nil
	}
	return &RTT{Samples: h.N(), MinNs: h.Min(), MedianNs: h.Median(), MaxNs: h.Max()}
}
