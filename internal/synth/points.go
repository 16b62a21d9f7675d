package synth

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/roce-dissect/roce-dissect/internal/wrap"
)

// Point is one capture point of a multi-point scenario (WritePoints).
// Points are ordered along the path from the requester (Points[0], the
// tap nearest it) to the responder.
type Point struct {
	// Name is the point's file name (used as the file name in the truth).
	Name string
	// ClockOffset is how far the point's clock runs ahead of true time.
	ClockOffset time.Duration
	// Delay is the one-way delay of the hop from the previous point to
	// this one (ignored for Points[0]); Jitter adds a uniform [0, Jitter)
	// per packet on that hop. Each hop keeps packet order (FIFO).
	Delay, Jitter time.Duration
	// TapDrop: this point's capture misses the first transmission of the
	// request packets with these PSNs (they are still delivered, and
	// acknowledged).
	TapDrop []PSNRef
	// TTLDec is how much the hop into this point decrements the IPv4 TTL
	// or IPv6 hop limit (RoCE v2).
	TTLDec int
	// Wrap wraps the point's frames as a switch mirror or an overlay
	// delivers them to its capture (outermost first): a switch's ERSPAN
	// session as one point, a host's own capture as another.
	Wrap wrap.Chain
	// ECN: the hop into this point marks the first transmission of the
	// request packets with these PSNs Congestion Experienced (IP ECN 3;
	// the ICRC does not cover it), and the points after it see the mark
	// too (ignored for Points[0]; RoCE v2 only). The responder answers
	// with no CNP: the marks show where the network added them.
	ECN []PSNRef
}

// PointsConfig is a scenario seen at several capture points. The base
// Config's NAK list names the request packets lost between points: their
// first transmission reaches the points before LossHop (1…len(Points)-1)
// and no further; those also in Corrupt reach them with a flipped payload
// bit (bad ICRC) instead. Base.Drop must be empty (use Point.TapDrop).
type PointsConfig struct {
	Base    Config
	Points  []Point
	LossHop int
	Corrupt []PSNRef
}

// PointsTruth is the truth of a multi-point scenario, with the figures of
// roce-dissect's points report (docs/json.md, "points").
type PointsTruth struct {
	Files []PointFileTruth `json:"files"`
	Links []PointLinkTruth `json:"links"`
	// Stream is the truth of the traffic as one stream (the base capture
	// at Points[0], before the tap drops): a combined report counting each
	// transmission once shows its retransmissions and no more.
	Stream *Truth `json:"stream"`
}

// PointFileTruth is a point's clock.
type PointFileTruth struct {
	File          string `json:"file"`
	ClockOffsetNs int64  `json:"clock_offset_ns"`
	// ResolutionNs is the timestamp resolution of the file (1000 for µs
	// pcap).
	ResolutionNs int64 `json:"resolution_ns"`
	// JitterNs is the largest jitter between this point and Points[0].
	JitterNs int64 `json:"jitter_ns"`
	// Encapsulation is what Point.Wrap put around its frames.
	Encapsulation *wrap.Truth `json:"encapsulation,omitempty"`
}

// PointLinkTruth is one flow between consecutive points, upstream first.
type PointLinkTruth struct {
	Src           string   `json:"src"`
	Dst           string   `json:"dst"`
	DestQP        uint32   `json:"dest_qp"`
	From          string   `json:"from"`
	To            string   `json:"to"`
	Matched       int      `json:"matched"`
	Lost          int      `json:"lost"`
	LostPSNs      []uint32 `json:"lost_psns"`
	NotCaptured   int      `json:"not_captured"`
	Corrupted     int      `json:"corrupted"`
	CorruptedPSNs []uint32 `json:"corrupted_psns"`
	Reordered     int      `json:"reordered"`
	// ECNCEAdded counts the transmissions the hop marked CE (Point.ECN):
	// seen at both points, CE-marked at To and not at From.
	ECNCEAdded int `json:"ecn_ce_added"`
	// OneWayDelayNs: true delays (To minus From, true time), nearest rank.
	OneWayDelayNs struct {
		Min    int64 `json:"min"`
		Median int64 `json:"median"`
		P99    int64 `json:"p99"`
		Max    int64 `json:"max"`
	} `json:"one_way_delay_ns"`
}

