package ncclsynth

import (
	"cmp"
	"fmt"
	"slices"
	"time"
)

// Truth is what the generator wrote (the file PREFIX.truth.json of
// roce-synth nccl), in the shape of the collective view's JSON `nccl`
// (issue 39) where the two share a figure. Times are true time (the
// reference clock: the capture files' clocks run ahead of it by their
// clock_offset_ns), RFC 3339 with ns, and each packet's time is when it
// left its sender (its time in the sender's capture, less the offset).
type Truth struct {
	FIFOLayout string `json:"fifo_layout"`
	// ImmediateOrder is the byte order of the data writes' immediate:
	// "host" (little-endian, NCCL up to 2.28) or "big" (from 2.29.2).
	ImmediateOrder string      `json:"immediate_order"`
	Files          []FileTruth `json:"files"`
	Ranks          []RankTruth `json:"ranks"`
	Connections    []ConnTruth `json:"connections"`
	Channels       int         `json:"channels"`
	Rings          [][]int     `json:"rings"`
	// Trees are the channels' trees, when a collective ran on them.
	Trees       []TreeTruth  `json:"trees,omitempty"`
	Collectives []CollTruth  `json:"collectives"`
	Faults      *FaultsTruth `json:"faults,omitempty"`
	// Frames counts the packets on the wire, each in its sender's and its
	// receiver's capture (a lost one in its sender's only), and the PFC
	// frames (each in the capture of the rank it paused).
	Frames int `json:"frames"`
}

// FileTruth is one rank's capture.
type FileTruth struct {
	File          string `json:"file"`
	Rank          int    `json:"rank"`
	ClockOffsetNs int64  `json:"clock_offset_ns"`
	Frames        int    `json:"frames"`
}

// RankTruth is a rank and its host's address.
type RankTruth struct {
	Rank int    `json:"rank"`
	Addr string `json:"addr"`
}

// ConnTruth is one NET connection (a channel's ring link).
type ConnTruth struct {
	Channel      int    `json:"channel"`
	SenderRank   int    `json:"sender_rank"`
	ReceiverRank int    `json:"receiver_rank"`
	Sender       string `json:"sender"`
	Receiver     string `json:"receiver"`
	// DataQPs are the DestQP of the data writes (the receiver's QPs), in
	// the order first used; CTSQP the DestQP of the CTS (the sender's
	// first QP).
	DataQPs  []uint32 `json:"data_qps"`
	CTSQP    uint32   `json:"cts_qp"`
	FIFORkey uint32   `json:"fifo_rkey"`
	FIFOAddr string   `json:"fifo_addr"`
	CTS      int      `json:"cts"`
	Messages int      `json:"messages"` // data messages, 0-byte ones included
	Bytes    int64    `json:"bytes"`
	Active   bool     `json:"active"`
	// Lost counts the data packets lost after the sender's capture
	// (Config.Loss), each NAKed; Resent the data packets sent again
	// (go-back-N: the lost one and those after it).
	Lost   int `json:"lost"`
	Resent int `json:"resent"`
	// Pauses counts the PFC frames that paused the sender on this link
	// (Config.Pause).
	Pauses int `json:"pauses"`
}

// TreeTruth is a channel's tree: its root and each other rank's parent.
type TreeTruth struct {
	Channel int           `json:"channel"`
	Root    int           `json:"root"`
	Parents []ParentTruth `json:"parents"`
}

// ParentTruth is a rank's parent in a tree.
type ParentTruth struct {
	Rank   int `json:"rank"`
	Parent int `json:"parent"`
}

