package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

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
	a := analyze.New(r.options(src, multi))
	feed, start, done := r.exporter(index, src, a, tap)
	err := r.readSource(ctx, src, start, feed)
	res := fileResult{name: src.files[0], src: src, err: errors.Join(err, done())}
	if !multi && tap == nil && r.streams() {
		res.stream = a.FinishStream()
	} else {
		res.report = a.Finish()
	}
	return res
}

// analyzeSharded analyzes a source on n shards and combines them. When
// the shards created more flows than --max-flows, it runs them again
// tracking only the flows the sequential analysis tracks; when they are
// not disjoint (docs/parallel.md), the source is analyzed sequentially.
// Standard input cannot be read again: its combined report is then the
// shards' best, with a note on stderr.
func (r *runner) analyzeSharded(ctx context.Context, src *source, n int) fileResult {
	opts := r.options(src, false)
	opts.Shard = true
	res := r.shardPass(ctx, src, n, opts)
	var notPieces *notPiecesError
	if res.err != nil && ctx.Err() != nil || errors.As(res.err, &notPieces) {
		return res.fileResult // notPieces: the files are analyzed each on its own
	}
	var capErr *analyze.FlowCapError
	switch {
	case res.combineErr == nil:
	case src.files[0] == "-":
		fmt.Fprintf(r.stderr, "roce-dissect: %s: note: -j %d: the report may differ from -j 1's (%v)\n", src.name(), n, res.combineErr)
	case errors.As(res.combineErr, &capErr) && !errors.Is(res.combineErr, analyze.ErrNotDisjoint):
		opts.FlowFrameLimit, opts.ConnFrameLimit = capErr.Frame, capErr.ConnFrame
		res = shardResult{}
		runtime.GC() // the first pass's flows, before the second makes its own
		res = r.shardPass(ctx, src, n, opts)
		if res.combineErr != nil {
			return r.analyzeSequential(ctx, 0, src, false, nil)
		}
	default:
		return r.analyzeSequential(ctx, 0, src, false, nil)
	}
	return res.fileResult
}

// shardResult is a combined report and why it may not be exact.
type shardResult struct {
	fileResult
	combineErr error
	frames     []uint64 // per shard
}

// batchFrames and batchBytes bound a batch of frames sent to a shard.
const (
	batchFrames = 256
	batchBytes  = 1 << 18
)

// batchesPerShard is how many batches circulate between the reader and
// each of the n−1 shards it does not analyze itself: how far the reader
// may run ahead of the slowest. With 4, shards sharing a core stalled
// the reader at every turn of the scheduler (docs/parallel.md: -j 2 on
// the 1.1 GB mix, 4 shards, 0.705 s with 4 batches each, 0.65 with 8,
// 0.61 with 16, 0.64 with 24, 0.665 with 32, the chunks they hold then
// crowding the caches). Each batch may hold a 256 KiB chunk (pcap) or
// batchBytes of copied frames (pcapng), so the batches of all shards are
// bounded by maxBatches (12 MB), never fewer than 4 a shard.
func batchesPerShard(n int) int {
	return min(16, max(4, maxBatches/max(n-1, 1)))
}

// maxBatches bounds the batches in flight of all shards together (while
// each shard may have 4).
const maxBatches = 48

// batch is frames for one shard: slices of a chunk the file was read
// into (ch, its buffer src), or their bytes copied into buf (src is buf)
// when the file is not read in chunks (pcapng).
type batch struct {
	frames []batchFrame
	ch     *chunk
	buf    []byte
	src    []byte
	times  []time.Time // timestamps not in UTC (none from capture.Reader)
}

// chunk is a buffer a pcap file is read into (capture.Reader.ReadChunks)
// that shards read frames from: it goes back to the pool when the reader
// has moved on to the next chunk and no batch of its frames is left.
type chunk struct {
	buf  []byte
	refs atomic.Int32 // the reader's while it fills the chunk, and a batch's
}

// chunkSize is the size of a chunk, 256 KiB (or capture.Reader.ChunkMin
// when larger): the reader parses it while it is in its core's cache.
const chunkSize = 1 << 18

// batchFrame is one frame of a batch: what the Analyzer reads of its
// gopacket.CaptureInfo (not the pcapng interface index), its bytes at
// src[off:off+caplen]. It holds no pointer (a time.Time holds one), so
// that batches are not scanned by the garbage collector nor written
// through its write barrier.
type batchFrame struct {
	n, key uint64
	ns     int64 // the timestamp: UnixNano, or an index in times
	off    int64
	length int
	caplen int32
	lt     gplayers.LinkType
	tk     timeKind
}

// timeKind says how batchFrame.ns holds the timestamp.
type timeKind uint8

const (
	timeUTC   timeKind = iota // time.Unix(0, ns).UTC()
	timeZero                  // time.Time{} (a pcapng simple packet block)
	timeIndex                 // times[ns]
)

