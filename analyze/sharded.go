package analyze

import (
	"errors"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"

	"github.com/roce-dissect/roce-dissect/capture"
)

// Sharded analyzes one capture on several cores: each frame goes to the
// shard of its host pair (HostPairKey, placed by the shards' work so
// far), a shard being an Analyzer of its own, and Finish combines the
// shards into the report one Analyzer fed every frame would have made.
// Shard 0 is the feeder's own, which analyzes its frames where they are
// fed, without a batch or another core's cache between; the others each
// run on a goroutine fed batches of frames.
//
// The shards share the caps of one Analyzer (budgets of
// Options.MaxFlows and MaxConnections), so that they hold no more flows
// and connections than it would; and which flows they hold are its: the
// frames in flight (handed to the other shards, not yet analyzed), with
// the one being fed, are never more than a budget has left, each taking
// at most one flow and one connection, so that none is refused while an
// earlier frame could still take it (checkBudgets). When a frame would
// break that, the shards are let run dry first; with few flows left
// (lockstepBelow), the feeder analyzes every frame
// itself, in capture order (its lockstep), until the budget is spent.
// A Sharded is fed from one goroutine.
//
// A pcap file can be read in chunks that the shards read the frames from
// (ReadChunks): a frame is then not copied, and a chunk is reused once
// every batch of its frames has been analyzed. Other frames are copied
// into the batches.
type Sharded struct {
	n          int
	opts       Options
	pool       *chunkPool
	work, free []chan *batch
	cur        []*batch // the batch being filled for each shard
	a          []*Analyzer
	wg         sync.WaitGroup
	place      *placer
	in         *chunk // the chunk being read
	cr         *capture.Reader
	chunks     bool // cr is read in chunks
	closed     bool
	batches    int          // per shard
	inflight   atomic.Int64 // frames handed to shards 1… and not yet analyzed
	spent      bool         // both budgets spent: no more to check
	stepped    uint64       // frames of shards 1… the feeder analyzed itself (checkBudgets)
	first      int          // the shard of the capture's first frame of a host pair (-1: none yet)
	// reread is Reread's read (nil: none).
	reread func(feed func(gopacket.CaptureInfo, gplayers.LinkType, []byte)) error
}

// NewSharded starts the n shards (n ≥ 1) of a capture's analysis with
// opts.
func NewSharded(opts Options, n int) *Sharded {
	n = max(n, 1)
	opts = opts.withDefaults()
	opts.shard = true
	opts.flowBudget, opts.connBudget = newFlowBudget(opts.MaxFlows), newFlowBudget(opts.MaxConnections)
	opts.shared = &shardShared{}
	batches := batchesPerShard(n)
	s := &Sharded{n: n, opts: opts, pool: newChunkPool(n*batches + 2), work: make([]chan *batch, n), free: make([]chan *batch, n),
		cur: make([]*batch, n), a: make([]*Analyzer, n), place: newPlacer(n), batches: batches,
		first: -1}
	s.a[0] = New(opts)
	for i := 1; i < n; i++ {
		s.work[i] = make(chan *batch, batches)
		s.free[i] = make(chan *batch, batches)
		for range batches {
			s.free[i] <- &batch{} // its frames made when first filled: a shard may get none
		}
		s.a[i] = New(opts)
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			runShard(s.a[i], s.work[i], s.free[i], s.pool, &s.inflight)
		}()
		s.cur[i] = <-s.free[i]
	}
	return s
}

// runShard feeds a the frames of the batches of work, and gives each
// batch back (free) once analyzed, its frames no longer in flight.
func runShard(a *Analyzer, work <-chan *batch, free chan<- *batch, pool *chunkPool, inflight *atomic.Int64) {
	ahead := make([][]byte, 0, prefetchMax)
	for b := range work {
		src := b.src
		if src == nil {
			src = b.buf
		}
		for i := range b.frames {
			f := &b.frames[i]
			if i%prefetchMax == 0 && a.Prefetches() {
				a.Prefetch(f.lt, b.ahead(src, i, ahead[:0]))
			}
			end := f.off + int64(f.caplen)
			ci := gopacket.CaptureInfo{Timestamp: b.time(f), CaptureLength: int(f.caplen), Length: f.length}
			a.feedShard(f.n, f.key, ci, f.lt, src[f.off:end:end])
		}
		if b.ch != nil {
			pool.release(b.ch)
		}
		inflight.Add(-int64(len(b.frames)))
		b.frames, b.buf, b.src, b.times, b.ch = b.frames[:0], b.buf[:0], nil, b.times[:0], nil
		free <- b
	}
}