// ptFrame is one generated frame (one transmission).
type ptFrame struct {
	info FrameInfo
	data []byte
	orig int
	fwd  bool // requester → responder
}

// ptSight is a transmission at one point.
type ptSight struct {
	k    int   // transmission
	t    int64 // true time, ns from StartTime
	data []byte
}

// WritePoints generates pc and writes each point's capture to outs[i]
// (same format as pc.Base). It returns the truth.
func WritePoints(pc PointsConfig, outs []io.Writer) (*PointsTruth, error) {
	base, err := pc.check(len(outs))
	if err != nil {
		return nil, err
	}
	frames, stream, err := pointFrames(base)
	if err != nil {
		return nil, err
	}
	r := newPointsRun(pc, base, frames, stream)
	sights := r.propagate()
	tr := &PointsTruth{Stream: stream}
	if tr.Files, err = r.writeFiles(sights, outs); err != nil {
		return nil, err
	}
	tr.Links = pointLinks(r, sights)
	return tr, nil
}

// check checks pc for outputs outputs, sets the default LossHop and
// returns the normalized base configuration.
func (pc *PointsConfig) check(outputs int) (Config, error) {
	n := len(pc.Points)
	if n < 2 || n != outputs {
		return Config{}, fmt.Errorf("synth: %w: %d points, %d outputs (want two or more, one output each)", ErrConfig, n, outputs)
	}
	base := pc.Base
	if err := base.normalize(); err != nil {
		return Config{}, err
	}
	if len(base.Drop) > 0 || base.Scenario == ScenarioMix || base.Encap.Native() || base.Pause.any() || len(base.Wrap) > 0 {
		return Config{}, fmt.Errorf("synth: %w: points need a single-connection scenario over Ethernet, without --drop, pause frames or --wrap", ErrConfig)
	}
	for _, p := range pc.Points {
		if err := checkPointWrap(base, p); err != nil {
			return Config{}, err
		}
		if len(p.ECN) > 0 && !base.Encap.RoCEv2() {
			return Config{}, fmt.Errorf("synth: %w: point %s marks ECN CE, which RoCE v2 carries only", ErrConfig, p.Name)
		}
	}
	if pc.LossHop <= 0 {
		pc.LossHop = 1
	}
	if pc.LossHop >= n {
		return Config{}, fmt.Errorf("synth: %w: loss hop %d of %d points", ErrConfig, pc.LossHop, n)
	}
	return base, nil
}

// pointFrames generates base without writing it and returns every frame
// (a copy of its bytes) and the truth.
func pointFrames(base Config) ([]ptFrame, *Truth, error) {
	var frames []ptFrame
	base.OnFrame = func(fi *FrameInfo) {
		f := ptFrame{info: *fi, data: bytes.Clone(fi.Data), orig: fi.Length}
		f.info.Data = nil
		frames = append(frames, f)
	}
	stream, err := Generate(base, io.Discard, nil)
	if err != nil {
		return nil, nil, err
	}
	if len(frames) == 0 {
		return nil, nil, fmt.Errorf("synth: %w: no frames", ErrConfig)
	}
	return frames, stream, nil
}

// pointsRun is a multi-point scenario being written: the generated
// frames and the impairments resolved to PSNs.
type pointsRun struct {
	pc     PointsConfig
	base   Config
	frames []ptFrame
	// firstReq holds the first transmissions of request PSNs from the
	// requester, the ones the impairments apply to.
	firstReq     map[int]bool
	nak, corrupt map[uint32]bool
	drops        []map[uint32]bool // by point: TapDrop
	marks        []map[uint32]bool // by point: ECN
}

// newPointsRun resolves the impairments of pc against the requester's
// starting PSN and marks the frames' direction (ptFrame.fwd).
func newPointsRun(pc PointsConfig, base Config, frames []ptFrame, stream *Truth) *pointsRun {
	r := &pointsRun{pc: pc, base: base, frames: frames}
	start := requestStart(frames, stream)
	resolve := func(l []PSNRef) map[uint32]bool {
		m := map[uint32]bool{}
		for _, ref := range l {
			m[ref.resolve(start)] = true
		}
		return m
	}
	r.nak, r.corrupt = resolve(base.NAK), resolve(pc.Corrupt)
	r.drops = make([]map[uint32]bool, len(pc.Points))
	r.marks = make([]map[uint32]bool, len(pc.Points))
	for i, p := range pc.Points {
		r.drops[i], r.marks[i] = resolve(p.TapDrop), resolve(p.ECN)
	}
	r.firstReq = markFirstRequests(frames)
	return r
}