// putTime stores t in f.
func (b *batch) putTime(f *batchFrame, t time.Time) {
	switch {
	case t.IsZero():
		f.tk = timeZero
	case t.Location() == time.UTC && t.Unix() > minUnixNanoSec && t.Unix() < maxUnixNanoSec:
		f.ns = t.UnixNano()
	default:
		f.tk, f.ns = timeIndex, int64(len(b.times))
		b.times = append(b.times, t)
	}
}

// minUnixNanoSec and maxUnixNanoSec bound the seconds of a time whose
// UnixNano does not overflow, with a second to spare.
const (
	minUnixNanoSec = math.MinInt64/1_000_000_000 + 1
	maxUnixNanoSec = math.MaxInt64/1_000_000_000 - 1
)

// time returns the timestamp f holds.
func (b *batch) time(f *batchFrame) time.Time {
	switch f.tk {
	case timeZero:
		return time.Time{}
	case timeIndex:
		return b.times[f.ns]
	}
	return time.Unix(0, f.ns).UTC()
}

// shardPass reads the file once, sending each frame to the shard of its
// host pair, and combines the shards' reports. A pcap file is read in
// chunks (large sequential reads) that the shards read the frames from:
// a frame is not copied; a chunk is reused once the reader has moved on
// and every batch of its frames has been analyzed. The frames of a pcapng
// file are copied into the batches.
func (r *runner) shardPass(ctx context.Context, src *source, n int, opts analyze.Options) shardResult {
	// The shards share the caps of one source (analyze/shardcap.go): they
	// track no more flows and connections together than -j 1 does.
	opts.FlowBudget, opts.ConnectionBudget = analyze.NewFlowBudget(r.cfg.maxFlows), analyze.NewFlowBudget(r.cfg.maxConns)
	batches := batchesPerShard(n)
	pool := newChunkPool(n*batches + 2)
	work := make([]chan *batch, n)
	free := make([]chan *batch, n)
	reports := make([]*analyze.Report, n)
	streams := make([]*analyze.ReportStream, n) // r.streams(): the shards' reports written while built
	stream := r.streams()
	var wg sync.WaitGroup
	// Shard 0 is the reader's own: it analyzes its frames where they
	// were read, without a batch or another core's cache between. The
	// others each have a goroutine fed batches.
	a0 := analyze.New(opts)
	for s := 1; s < n; s++ {
		work[s] = make(chan *batch, batches)
		free[s] = make(chan *batch, batches)
		for range batches {
			free[s] <- &batch{frames: make([]batchFrame, 0, batchFrames)}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := analyze.New(opts)
			for b := range work[s] {
				src := b.src
				if src == nil {
					src = b.buf
				}
				for i := range b.frames {
					f := &b.frames[i]
					end := f.off + int64(f.caplen)
					ci := gopacket.CaptureInfo{Timestamp: b.time(f), CaptureLength: int(f.caplen), Length: f.length}
					a.FeedShard(f.n, f.key, ci, f.lt, src[f.off:end:end])
				}
				if b.ch != nil {
					pool.release(b.ch)
				}
				b.frames, b.buf, b.src, b.times, b.ch = b.frames[:0], b.buf[:0], nil, b.times[:0], nil
				free[s] <- b
			}
			if stream {
				streams[s] = a.FinishStream()
				return
			}
			reports[s] = a.Finish()
		}()
	}
	cur := make([]*batch, n)
	for s := 1; s < n; s++ {
		cur[s] = <-free[s]
	}
	send := func(s int) {
		work[s] <- cur[s]
		cur[s] = <-free[s]
	}
	var num uint64 // eachFrom gives every frame in order: this is its number
	place := newPlacer(n)
	var in *chunk // the chunk the reader fills
	var cr *capture.Reader
	var chunks bool
	// sendAll sends the batches that hold frames: before the reader
	// moves on to another chunk or file.
	sendAll := func() {
		for s := 1; s < n; s++ {
			if len(cur[s].frames) > 0 {
				send(s)
			}
		}
	}
	start := func(_ int, c *capture.Reader) func() {
		cr = c
		chunks = cr.ReadChunks(func() []byte {
			sendAll() // the batches hold frames of the chunk in use only
			c := pool.get(max(chunkSize, cr.ChunkMin()))
			if in != nil {
				pool.release(in) // Next copies from it before anyone gets it again
			}
			in = c
			return c.buf
		})
		return func() {
			sendAll()
			if in != nil {
				pool.release(in)
				in = nil
			}
		}
	}
	err := r.readSource(ctx, src, start, func(f *frame) {
		num++
		key := analyze.HostPairKey(f.linkType, f.data)
		s := place.shard(key)
		if s == 0 {
			a0.FeedShard(num, key, f.ci, f.linkType, f.data)
			return
		}
		b := cur[s]
		if len(b.frames) == batchFrames || !chunks && len(b.buf)+len(f.data) > batchBytes && len(b.frames) > 0 {
			send(s)
			b = cur[s]
		}
		var off int
		if chunks {
			if b.ch == nil {
				b.ch, b.src = in, in.buf
				in.refs.Add(1)
			}
			off = cr.ChunkPos() - len(f.data)
		} else {
			off = len(b.buf)
			b.buf = append(b.buf, f.data...)
		}
		b.frames = append(b.frames, batchFrame{n: num, key: key, off: int64(off), length: f.ci.Length, caplen: int32(len(f.data)), lt: f.linkType})
		b.putTime(&b.frames[len(b.frames)-1], f.ci.Timestamp)
	})
	for s := 1; s < n; s++ {
		if len(cur[s].frames) > 0 {
			work[s] <- cur[s]
		}
		close(work[s])
	}
	if stream {
		streams[0] = a0.FinishStream()
	} else {
		reports[0] = a0.Finish()
	}
	wg.Wait()
	if stream {
		frames := make([]uint64, n)
		for s, p := range streams {
			frames[s] = p.Head().Capture.Frames
		}
		cs, cerr := analyze.CombineShardStreams(streams, opts)
		if cerr == nil {
			return shardResult{fileResult{name: src.files[0], src: src, stream: cs, err: err}, nil, frames}
		}
		if ctx.Err() == nil {
			// The shards are run again or the source analyzed
			// sequentially (analyzeSharded): their reports would be
			// built only to be dropped.
			return shardResult{fileResult{name: src.files[0], src: src, err: err}, cerr, frames}
		}
		for s, p := range streams { // cancelled: the reports, as without streams
			reports[s] = p.Report()
		}
	}
	rep, cerr := analyze.CombineShards(reports, opts)
	if rep == nil { // not shard reports: cannot happen
		panic(cerr)
	}
	frames := make([]uint64, n)
	for s, p := range reports {
		frames[s] = p.Capture.Frames
	}
	return shardResult{fileResult{name: src.files[0], src: src, report: rep, err: err}, cerr, frames}
}