// send hands shard s its batch and takes a free one.
func (s *Sharded) send(i int) {
	s.work[i] <- s.cur[i]
	s.cur[i] = <-s.free[i]
}

// sendAll sends the batches that hold frames: before the reader moves on
// to another chunk or file.
func (s *Sharded) sendAll() {
	for i := 1; i < s.n; i++ {
		if len(s.cur[i].frames) > 0 {
			s.send(i)
		}
	}
}

// ReadChunks has cr read in chunks that the shards read the frames Feed
// is given from cr's Next, without copying them (capture.Reader.ReadChunks;
// a no-op when cr cannot be read so). Call done after cr's last frame,
// before another reader's frames; Finish calls it for the last reader.
func (s *Sharded) ReadChunks(cr *capture.Reader) (done func()) {
	s.cr = cr
	s.chunks = cr.ReadChunks(func() []byte {
		s.sendAll() // the batches hold frames of the chunk in use only
		c := s.pool.get(max(chunkSize, cr.ChunkMin()))
		if s.in != nil {
			s.pool.release(s.in) // Next copies from it before anyone gets it again
		}
		s.in = c
		return c.buf
	})
	return s.doneChunks
}

// doneChunks ends the reading of s.cr in chunks: the batches that hold
// its frames are sent, its last chunk released (nothing when none).
func (s *Sharded) doneChunks() {
	if s.cr == nil {
		return
	}
	s.sendAll()
	if s.in != nil {
		s.pool.release(s.in)
		s.in = nil
	}
	s.cr, s.chunks = nil, false
}

// Feed gives the next frame of the capture to the shard of its host
// pair. data must stay unchanged until the next call (ReadChunks: until
// the shards are done with its chunk, which they see to). Feed after
// Finish or Close panics.
func (s *Sharded) Feed(ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte) {
	if s.closed {
		panic("analyze: Sharded.Feed after Finish or Close")
	}
	key := keyReader{roce: s.opts.RoCEPorts}.key(linkType, data)
	i := s.place.shard(key)
	num := s.place.total // the frame's number
	// A frame of no host pair (key 0: ARP, LLDP, PAUSE, a frame too short
	// for its addresses) holds no CM state: it goes to shard 0 and leaves
	// the CM log alone, else a stray ARP frame in a REQ flood of one host
	// pair would have the other shard log every message, up to the log's
	// overflow and a second, sequential pass (TestShardedFloodLog).
	if key != 0 && s.first != i && s.opts.shared.logFrom.Load() == 0 {
		if s.first < 0 {
			s.first = i
		} else {
			s.opts.shared.logFrom.Store(num) // before any shard analyzes the frame
		}
	}
	// Every frame is checked, shard 0's too: it may take a flow an
	// earlier frame in flight would have taken.
	stepped := !s.spent && s.n > 1 && s.checkBudgets()
	if i == 0 || stepped {
		if i != 0 {
			s.stepped++
		}
		s.a[i].feedShard(num, key, ci, linkType, data)
		return
	}
	b := s.cur[i]
	if len(b.frames) == batchFrames || !s.chunks && len(b.buf)+len(data) > batchBytes && len(b.frames) > 0 {
		s.send(i)
		b = s.cur[i]
	}
	var off int
	if s.chunks {
		if b.ch == nil {
			b.ch, b.src = s.in, s.in.buf
			s.in.refs.Add(1)
		}
		off = s.cr.ChunkPos() - len(data)
	} else {
		off = len(b.buf)
		b.buf = append(b.buf, data...)
	}
	if b.frames == nil {
		b.frames = make([]batchFrame, 0, batchFrames)
	}
	s.inflight.Add(1)
	b.frames = append(b.frames, batchFrame{n: num, key: key, off: int64(off), length: ci.Length, caplen: int32(len(data)), lt: linkType})
	b.putTime(&b.frames[len(b.frames)-1], ci.Timestamp)
}

// checkBudgets keeps the frames in flight, with the one being fed, no
// more than the flows (connections) left in the budgets not yet spent:
// it lets the shards run dry when the frame would make them more. It reports
// whether the feeder must analyze the frame itself, in capture order
// (no more left than lockstepBelow: its lockstep). A spent budget only refuses, whatever
// the order of the frames: once both are, there is no more to check.
func (s *Sharded) checkBudgets() bool {
	left := int64(math.MaxInt64)
	for _, b := range [2]*flowBudget{s.opts.flowBudget, s.opts.connBudget} {
		if r := b.remaining(); r > 0 {
			left = min(left, r)
		}
	}
	switch {
	case left == math.MaxInt64:
		s.spent = true
		return false
	case left > lockstepBelow && s.inflight.Load() < left: // with this frame, no more than left
		return false
	}
	s.drain() // nothing to wait for once in lockstep
	return left <= lockstepBelow
}