// isDataRequest reports whether f is a request of the data connection
// from requester.
func isDataRequest(f *ptFrame, requester string) bool {
	return f.info.Src == requester && f.info.Opcode.IsRequest() && f.info.CM == ""
}

// requestStart returns the requester's starting PSN: the truth's send
// PSN, else the PSN of its first data request.
func requestStart(frames []ptFrame, stream *Truth) uint32 {
	if len(stream.Connections) > 0 && stream.Connections[0].Requester.SendPSN != nil {
		return *stream.Connections[0].Requester.SendPSN
	}
	requester := frames[0].info.Src
	for k := range frames {
		if isDataRequest(&frames[k], requester) {
			return frames[k].info.PSN
		}
	}
	return 0
}

// markFirstRequests sets each frame's direction (the first frame's
// source is the requester) and returns the first transmissions of the
// request PSNs.
func markFirstRequests(frames []ptFrame) map[int]bool {
	requester := frames[0].info.Src
	firstReq := map[int]bool{}
	seenReq := map[uint32]bool{}
	for k := range frames {
		f := &frames[k]
		f.fwd = f.info.Src == requester
		if f.fwd && isDataRequest(f, requester) && !seenReq[f.info.PSN] {
			seenReq[f.info.PSN] = true
			firstReq[k] = true
		}
	}
	return firstReq
}

// pointClock times the transmissions at the points: each hop adds its
// delay and jitter and keeps the packet order of each direction.
type pointClock struct {
	points            []Point
	rng               *rand.Rand
	cum               []int64 // path delay to point i, without jitter
	lastFwd, lastBack []int64 // last time at point i, by direction
	at                []int64 // the times of the transmission timed last
	// shift delays the transmissions after a NAK (both directions: what
	// follows answers it) by the time the NAK took to reach the
	// requester's tap (Points[0]) beyond the generator's time: a resend
	// answers a NAK that has arrived.
	shift int64
}

// newPointClock returns the clock of points, jitter drawn from seed.
func newPointClock(points []Point, seed uint64) *pointClock {
	n := len(points)
	c := &pointClock{points: points, rng: rand.New(rand.NewPCG(seed, 0x706f696e74)),
		cum: make([]int64, n), lastFwd: make([]int64, n), lastBack: make([]int64, n), at: make([]int64, n)}
	for i := 1; i < n; i++ {
		c.cum[i] = c.cum[i-1] + int64(points[i].Delay)
	}
	for i := range c.lastFwd {
		c.lastFwd[i], c.lastBack[i] = math.MinInt64, math.MinInt64
	}
	return c
}

// hop returns the delay of the hop into point h, jitter drawn.
func (c *pointClock) hop(h int) int64 {
	d := int64(c.points[h].Delay)
	if j := int64(c.points[h].Jitter); j > 0 {
		d += c.rng.Int64N(j)
	}
	return d
}

// times returns the true times at each point of a transmission the
// generator wrote at t0 (valid until the next call).
func (c *pointClock) times(fwd, nak bool, t0 int64) []int64 {
	n, at := len(c.points), c.at
	if fwd {
		at[0] = max(t0+c.shift, c.lastFwd[0]+1)
		for i := 1; i < n; i++ {
			at[i] = max(at[i-1]+c.hop(i), c.lastFwd[i]+1)
		}
		copy(c.lastFwd, at)
		return at
	}
	// The responder's packets leave the last point a full path delay
	// after the generator's time (causality: it answers what reached it)
	// and travel back.
	t0 += c.shift
	at[n-1] = max(t0+c.cum[n-1], c.lastBack[n-1]+1)
	for i := n - 2; i >= 0; i-- {
		at[i] = max(at[i+1]+c.hop(i+1), c.lastBack[i]+1)
	}
	copy(c.lastBack, at)
	if nak {
		c.shift += at[0] - t0
	}
	return at
}

