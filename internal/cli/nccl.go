package cli

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/nccl"
	"github.com/roce-dissect/roce-dissect/points"
)

// ncclCollectors are the NCCL collectors of one source's analysis, one
// per Analyzer (per shard of a sharded run), made as the Analyzers are.
type ncclCollectors struct {
	mu sync.Mutex
	cs []*nccl.Collector
}

// observeNCCL sets o.Observer for the outputs that show NCCL's traffic
// (text, JSON and --export's collectives tables): each Analyzer made with
// o gets a collector of its own, which the returned set holds (nil for
// other outputs).
func (r *runner) observeNCCL(o *analyze.Options) *ncclCollectors {
	if r.cfg.output != "text" && r.cfg.output != "json" && r.cfg.export == "" {
		return nil
	}
	set := &ncclCollectors{}
	o.Observer = func() func(*analyze.Packet) {
		c := nccl.NewCollector()
		set.mu.Lock()
		set.cs = append(set.cs, c)
		set.mu.Unlock()
		return c.Add
	}
	return set
}

// keepLast keeps the collector made last, and drops the others': those
// of the shards of a source read again by one Analyzer
// (analyze.Sharded.Reread), whose report was dropped.
func (set *ncclCollectors) keepLast() {
	if set == nil {
		return
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	set.cs = set.cs[len(set.cs)-1:]
}

// ncclResult is NCCL's traffic in the results' analyses, their
// collectors combined (files of capture points, shards); nil for none.
// With pts (the results' files matched as capture points, in the same
// order), each file's times are put on the reference clock.
func ncclResult(results []fileResult, pts *points.Report) *nccl.Result {
	var cs []*nccl.Collector
	for i, res := range results {
		if res.nccl == nil {
			continue
		}
		for _, c := range res.nccl.cs {
			if pts != nil && len(pts.Files) == len(results) {
				c.SetClockOffset(time.Duration(pts.Files[i].ClockOffsetNs))
			}
		}
		cs = append(cs, res.nccl.cs...)
	}
	if len(cs) == 0 {
		return nil
	}
	return nccl.Combine(cs...)
}

// ncclMark says what the packet col took last is to NCCL (nccl.Mark), in
// the words -P and -V print: "NCCL CTS rank 2 idx 5 conn 2→0" or "NCCL
// data rank 0 idx 5 conn 0→1 (len 8192)", "?" for a rank not known; ""
// for none (col nil included).
func ncclMark(col *nccl.Collector) string {
	if col == nil {
		return ""
	}
	m := col.Last()
	rank := func(r int) string {
		if r < 0 {
			return "?"
		}
		return strconv.Itoa(r)
	}
	switch m.Kind {
	case nccl.MarkCTS:
		return fmt.Sprintf("NCCL CTS rank %s idx %d conn %s→%s", rank(m.Rank), m.Idx, rank(m.Rank), rank(m.ReceiverRank))
	case nccl.MarkData:
		return fmt.Sprintf("NCCL data rank %s idx %d conn %s→%s (len %d)", rank(m.Rank), m.Idx, rank(m.Rank), rank(m.ReceiverRank), m.Length)
	}
	return ""
}
