package cli

import (
	"sync"

	"github.com/gopacket/gopacket"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
)

// shardReader hands the frames of a source to n shards, each an Analyzer
// of its own: shard 0 is the reader's, which analyzes its frames where
// they were read, without a batch or another core's cache between; the
// others each have a goroutine fed batches (runShard). A pcap file is
// read in chunks (large sequential reads) that the shards read the frames
// from: a frame is not copied; a chunk is reused once the reader has
// moved on and every batch of its frames has been analyzed. The frames of
// a pcapng file are copied into the batches.
type shardReader struct {
	n          int
	pool       *chunkPool
	work, free []chan *batch
	cur        []*batch // the batch being filled for each shard
	a0         *analyze.Analyzer
	finish     func(s int, a *analyze.Analyzer)
	wg         sync.WaitGroup
	place      *placer
	num        uint64 // the frame being read: readSource gives every frame in order
	in         *chunk // the chunk the reader fills
	cr         *capture.Reader
	chunks     bool // cr is read in chunks
}

// newShardReader starts the shards; finish is called with each shard's
// Analyzer once it has been fed every frame of its shard.
func newShardReader(n int, opts analyze.Options, finish func(s int, a *analyze.Analyzer)) *shardReader {
	batches := batchesPerShard(n)
	sr := &shardReader{n: n, pool: newChunkPool(n*batches + 2), work: make([]chan *batch, n), free: make([]chan *batch, n),
		cur: make([]*batch, n), a0: analyze.New(opts), finish: finish, place: newPlacer(n)}
	for s := 1; s < n; s++ {
		sr.work[s] = make(chan *batch, batches)
		sr.free[s] = make(chan *batch, batches)
		for range batches {
			sr.free[s] <- &batch{frames: make([]batchFrame, 0, batchFrames)}
		}
		sr.wg.Add(1)
		go func() {
			defer sr.wg.Done()
			a := analyze.New(opts)
			runShard(a, sr.work[s], sr.free[s], sr.pool)
			finish(s, a)
		}()
		sr.cur[s] = <-sr.free[s]
	}
	return sr
}

// runShard feeds a the frames of the batches of work, and gives each
// batch back (free) once analyzed.
func runShard(a *analyze.Analyzer, work <-chan *batch, free chan<- *batch, pool *chunkPool) {
	for b := range work {
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
		free <- b
	}
}

// send hands shard s its batch and takes a free one.
func (sr *shardReader) send(s int) {
	sr.work[s] <- sr.cur[s]
	sr.cur[s] = <-sr.free[s]
}

// sendAll sends the batches that hold frames: before the reader moves on
// to another chunk or file.
func (sr *shardReader) sendAll() {
	for s := 1; s < sr.n; s++ {
		if len(sr.cur[s].frames) > 0 {
			sr.send(s)
		}
	}
}

// startFile is readSource's start: it reads a file in chunks when it can,
// and returns what to do after its last frame.
func (sr *shardReader) startFile(_ int, cr *capture.Reader) func() {
	sr.cr = cr
	sr.chunks = cr.ReadChunks(func() []byte {
		sr.sendAll() // the batches hold frames of the chunk in use only
		c := sr.pool.get(max(chunkSize, cr.ChunkMin()))
		if sr.in != nil {
			sr.pool.release(sr.in) // Next copies from it before anyone gets it again
		}
		sr.in = c
		return c.buf
	})
	return func() {
		sr.sendAll()
		if sr.in != nil {
			sr.pool.release(sr.in)
			sr.in = nil
		}
	}
}

// frame sends a frame to the shard of its host pair.
func (sr *shardReader) frame(f *frame) {
	sr.num++
	key := analyze.HostPairKey(f.linkType, f.data)
	s := sr.place.shard(key)
	if s == 0 {
		sr.a0.FeedShard(sr.num, key, f.ci, f.linkType, f.data)
		return
	}
	b := sr.cur[s]
	if len(b.frames) == batchFrames || !sr.chunks && len(b.buf)+len(f.data) > batchBytes && len(b.frames) > 0 {
		sr.send(s)
		b = sr.cur[s]
	}
	var off int
	if sr.chunks {
		if b.ch == nil {
			b.ch, b.src = sr.in, sr.in.buf
			sr.in.refs.Add(1)
		}
		off = sr.cr.ChunkPos() - len(f.data)
	} else {
		off = len(b.buf)
		b.buf = append(b.buf, f.data...)
	}
	b.frames = append(b.frames, batchFrame{n: sr.num, key: key, off: int64(off), length: f.ci.Length, caplen: int32(len(f.data)), lt: f.linkType})
	b.putTime(&b.frames[len(b.frames)-1], f.ci.Timestamp)
}

// close sends the last batches, finishes every shard and waits for them.
func (sr *shardReader) close() {
	for s := 1; s < sr.n; s++ {
		if len(sr.cur[s].frames) > 0 {
			sr.work[s] <- sr.cur[s]
		}
		close(sr.work[s])
	}
	sr.finish(0, sr.a0)
	sr.wg.Wait()
}
