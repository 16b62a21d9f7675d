package synth

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
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
	n := len(pc.Points)
	if n < 2 || n != len(outs) {
		return nil, fmt.Errorf("synth: %w: %d points, %d outputs (want two or more, one output each)", ErrConfig, n, len(outs))
	}
	base := pc.Base
	if err := base.normalize(); err != nil {
		return nil, err
	}
	if len(base.Drop) > 0 || base.Scenario == ScenarioMix || base.Encap.Native() || base.Pause.any() || len(base.Wrap) > 0 {
		return nil, fmt.Errorf("synth: %w: points need a single-connection scenario over Ethernet, without --drop, pause frames or --wrap", ErrConfig)
	}
	if pc.LossHop <= 0 {
		pc.LossHop = 1
	}
	if pc.LossHop >= n {
		return nil, fmt.Errorf("synth: %w: loss hop %d of %d points", ErrConfig, pc.LossHop, n)
	}
	var frames []ptFrame
	base.OnFrame = func(fi *FrameInfo) {
		f := ptFrame{info: *fi, data: bytes.Clone(fi.Data), orig: fi.Length}
		f.info.Data = nil
		frames = append(frames, f)
	}
	stream, err := Generate(base, io.Discard, nil)
	if err != nil {
		return nil, err
	}
	if len(frames) == 0 {
		return nil, fmt.Errorf("synth: %w: no frames", ErrConfig)
	}
	requester := frames[0].info.Src
	start := uint32(0)
	if len(stream.Connections) > 0 && stream.Connections[0].Requester.SendPSN != nil {
		start = *stream.Connections[0].Requester.SendPSN
	} else {
		for _, f := range frames {
			if f.info.Src == requester && f.info.Opcode.IsRequest() && f.info.CM == "" {
				start = f.info.PSN
				break
			}
		}
	}
	resolve := func(l []PSNRef) map[uint32]bool {
		m := map[uint32]bool{}
		for _, r := range l {
			m[r.resolve(start)] = true
		}
		return m
	}
	nak, corrupt := resolve(base.NAK), resolve(pc.Corrupt)
	drops := make([]map[uint32]bool, n)
	for i, p := range pc.Points {
		drops[i] = resolve(p.TapDrop)
	}
	// first transmissions of request PSNs from the requester
	firstReq := map[int]bool{}
	seenReq := map[uint32]bool{}
	for k := range frames {
		f := &frames[k]
		f.fwd = f.info.Src == requester
		if f.fwd && f.info.Opcode.IsRequest() && f.info.CM == "" && !seenReq[f.info.PSN] {
			seenReq[f.info.PSN] = true
			firstReq[k] = true
		}
	}

	rng := rand.New(rand.NewPCG(base.Seed, 0x706f696e74))
	cum := make([]int64, n) // path delay to point i, without jitter
	for i := 1; i < n; i++ {
		cum[i] = cum[i-1] + int64(pc.Points[i].Delay)
	}
	sights := make([][]ptSight, n)
	lastFwd, lastBack := make([]int64, n), make([]int64, n)
	for i := range lastFwd {
		lastFwd[i], lastBack[i] = math.MinInt64, math.MinInt64
	}
	at := make([]int64, n)
	hop := func(h int) int64 {
		d := int64(pc.Points[h].Delay)
		if j := int64(pc.Points[h].Jitter); j > 0 {
			d += rng.Int64N(j)
		}
		return d
	}
	for k := range frames {
		f := &frames[k]
		t0 := f.info.Timestamp.Sub(StartTime).Nanoseconds()
		lostFrom := n // first point the transmission does not reach
		if firstReq[k] && nak[f.info.PSN] && !corrupt[f.info.PSN] {
			lostFrom = pc.LossHop
		}
		corruptFrom := n
		if firstReq[k] && nak[f.info.PSN] && corrupt[f.info.PSN] {
			corruptFrom = pc.LossHop
		}
		if f.fwd {
			at[0] = max(t0, lastFwd[0]+1)
			for i := 1; i < n; i++ {
				at[i] = max(at[i-1]+hop(i), lastFwd[i]+1)
			}
			copy(lastFwd, at)
		} else {
			// The responder's packets leave the last point a full path
			// delay after the generator's time (causality: it answers what
			// reached it) and travel back.
			at[n-1] = max(t0+cum[n-1], lastBack[n-1]+1)
			for i := n - 2; i >= 0; i-- {
				at[i] = max(at[i+1]+hop(i+1), lastBack[i]+1)
			}
			copy(lastBack, at)
		}
		for i := range n {
			hopsFromSender := i
			if !f.fwd {
				hopsFromSender = n - 1 - i
			}
			reached := (f.fwd && i < lostFrom) || !f.fwd
			if !reached {
				continue
			}
			if firstReq[k] && drops[i][f.info.PSN] {
				continue
			}
			data := f.data
			if f.fwd && i >= corruptFrom && len(data) == f.orig && len(data) > 5 {
				data = bytes.Clone(data)
				data[len(data)-5] ^= 0x01 // a payload bit: the ICRC on the wire no longer matches
			}
			ttl := 0
			for h := 1; h <= hopsFromSender; h++ {
				if f.fwd {
					ttl += pc.Points[h].TTLDec
				} else {
					ttl += pc.Points[n-h].TTLDec
				}
			}
			if ttl > 0 {
				data = decTTL(data, base.Encap, ttl)
			}
			sights[i] = append(sights[i], ptSight{k: k, t: at[i], data: data})
		}
	}

	res := int64(1000)
	if base.Nanos || base.Format == FormatPcapNG {
		res = 1
	}
	tr := &PointsTruth{Stream: stream}
	var jit int64
	for i, p := range pc.Points {
		if i > 0 {
			jit += int64(p.Jitter)
		}
		tr.Files = append(tr.Files, PointFileTruth{File: p.Name, ClockOffsetNs: int64(p.ClockOffset), ResolutionNs: res, JitterNs: jit})
		ss := sights[i]
		sort.SliceStable(ss, func(a, b int) bool { return ss[a].t < ss[b].t })
		cfg := base
		w, err := newCapWriter(outs[i], &cfg)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			ts := StartTime.Add(time.Duration(s.t + int64(p.ClockOffset)))
			if err := w.write(ts, s.data, frames[s.k].orig); err != nil {
				return nil, err
			}
		}
		if err := w.flush(); err != nil {
			return nil, err
		}
	}
	tr.Links = pointLinks(pc, frames, sights, firstReq, drops, nak)
	return tr, nil
}

