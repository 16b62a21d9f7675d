package cli

import (
	"context"
	"errors"
	"runtime"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
)

// jobs is the number of cores -j allows (default: all).
func (r *runner) jobs() int {
	if r.cfg.jobs > 0 {
		return r.cfg.jobs
	}
	return runtime.GOMAXPROCS(0)
}

// shardsPerCore is how many shards a core takes when the run may use
// every core: more shards than cores let the Go scheduler balance the
// cores' work as it goes, which the placer cannot do for host pairs
// whose traffic it has not seen yet (docs/parallel.md, "Scaling": on 2
// cores, 4 shards took 0.65× the time of -j 1 on a 1.1 GB capture, 2
// shards 0.80×). Each shard more costs memory on a capture of many flows
// (163,840 flows: 355 MB with 2 shards, 371 MB with 4, 419 MB with 8).
const shardsPerCore = 2

// shards returns how many shards -j n analyzes a file on: n when n
// cores are fewer than the machine's (each shard may then run at once
// on its own core, and no more: -j bounds the cores), else
// shardsPerCore per core.
func shards(n int) int {
	if procs := runtime.GOMAXPROCS(0); n >= procs {
		return max(n, shardsPerCore*procs)
	}
	return n
}

// analyzeFile analyzes one source (a file, or the pieces of one
// capture). A source analyzed alone on jobs ≥ 2 cores is sharded by host
// pair (docs/parallel.md): one reader, one Analyzer per core, the shards'
// reports combined into the sequential report. A file of several, or one
// whose packets something must see in file order (tap: capture points,
// the HTML report; --export's packets table), is read sequentially.
func (r *runner) analyzeFile(ctx context.Context, index int, src *source, multi bool, cpu chan struct{}, tap func(*analyze.Packet)) fileResult {
	// Standard input is read once: when the shards cannot be exact (a cap
	// reached, flows that are not disjoint) there is no second reading to
	// fall back to, so it stays sequential, as issue 14 asks.
	if n := r.jobs(); !multi && n >= 2 && tap == nil && r.cfg.export == "" && src.files[0] != "-" {
		return r.analyzeSharded(ctx, src, shards(n))
	}
	cpu <- struct{}{}
	defer func() { <-cpu }()
	return r.analyzeSequential(ctx, index, src, multi, tap)
}

// analyzeSequential analyzes a source with one Analyzer.
func (r *runner) analyzeSequential(ctx context.Context, index int, src *source, multi bool, tap func(*analyze.Packet)) fileResult {
	o := r.options(src, multi)
	o.OnMessage = r.traceMessages(index) // --trace
	cols := r.observeNCCL(&o)
	a := r.budget.New(o)
	feed, start, done := r.exporter(index, src, a, tap)
	err := r.readSource(ctx, src, start, feed)
	res := fileResult{name: src.files[0], src: src, err: errors.Join(err, done()), nccl: cols}
	if !multi && tap == nil && r.streams() {
		res.stream = a.FinishStream()
	} else {
		res.report = a.Finish()
	}
	return res
}

// analyzeSharded analyzes a source on n shards and combines them, in
// one pass whatever the caps (analyze.Sharded). When they are not
// disjoint (docs/parallel.md), Sharded reads the source again with one
// Analyzer (standard input, which cannot be read again, is never
// sharded: analyzeFile).
func (r *runner) analyzeSharded(ctx context.Context, src *source, n int) fileResult {
	return r.shardPass(ctx, src, n, r.options(src, false), true).fileResult
}

// shardResult is a combined report and why it may not be exact.
type shardResult struct {
	fileResult
	combineErr error
	frames     []uint64 // per shard
}

// shardPass reads the file once, sending each frame to the shard of its
// host pair, and combines the shards' reports. A pcap file is read in
// chunks (large sequential reads) that the shards read the frames from:
// a frame is not copied; a chunk is reused once the reader has moved on
// and every batch of its frames has been analyzed. The frames of a pcapng
// file are copied into the batches. With reread, the source is read again
// with one Analyzer when the shards cannot be combined exactly
// (analyze.Sharded.Reread); without, combineErr says why the report is
// the shards' best.
func (r *runner) shardPass(ctx context.Context, src *source, n int, opts analyze.Options, reread bool) shardResult {
	// The shards share the caps of one source (analyze/shardcap.go), which
	// NewSharded makes of MaxFlows and MaxConnections: they track no more
	// flows and connections together than -j 1 does.
	cols := r.observeNCCL(&opts) // one collector per shard: a shard sees both ends of its host pairs
	sh := analyze.NewSharded(opts, n)
	// The files of a merged source are read at once, their frames
	// interleaved: copied into the batches, not read in chunks.
	chunks := func(_ int, cr *capture.Reader) func() { return sh.ReadChunks(cr) }
	if src.merged {
		chunks = nil
	}
	err := r.readSource(ctx, src, chunks, func(f *frame) {
		sh.Feed(f.ci, f.linkType, f.data)
	})
	res := shardResult{fileResult: fileResult{name: src.files[0], src: src, err: err, nccl: cols}}
	var notPieces *notPiecesError // the files are analyzed each on its own
	if reread && ctx.Err() == nil && !errors.As(err, &notPieces) {
		sh.Reread(func(feed func(gopacket.CaptureInfo, gplayers.LinkType, []byte)) error {
			cols.keepLast() // the collector of the Analyzer reading again
			res.err = r.readSource(ctx, src, nil, func(f *frame) { feed(f.ci, f.linkType, f.data) })
			return res.err
		})
	}
	if r.streams() && ctx.Err() == nil {
		// When the shards' streams do not combine, the source is
		// analyzed again by one Analyzer (Reread): no report is built only
		// to be dropped.
		res.stream, res.combineErr = sh.FinishStream()
	} else {
		res.report, res.combineErr = sh.Finish()
	}
	if !errors.Is(res.combineErr, analyze.ErrNotDisjoint) {
		res.combineErr = nil // read again (or combined): an error reading is res.err
	}
	res.frames = sh.Frames()
	return res
}