// CollTruth is one collective.
type CollTruth struct {
	Index     int    `json:"index"` // from 1
	Kind      string `json:"kind"`
	Algorithm string `json:"algorithm"`
	Protocol  string `json:"protocol"`
	SizeBytes int64  `json:"size_bytes"`
	// Links are the links that carried its messages, all channels
	// together, by sender and receiver rank.
	Links []LinkTruth `json:"links"`
	// Start is the first CTS of any rank; End the last data packet.
	Start      string `json:"start"`
	End        string `json:"end"`
	DurationNs int64  `json:"duration_ns"`
	// BusyNs runs from the last rank's first CTS to End.
	BusyNs int64 `json:"busy_ns"`
	// AlgBW is 8·S/busy in bit/s; BusBW AlgBW times nccl-tests' factor.
	AlgBWBps  float64         `json:"algbw_bps"`
	BusBWBps  float64         `json:"busbw_bps"`
	Arrivals  []ArrivalTruth  `json:"arrivals"`
	Straggler *StragglerTruth `json:"straggler"`
}

// LinkTruth is what a collective moved from a rank to its successor.
type LinkTruth struct {
	SenderRank   int   `json:"sender_rank"`
	ReceiverRank int   `json:"receiver_rank"`
	Bytes        int64 `json:"bytes"`
	Messages     int   `json:"messages"`
	// Steps are the algorithm's chunk sends (each Messages/Steps data
	// messages, the slices of the Simple protocol), summed over channels.
	Steps int `json:"steps"`
	// TransferNs runs from the link's first data packet of the
	// collective to its last (0-byte writes included).
	TransferNs int64 `json:"transfer_ns"`
	// WireNs is the time its data messages took on the wire, each from
	// its first packet's start to its last packet's end, summed.
	WireNs int64 `json:"wire_ns"`
}

// ArrivalTruth is when a rank came to a collective.
type ArrivalTruth struct {
	Rank int `json:"rank"`
	// FirstCTS is the first CTS the rank wrote (nil: it receives nothing,
	// as Broadcast's root); FirstData the first data it sent (nil: it
	// sends nothing, as Broadcast's last rank).
	FirstCTS  *string `json:"first_cts"`
	FirstData *string `json:"first_data"`
	// LateNs is FirstCTS less the earliest FirstCTS of the collective.
	LateNs int64 `json:"late_ns"`
	// GPUWaitNs is FirstData less when it could go: the arrival (at the
	// rank) of the CTS that allowed it, or of the last data it reduces or
	// forwards when that came later (a Broadcast's or a tree's ranks
	// below the root wait for their input).
	GPUWaitNs *int64 `json:"gpu_wait_ns"`
}

// StragglerTruth is the rank or link that stood out (issue 39): a rank
// whose LateNs exceeds BusyNs is host-late; else a rank whose GPU wait
// exceeds the median of the other ranks' by more than half of BusyNs is
// GPU-late (the "exceeds busy_ns" cannot hold for a GPU: the
// busy time includes the wait); else a link whose WireNs is more than 3
// × the median link's is slow (the first-to-last transfer does
// not single out a slow link of a ring: every link waits for it, and
// each link's transfer spans the collective).
type StragglerTruth struct {
	Rank         int    `json:"rank"`
	Kind         string `json:"kind"` // host, gpu or link
	LateNs       int64  `json:"late_ns"`
	ReceiverRank *int   `json:"receiver_rank,omitempty"` // a link's
}

// FaultsTruth is what the configuration injected.
type FaultsTruth struct {
	HostLate []LateTruth `json:"host_late,omitempty"`
	GPULate  []LateTruth `json:"gpu_late,omitempty"`
	Slow     []SlowLink  `json:"slow_links,omitempty"`
	Loss     []LinkLoss  `json:"loss,omitempty"`
	Pause    []LinkPause `json:"pfc,omitempty"`
}

// LateTruth is a late rank.
type LateTruth struct {
	Rank    int   `json:"rank"`
	DelayNs int64 `json:"delay_ns"`
}

// stamp writes ns as a truth time.
func stamp(ns int64) *string {
	s := timeOf(ns).UTC().Format(time.RFC3339Nano)
	return &s
}