// lockstepBelow: with no more flows (connections) left than four
// batches' frames, the feeder analyzes every frame itself, in capture
// order, rather than let the shards run dry every few frames (near a cap
// that a capture never reaches, 2 shards took 3.2× the time of one
// Analyzer with a drain every other frame: BenchmarkShardedNearCap).
const lockstepBelow = 4 * batchFrames

// drain sends the batches that hold frames and waits until every shard
// has analyzed them: the feeder may then feed the shards' Analyzers
// itself (their goroutines wait for the next batch).
func (s *Sharded) drain() {
	s.sendAll()
	if s.inflight.Load() == 0 { // analyzed already (the atomic orders their analysis before)
		return
	}
	for i := 1; i < s.n; i++ {
		idle := make([]*batch, 0, s.batches-1) // cur is the other
		for range s.batches - 1 {
			idle = append(idle, <-s.free[i])
		}
		for _, b := range idle {
			s.free[i] <- b
		}
	}
}

// Frames returns how many frames each shard was given.
func (s *Sharded) Frames() []uint64 { return slices.Clone(s.place.frames) }

// ErrFinished is the answer of Finish and FinishStream to a Sharded
// already finished or closed.
var ErrFinished = errors.New("analyze: Sharded already finished or closed")

// Close stops the shards without a report, for a caller that gives up
// (an error reading the capture): their goroutines end. After Finish it
// does nothing.
func (s *Sharded) Close() { s.close() }

// close sends the last batches and waits for every shard to analyze them.
func (s *Sharded) close() {
	if s.closed {
		return
	}
	s.closed = true
	s.doneChunks()
	for i := 1; i < s.n; i++ {
		if len(s.cur[i].frames) > 0 {
			s.work[i] <- s.cur[i]
		}
		close(s.work[i])
	}
	s.wg.Wait()
}

// Reread gives Finish and FinishStream a way to read the capture again:
// read feeds feed every frame of the capture, in order, as Feed was fed
// them, and returns what stopped it short (nil at the capture's end).
// When the shards' reports cannot be combined into exactly the report of
// one Analyzer fed every frame (their host pairs shared state the
// sequential analysis joins: a CommID, say, used between two host
// pairs), Finish analyzes the capture again with one Analyzer fed by
// read, and returns its report and read's error. Options.Observer is
// called once more then, for that Analyzer, before read is called: the
// shards' observers saw the frames of a report that was dropped. Without
// Reread (a capture that cannot be read twice, such as standard input)
// Finish returns the shards' best and ErrNotDisjoint.
func (s *Sharded) Reread(read func(feed func(ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte)) error) {
	s.reread = read
}

// Finish waits for the shards and combines their reports: the report one
// Analyzer fed every frame would have made, in one pass whatever the
// caps. When the shards cannot be combined exactly, the capture is
// analyzed again with one Analyzer (Reread); without Reread the report is
// the shards' best, and the error ErrNotDisjoint. A second Finish (or
// FinishStream) returns ErrFinished.
func (s *Sharded) Finish() (*Report, error) {
	if s.closed {
		return nil, ErrFinished
	}
	s.close()
	parts := make([]*Report, s.n)
	var wg sync.WaitGroup
	for i, a := range s.a { // the shards' reports, on as many cores
		wg.Go(func() { parts[i] = a.Finish() })
	}
	wg.Wait()
	rep, err := combineShards(parts, s.opts)
	if err == nil || s.reread == nil {
		return rep, err
	}
	a, err := s.again()
	return a.Finish(), err
}

// FinishStream is Finish for a report written while it is built. When
// the shards cannot be combined exactly and there is no Reread, it
// returns the error and no stream.
func (s *Sharded) FinishStream() (*ReportStream, error) {
	if s.closed {
		return nil, ErrFinished
	}
	s.close()
	parts := make([]*ReportStream, s.n)
	for i, a := range s.a {
		parts[i] = a.FinishStream()
	}
	st, err := combineShardStreams(parts, s.opts)
	if err == nil || s.reread == nil {
		return st, err
	}
	a, err := s.again()
	return a.FinishStream(), err
}

// again analyzes the capture again with one Analyzer, fed by Reread's
// read, and returns the Analyzer and read's error.
func (s *Sharded) again() (*Analyzer, error) {
	s.a = nil // the shards' Analyzers, done with
	o := s.opts
	o.shard, o.flowBudget, o.connBudget, o.shared = false, nil, nil, nil
	a := New(o)
	err := s.reread(func(ci gopacket.CaptureInfo, linkType gplayers.LinkType, data []byte) {
		a.Feed(ci, linkType, data)
	})
	return a, err
}
