// Package nccl recognises NCCL's traffic in RDMA captures, exactly: the
// CTS a receiver writes into its sender's FIFO and the data the sender
// then writes to the buffer the CTS named, and from them the ranks, the
// connections and the rings of the job, and its collectives with their
// kind, size, bandwidth and straggler (docs/analysis.md, "Collectives
// (NCCL)").
//
// Use it as an observer of the analyzer: one Collector per Analyzer
// (per file, or per shard of a sharded run), given every decoded packet,
// then Combine the collectors into one Result:
//
//	col := nccl.NewCollector()
//	a := analyze.New(analyze.Options{Observer: func() func(*analyze.Packet) { return col.Add }})
//	for … { a.Feed(ci, linkType, frame) }
//	res := nccl.Combine(col) // nil: no NCCL traffic
//
// A CTS is a plain RDMA WRITE (no immediate) of nreqs FIFO entries
// (Layouts: one table of NCCL's entry layouts, DecodeCTS) to the FIFO
// slot of its idx; a data message is an RDMA WRITE WITH IMMEDIATE (0
// bytes included) whose RETH names the address and rkey of an earlier
// CTS entry, no longer than the entry offers, its immediate its length in
// either byte order. Writes that only look like CTS (entries that do not
// parse, or buffers no data is written to) are not NCCL: Combine returns
// nil unless a data message named a CTS entry.
//
// Files:
//   - layout.go: the FIFO entry layouts and the CTS decoder
//   - collector.go: the Collector, its bounded state and its matching
//   - mark.go: what the packet added last was (Collector.Last), for -P and -V
//   - result.go: the Result, Combine, and the rings
//   - collective.go: the collectives, their kind and their straggler
package nccl