// truth computes the truth of the simulated job.
func (j *job) truth(addr func(int) string) *Truth {
	cfg := j.cfg
	t := &Truth{FIFOLayout: j.layout.Name, ImmediateOrder: "host", Channels: cfg.Channels, Frames: len(j.packets)}
	if *cfg.BigEndianImm {
		t.ImmediateOrder = "big"
	}
	for r := range j.n {
		t.Ranks = append(t.Ranks, RankTruth{Rank: r, Addr: addr(r)})
	}
	for range cfg.Channels {
		t.Rings = append(t.Rings, slices.Clone(j.ring))
	}
	if slices.ContainsFunc(cfg.Collectives, func(c Collective) bool { return c.Algorithm == AlgoTree }) {
		for ch := range cfg.Channels {
			tree := Trees(j.n, ch)
			tt := TreeTruth{Channel: ch, Root: tree.Root}
			for r, p := range tree.Parent {
				if p >= 0 {
					tt.Parents = append(tt.Parents, ParentTruth{Rank: r, Parent: p})
				}
			}
			t.Trees = append(t.Trees, tt)
		}
	}
	for _, c := range j.conns {
		ct := ConnTruth{Channel: c.ch, SenderRank: c.s, ReceiverRank: c.d, Sender: addr(c.s), Receiver: addr(c.d),
			DataQPs: []uint32{}, CTSQP: c.sendQPs[0], FIFORkey: c.fifoRkey, FIFOAddr: fmt.Sprintf("%#x", c.fifoAddr),
			CTS: c.nextCTS, Messages: len(c.msgs), Lost: c.lost, Resent: c.resent, Pauses: c.pauses}
		for _, m := range c.msgs {
			ct.Bytes += m.bytes
			if q := c.recvQPs[m.qp]; !slices.Contains(ct.DataQPs, q) {
				ct.DataQPs = append(ct.DataQPs, q)
			}
		}
		ct.Active = ct.Messages > 0
		t.Connections = append(t.Connections, ct)
	}
	for ci, co := range cfg.Collectives {
		t.Collectives = append(t.Collectives, j.collTruth(ci, co))
	}
	if len(cfg.HostLate)+len(cfg.GPULate)+len(cfg.Slow)+len(cfg.Loss)+len(cfg.Pause) > 0 {
		f := &FaultsTruth{Slow: cfg.Slow, Loss: cfg.Loss, Pause: cfg.Pause}
		for _, l := range cfg.HostLate {
			f.HostLate = append(f.HostLate, LateTruth{l.Rank, int64(l.Delay)})
		}
		for _, l := range cfg.GPULate {
			f.GPULate = append(f.GPULate, LateTruth{l.Rank, int64(l.Delay)})
		}
		t.Faults = f
	}
	return t
}