// propagate returns what each point captures, in generation order.
func (r *pointsRun) propagate() [][]ptSight {
	n := len(r.pc.Points)
	clock := newPointClock(r.pc.Points, r.base.Seed)
	sights := make([][]ptSight, n)
	for k := range r.frames {
		f := &r.frames[k]
		nak := !f.fwd && f.info.Syndrome&0x60 != 0 && f.info.Syndrome&0x60 != 0x40 // an RNR NAK (0x20) or a NAK (0x60)
		at := clock.times(f.fwd, nak, f.info.Timestamp.Sub(StartTime).Nanoseconds())
		lostFrom, corruptFrom := r.lossFrom(k)
		markFrom := r.markFrom(k)
		for i := range n {
			if (f.fwd && i >= lostFrom) || (r.firstReq[k] && r.drops[i][f.info.PSN]) {
				continue
			}
			sights[i] = append(sights[i], ptSight{k: k, t: at[i], data: r.dataAt(f, i, corruptFrom, i >= markFrom)})
		}
	}
	return sights
}

// lossFrom returns the first point transmission k does not reach and the
// first it reaches corrupted (len(Points) for none).
func (r *pointsRun) lossFrom(k int) (lost, corrupt int) {
	n := len(r.pc.Points)
	psn := r.frames[k].info.PSN
	if !r.firstReq[k] || !r.nak[psn] {
		return n, n
	}
	if r.corrupt[psn] {
		return n, r.pc.LossHop
	}
	return r.pc.LossHop, n
}

// markFrom returns the first point whose hop marked transmission k CE
// (Point.ECN; len(Points) for none).
func (r *pointsRun) markFrom(k int) int {
	if !r.firstReq[k] {
		return len(r.pc.Points)
	}
	for h := 1; h < len(r.pc.Points); h++ {
		if r.marks[h][r.frames[k].info.PSN] {
			return h
		}
	}
	return len(r.pc.Points)
}

// dataAt returns the bytes of f as point i captures them: a payload bit
// flipped from corruptFrom on, the TTL lowered by the hops from the
// sender, CE-marked when ce.
func (r *pointsRun) dataAt(f *ptFrame, i, corruptFrom int, ce bool) []byte {
	data := f.data
	if f.fwd && i >= corruptFrom && len(data) == f.orig && len(data) > 5 {
		data = bytes.Clone(data)
		data[len(data)-5] ^= 0x01 // a payload bit: the ICRC on the wire no longer matches
	}
	if ttl := r.ttlDec(f.fwd, i); ttl > 0 || ce {
		data = editIP(data, r.base.Encap, ttl, ce)
	}
	return data
}

// ttlDec returns how much the hops from the sender to point i lower the
// TTL of a transmission in direction fwd.
func (r *pointsRun) ttlDec(fwd bool, i int) int {
	n := len(r.pc.Points)
	hopsFromSender := i
	if !fwd {
		hopsFromSender = n - 1 - i
	}
	ttl := 0
	for h := 1; h <= hopsFromSender; h++ {
		if fwd {
			ttl += r.pc.Points[h].TTLDec
		} else {
			ttl += r.pc.Points[n-h].TTLDec
		}
	}
	return ttl
}

// editIP returns data with the IPv4 TTL or IPv6 hop limit lowered by d
// and, when ce, the ECN field set to CE (3), the IPv4 checksum updated.
func editIP(data []byte, e Encap, d int, ce bool) []byte {
	off := 14
	if e == EncapVLAN {
		off += 4
	}
	switch e {
	case EncapIPv4, EncapVLAN:
		if len(data) < off+20 {
			return data
		}
		data = bytes.Clone(data)
		data[off+8] -= byte(d)
		if ce {
			data[off+1] |= ecnCE
		}
		binary.BigEndian.PutUint16(data[off+10:], 0)
		var sum uint32
		for i := 0; i < 20; i += 2 {
			sum += uint32(binary.BigEndian.Uint16(data[off+i:]))
		}
		for sum > 0xFFFF {
			sum = sum&0xFFFF + sum>>16
		}
		binary.BigEndian.PutUint16(data[off+10:], ^uint16(sum))
	case EncapIPv6:
		if len(data) < off+40 {
			return data
		}
		data = bytes.Clone(data)
		data[off+7] -= byte(d)
		if ce {
			data[off+1] |= ecnCE << 4 // the traffic class's low 2 bits
		}
	}
	return data
}