// placer assigns host pairs to shards: a host pair seen for the first
// time goes to the shard with the least work so far (the fewest host
// pairs on a tie), and stays there. A shard's work is its frames; shard
// 0, which the reader analyzes itself, has besides every frame's reading
// (readerShare of the frames of all shards, about what reading a frame
// costs against analyzing it), so that it takes fewer host pairs. Any
// assignment of whole host pairs gives the same report; this one
// balances the shards better than a hash modulo N when there are few
// host pairs. It depends only on the frames, so a second pass assigns
// them alike.
type placer struct {
	of     map[uint64]int32
	cache  [256]placed
	frames []uint64
	pairs  []int
	total  uint64
}

// maxPlaced is how many host pairs the placer places by the shards' work
// and remembers; later ones go to the shard their key's hash says, which
// spreads a great number of host pairs evenly without a map entry each
// (a million one-frame host pairs would cost 40 MB).
const maxPlaced = 1 << 16

// readerShare is the reading of a frame against its analysis, 1/4.
const readerShare = 4

type placed struct {
	key   uint64
	shard int32
}

// newPlacer returns a placer for n shards. Frames of no host pair (key
// 0: no state of theirs links them to others) go to shard 0, which the
// zero cache entry already says.
func newPlacer(n int) *placer {
	return &placer{of: map[uint64]int32{0: 0}, frames: make([]uint64, n), pairs: make([]int, n)}
}

// shard returns the shard of a frame of host pair key.
func (p *placer) shard(key uint64) int {
	p.total++
	c := &p.cache[key%uint64(len(p.cache))]
	if c.key != key {
		s, ok := p.of[key]
		switch {
		case ok:
		case len(p.of) > maxPlaced:
			s = int32(mix64(key) % uint64(len(p.frames)))
		default:
			for i := range p.frames {
				if w, ws := p.work(i), p.work(int(s)); w < ws || w == ws && p.pairs[i] < p.pairs[s] {
					s = int32(i)
				}
			}
			p.of[key] = s
			p.pairs[s]++
		}
		*c = placed{key, s}
	}
	p.frames[c.shard]++
	return int(c.shard)
}

// mix64 spreads the bits of a host-pair key (MurmurHash3's finalizer).
func mix64(k uint64) uint64 {
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	return k ^ k>>33
}

// work is shard i's work so far, in frames analyzed.
func (p *placer) work(i int) uint64 {
	if i == 0 {
		return p.frames[0] + p.total/readerShare
	}
	return p.frames[i]
}

// chunkPool keeps the chunks that no batch needs for reuse.
type chunkPool struct{ free chan *chunk }

// newChunkPool returns a pool that keeps up to n chunks.
func newChunkPool(n int) *chunkPool { return &chunkPool{free: make(chan *chunk, n)} }

// get returns a chunk of size bytes, with the reader's reference.
func (p *chunkPool) get(size int) *chunk {
	var c *chunk
	select {
	case c = <-p.free:
		if len(c.buf) != size {
			c = nil
		}
	default:
	}
	if c == nil {
		c = &chunk{buf: make([]byte, size)}
	}
	c.refs.Store(1)
	return c
}

// release drops a reference to c, and keeps c for reuse with the last.
func (p *chunkPool) release(c *chunk) {
	if c.refs.Add(-1) == 0 {
		select {
		case p.free <- c:
		default:
		}
	}
}
