package nic

import (
	"slices"

	"github.com/roce-dissect/roce-dissect/analyze/internal/hist"
)

// Figure summarises samples: nanoseconds (_ns) or bits per second (_bps).
type Figure struct {
	Samples uint64 `json:"samples"`
	Min     int64  `json:"min"`
	Median  int64  `json:"median"`
	Max     int64  `json:"max"`
}

// The figures a flow keeps (NIC.stats, state.resp and events.stats).
const (
	figNAK = iota
	figTimeout
	figRNR
	figCNPInterval
	figECNToCNP
	figRateBefore
	figRateAfter
	figResponse
	figures
)

// exact is how many samples a figure keeps exactly (its median is exact
// up to that count; beyond it, within the histogram's 1/16).
const exact = 15

// stat is one figure's samples.
type stat struct {
	n        uint64
	min, max int64
	small    [exact]int64
	hist     *hist.Hist
}

func (s *stat) add(v int64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	if s.n < exact {
		s.small[s.n] = v
	} else {
		if s.hist == nil {
			s.hist = &hist.Hist{}
			for _, x := range s.small {
				s.hist.Add(x)
			}
		}
		s.hist.Add(v)
	}
	s.n++
}

func (s *stat) merge(o *stat) {
	if o.n == 0 {
		return
	}
	if o.n <= exact {
		for _, v := range o.small[:o.n] {
			s.add(v)
		}
		return
	}
	if s.hist == nil {
		s.hist = &hist.Hist{}
		for _, x := range s.small[:min(s.n, exact)] {
			s.hist.Add(x)
		}
	}
	s.hist.Merge(o.hist)
	if s.n == 0 || o.min < s.min {
		s.min = o.min
	}
	if s.n == 0 || o.max > s.max {
		s.max = o.max
	}
	s.n += o.n
}

func (s *stat) clone() stat {
	c := *s
	if s.hist != nil {
		h := s.hist.Clone()
		c.hist = &h
	}
	return c
}

// figure returns the summary; the median is the ((n+1)/2)-th smallest.
func (s *stat) figure() *Figure {
	if s == nil || s.n == 0 {
		return nil
	}
	f := &Figure{Samples: s.n, Min: s.min, Max: s.max}
	if s.n <= exact {
		v := s.small
		w := v[:s.n]
		slices.Sort(w)
		f.Median = w[(s.n+1)/2-1]
	} else {
		f.Median = s.hist.Median()
	}
	return f
}

// floor is the NIC's own minimum CNP interval: the smallest interval
// its CNPs show at least twice (within the histogram's 1/16), 0 when none.
func floor(s *stat) int64 {
	if s == nil || s.n < 2 {
		return 0
	}
	var h hist.Hist
	if s.hist != nil {
		h = *s.hist
	} else {
		for _, v := range s.small[:s.n] {
			h.Add(v)
		}
	}
	for b, c := range h.Dense() {
		if c >= 2 {
			return hist.Low(b)
		}
	}
	return 0
}