// decTTL returns data with the IPv4 TTL (checksum updated) or IPv6 hop
// limit lowered by d.
func decTTL(data []byte, e Encap, d int) []byte {
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
	}
	return data
}

// pointLinks computes the links' truth from what each point captured.
func pointLinks(pc PointsConfig, frames []ptFrame, sights [][]ptSight, firstReq map[int]bool, drops []map[uint32]bool, nak map[uint32]bool) []PointLinkTruth {
	n := len(pc.Points)
	type seen struct {
		t       int64
		bad     bool
		present bool
	}
	at := make([][]seen, n) // by point, by transmission
	for i := range n {
		at[i] = make([]seen, len(frames))
		for _, s := range sights[i] {
			bad := false
			if len(s.data) == frames[s.k].orig {
				bad = !bytes.Equal(s.data[len(s.data)-5:len(s.data)-4], frames[s.k].data[len(s.data)-5:len(s.data)-4])
			}
			at[i][s.k] = seen{t: s.t, bad: bad, present: true}
		}
	}
	type fk struct {
		src, dst string
		qp       uint32
	}
	var order []fk
	byFlow := map[fk][]int{}
	for k, f := range frames {
		key := fk{f.info.Src, f.info.Dst, f.info.DestQP}
		if _, ok := byFlow[key]; !ok {
			order = append(order, key)
		}
		byFlow[key] = append(byFlow[key], k)
	}
	var out []PointLinkTruth
	for _, key := range order {
		ks := byFlow[key]
		fwd := frames[ks[0]].fwd
		for h := 0; h+1 < n; h++ {
			from, to := h, h+1
			if !fwd {
				from, to = n-1-h, n-2-h
			}
			l := PointLinkTruth{Src: key.src, Dst: key.dst, DestQP: key.qp, From: pc.Points[from].Name, To: pc.Points[to].Name,
				LostPSNs: []uint32{}, CorruptedPSNs: []uint32{}}
			var delays []int64
			var arrivals []int // transmissions in arrival order at to
			for _, k := range ks {
				a, b := at[from][k], at[to][k]
				switch {
				case a.present && b.present:
					l.Matched++
					delays = append(delays, b.t-a.t)
					arrivals = append(arrivals, k)
					if !a.bad && b.bad && len(frames[k].data) == frames[k].orig {
						l.Corrupted++
						l.CorruptedPSNs = append(l.CorruptedPSNs, frames[k].info.PSN)
					}
				case a.present && firstReq[k] && drops[to][frames[k].info.PSN] && !(nak[frames[k].info.PSN] && to >= pc.LossHop):
					l.NotCaptured++
				case a.present:
					l.Lost++
					l.LostPSNs = append(l.LostPSNs, frames[k].info.PSN)
				}
			}
			if l.Matched == 0 {
				continue
			}
			slices.SortStableFunc(arrivals, func(x, y int) int { return int(at[to][x].t - at[to][y].t) })
			maxFrom := int64(math.MinInt64)
			for _, k := range arrivals {
				if at[from][k].t < maxFrom {
					l.Reordered++
				} else {
					maxFrom = at[from][k].t
				}
			}
			slices.Sort(delays)
			rank := func(q float64) int64 {
				return delays[max(0, min(len(delays)-1, int(math.Ceil(q*float64(len(delays))))-1))]
			}
			l.OneWayDelayNs.Min, l.OneWayDelayNs.Median, l.OneWayDelayNs.P99, l.OneWayDelayNs.Max = delays[0], rank(0.5), rank(0.99), delays[len(delays)-1]
			out = append(out, l)
		}
	}
	return out
}