// collTruth computes collective ci's figures from its messages' times.
func (j *job) collTruth(ci int, co Collective) CollTruth {
	const none = int64(-1)
	ct := CollTruth{Index: ci + 1, Kind: co.Kind, Algorithm: co.Algorithm, Protocol: "simple", SizeBytes: co.Size}
	firstCTS, firstData, wait := make([]int64, j.n), make([]int64, j.n), make([]int64, j.n)
	for r := range j.n {
		firstCTS[r], firstData[r], wait[r] = none, none, none
	}
	earlier := func(a, b int64) bool { return a >= 0 && (b < 0 || a < b) }
	// The links that carried messages, their channels together.
	type link struct {
		LinkTruth
		firstAt, lastAt int64
	}
	links := map[[2]int]*link{}
	start, end := none, none
	for _, c := range j.conns {
		steps := map[int]bool{}
		l := links[[2]int{c.s, c.d}]
		for _, m := range c.msgs {
			if m.coll != ci {
				continue
			}
			if l == nil {
				l = &link{LinkTruth: LinkTruth{SenderRank: c.s, ReceiverRank: c.d}, firstAt: none, lastAt: none}
				links[[2]int{c.s, c.d}] = l
			}
			if earlier(m.ctsAt, firstCTS[c.d]) {
				firstCTS[c.d] = m.ctsAt
			}
			if earlier(m.sendAt, firstData[c.s]) {
				ready := m.ctsArr
				for _, d := range m.deps {
					ready = max(ready, d.c.msgs[d.k].recvAt)
				}
				firstData[c.s], wait[c.s] = m.sendAt, m.sendAt-ready
			}
			l.Bytes += m.bytes
			l.Messages++
			steps[m.step] = true
			if earlier(m.sendAt, l.firstAt) {
				l.firstAt = m.sendAt
			}
			l.lastAt = max(l.lastAt, m.lastAt)
			l.WireNs += m.wire
			if earlier(m.ctsAt, start) {
				start = m.ctsAt
			}
			end = max(end, m.lastAt)
		}
		if l != nil {
			l.Steps += len(steps)
		}
	}
	lastCTS := none
	for r := range j.n {
		lastCTS = max(lastCTS, firstCTS[r])
	}
	ct.Start, ct.End = *stamp(start), *stamp(end)
	ct.DurationNs, ct.BusyNs = end-start, end-lastCTS
	if ct.BusyNs > 0 {
		ct.AlgBWBps = float64(co.Size) * 8 / (float64(ct.BusyNs) / 1e9)
		ct.BusBWBps = ct.AlgBWBps * algos[co.Kind].busFactor(j.n)
	}
	var wires []int64
	for _, l := range links {
		l.TransferNs = l.lastAt - l.firstAt
		wires = append(wires, l.WireNs)
		ct.Links = append(ct.Links, l.LinkTruth)
	}
	slices.SortFunc(ct.Links, func(a, b LinkTruth) int {
		return cmp.Or(cmp.Compare(a.SenderRank, b.SenderRank), cmp.Compare(a.ReceiverRank, b.ReceiverRank))
	})
	for r := range j.n {
		a := ArrivalTruth{Rank: r}
		if firstCTS[r] >= 0 {
			a.FirstCTS, a.LateNs = stamp(firstCTS[r]), firstCTS[r]-start
		}
		if firstData[r] >= 0 {
			a.FirstData, a.GPUWaitNs = stamp(firstData[r]), new(wait[r])
		}
		ct.Arrivals = append(ct.Arrivals, a)
	}
	ct.Straggler = straggler(ct, wait, wires)
	return ct
}

// straggler applies StragglerTruth's rules.
func straggler(ct CollTruth, wait, wires []int64) *StragglerTruth {
	var host *ArrivalTruth
	for i := range ct.Arrivals {
		a := &ct.Arrivals[i]
		if a.FirstCTS != nil && a.LateNs > ct.BusyNs && (host == nil || a.LateNs > host.LateNs) {
			host = a
		}
	}
	if host != nil {
		return &StragglerTruth{Rank: host.Rank, Kind: "host", LateNs: host.LateNs}
	}
	best, bestLate := -1, int64(0)
	for r, w := range wait {
		if w < 0 {
			continue
		}
		var others []int64
		for o, x := range wait {
			if o != r && x >= 0 {
				others = append(others, x)
			}
		}
		if len(others) == 0 {
			continue
		}
		if late := w - median(others); 2*late > ct.BusyNs && late > bestLate {
			best, bestLate = r, late
		}
	}
	if best >= 0 {
		return &StragglerTruth{Rank: best, Kind: "gpu", LateNs: bestLate}
	}
	if len(wires) > 0 {
		med := median(wires)
		var slow *LinkTruth
		for i := range ct.Links {
			l := &ct.Links[i]
			if l.WireNs > 3*med && (slow == nil || l.WireNs > slow.WireNs) {
				slow = l
			}
		}
		if slow != nil {
			return &StragglerTruth{Rank: slow.SenderRank, Kind: "link", LateNs: slow.WireNs - med, ReceiverRank: new(slow.ReceiverRank)}
		}
	}
	return nil
}

// median is the lower median of v (v is sorted in place).
func median(v []int64) int64 {
	slices.Sort(v)
	return v[(len(v)-1)/2]
}
