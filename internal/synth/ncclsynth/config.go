// Package ncclsynth writes per-host captures of an NCCL job with their
// truth (roce-synth nccl): one rank per host, each host's capture of what
// its NIC sent and received, with NCCL's net_ib wire pattern
// (../shared/NCCL.md): for each connection the receiver writes CTS
// entries into the sender's FIFO in one of the layouts of package nccl
// (nccl.Layouts), and the sender writes each slice of data with an RDMA
// WRITE WITH IMMEDIATE (the immediate its length) to the buffer and key
// the CTS named; the responder ACKs each message. The collectives run
// NCCL's ring algorithms with the Simple protocol: AllReduce (2(n−1)
// steps per chunk), AllGather and ReduceScatter (n−1), Broadcast (from
// rank 0), each step's chunk posted as a fixed number of slices, empty
// ones included. The frames are built by package synth's serializers
// (synth.FrameBuilder), so they are the bytes of every other scenario.
//
// The timing is a small event model: a rank's receive proxy posts CTS
// as soon as its host enqueued the collective (and a buffer step is
// free), its GPU starts a few µs later, a send waits for its CTS and
// (after the first step) for the data it reduces or forwards, and each
// host's NIC sends one packet at a time at the link rate. Faults make a
// rank's host or GPU late, or a link slow; Truth is computed from what
// was written.
//
// Files:
//   - config.go: Config and its checks
//   - plan.go: the messages of each connection (NCCL's ring algorithms)
//   - sim.go: the event model that times them, and the packets
//   - write.go: Write, the per-host captures
//   - truth.go: Truth and its figures
//   - cli.go: Run, the command line
package ncclsynth

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// Collective kinds, as the truth (and nccl-tests) name them.
const (
	AllReduce     = "all_reduce"
	AllGather     = "all_gather"
	ReduceScatter = "reduce_scatter"
	Broadcast     = "broadcast"
)

// Algorithms, as the truth names them.
const (
	AlgoRing = "ring"
	AlgoTree = "tree" // the double binary tree, AllReduce only
)

// Kinds returns the collective kinds the generator writes.
func Kinds() []string { return []string{AllReduce, AllGather, ReduceScatter, Broadcast} }

// Collective is one collective of the job: its kind and S, the size in
// bytes as nccl-tests defines it (AllReduce and Broadcast: the buffer of
// each rank; AllGather and ReduceScatter: the whole gathered buffer, n
// times each rank's part).
type Collective struct {
	Kind string
	Size int64
	// Algorithm is AlgoRing (the default) or AlgoTree.
	Algorithm string
}

// Late makes a rank late by Delay in each collective.
type Late struct {
	Rank  int
	Delay time.Duration
}

// SlowLink makes the link from rank Sender to its ring successor slow:
// its packets leave at Gbps/Factor.
type SlowLink struct {
	Sender int     `json:"sender_rank"`
	Factor float64 `json:"factor"`
}

// LinkLoss makes the link from rank Sender to its ring successor lose
// every Every-th data packet it sends (counting first transmissions, a
// message's last packet never lost) after the sender's capture: the
// receiver NAKs and the sender resends from it (go-back-N).
type LinkLoss struct {
	Sender int `json:"sender_rank"`
	Every  int `json:"every"`
}

// LinkPause makes the switch port toward rank Sender's ring successor
// pause Sender with a PFC frame (priority 3) of Quanta after every
// Every-th data packet it sends on that link: Sender's NIC stops for
// Quanta × 512 bit times (PFC frames are in Sender's capture only).
type LinkPause struct {
	Sender int    `json:"sender_rank"`
	Every  int    `json:"every"`
	Quanta uint16 `json:"quanta"`
}

// Config is an NCCL job to write.
type Config struct {
	Ranks    int // 3 to 64, one host each
	Channels int // rings, 1 to 32 (default 1)
	// Ring is the ranks in ring order (every channel's; nil: 0, 1, …,
	// n−1): NCCL orders the ring by the topology, not by rank.
	Ring []int
	// Layout is the Name of the nccl.Layout the CTS entries are written
	// in (default "2.20").
	Layout string
	// BigEndianImm writes the immediate big-endian (NCCL from 2.29.2 on);
	// else in host order, little-endian (up to 2.28). Default: big-endian
	// for layout 2.30 only (see Normalize).
	BigEndianImm *bool
	// QPs is NCCL_IB_QPS_PER_CONNECTION (default 1): whole messages go
	// round-robin over them (NCCL_IB_SPLIT_DATA_ON_QPS=0, from 2.20).
	QPs         int
	Collectives []Collective // default one all_reduce of 1 MiB
	// Encap is a RoCE v2 encapsulation (default IPv4).
	Encap   synth.Encap
	Format  synth.Format
	Nanos   bool
	SnapLen int // cut frames to this many bytes; 0 keeps them whole
	MTU     int // path MTU (default 4096)
	Gbps    float64
	// LinkDelay is the one-way delay from a sender's capture to the
	// receiver's (default 1 µs).
	LinkDelay time.Duration
	// Gap separates a collective's end from the next one's start
	// (default 50 µs).
	Gap  time.Duration
	Seed uint64
	// ClockOffsets are how far each rank's capture clock runs ahead of
	// true time (missing ranks: 0).
	ClockOffsets []time.Duration
	// HostLate ranks enqueue each collective late: their CTS come late.
	// GPULate ranks' GPUs start late: CTS on time, data late.
	HostLate, GPULate []Late
	Slow              []SlowLink
	Loss              []LinkLoss
	Pause             []LinkPause
}

// Defaults of Config.
const (
	DefaultSize    = 1 << 20
	DefaultMTU     = 4096
	DefaultGbps    = 100
	DefaultLayout  = "2.20"
	MinRanks       = 3
	MaxRanks       = 64
	MaxChannels    = 32
	MaxQPs         = 16
	maxTotalBytes  = 1 << 33 // bytes of data a job may write over all links
	defaultGap     = 50 * time.Microsecond
	defaultDelay   = time.Microsecond
	maxCollectives = 4096
)

// layout returns the nccl.Layout of name.
func layout(name string) (nccl.Layout, bool) {
	for _, l := range nccl.Layouts() {
		if l.Name == name {
			return l, true
		}
	}
	return nccl.Layout{}, false
}

// layoutNames returns the Names of nccl.Layouts.
func layoutNames() []string {
	var names []string
	for _, l := range nccl.Layouts() {
		names = append(names, l.Name)
	}
	return names
}

// Normalize fills in the defaults of c and checks it; the errors wrap
// synth.ErrConfig.
func (c *Config) Normalize() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("ncclsynth: %w: %s", synth.ErrConfig, fmt.Sprintf(format, a...))
	}
	if c.Ranks < MinRanks || c.Ranks > MaxRanks {
		return bad("%d ranks (want %d to %d)", c.Ranks, MinRanks, MaxRanks)
	}
	if c.Channels == 0 {
		c.Channels = 1
	}
	if c.Channels < 1 || c.Channels > MaxChannels {
		return bad("%d channels (want 1 to %d)", c.Channels, MaxChannels)
	}
	if c.Ring != nil {
		seen := make([]bool, c.Ranks)
		for _, r := range c.Ring {
			if r < 0 || r >= c.Ranks || seen[r] {
				return bad("ring %v is not an order of the %d ranks", c.Ring, c.Ranks)
			}
			seen[r] = true
		}
		if len(c.Ring) != c.Ranks {
			return bad("ring %v is not an order of the %d ranks", c.Ring, c.Ranks)
		}
	}
	if c.QPs == 0 {
		c.QPs = 1
	}
	if c.QPs < 1 || c.QPs > MaxQPs {
		return bad("%d QPs per connection (want 1 to %d)", c.QPs, MaxQPs)
	}
	if c.Layout == "" {
		c.Layout = DefaultLayout
	}
	if _, ok := layout(c.Layout); !ok {
		return bad("FIFO layout %q (want one of %s)", c.Layout, strings.Join(layoutNames(), ", "))
	}
	if c.BigEndianImm == nil {
		c.BigEndianImm = new(c.Layout == "2.30")
	}
	if !c.Encap.RoCEv2() {
		return bad("encapsulation %s (want a RoCE v2 one: ipv4, ipv6 or vlan)", c.Encap)
	}
	if c.MTU == 0 {
		c.MTU = DefaultMTU
	}
	if !slices.Contains([]int{256, 512, 1024, 2048, 4096}, c.MTU) {
		return bad("path MTU %d (want 256, 512, 1024, 2048 or 4096)", c.MTU)
	}
	if c.SnapLen < 0 {
		return bad("snap length %d", c.SnapLen)
	}
	if c.Gbps == 0 {
		c.Gbps = DefaultGbps
	}
	if !(c.Gbps >= 0.001 && c.Gbps <= 10000) {
		return bad("link rate %v Gbit/s", c.Gbps)
	}
	if c.LinkDelay == 0 {
		c.LinkDelay = defaultDelay
	}
	if c.Gap == 0 {
		c.Gap = defaultGap
	}
	if c.LinkDelay < 0 || c.Gap < 0 || c.LinkDelay > time.Second || c.Gap > time.Minute {
		return bad("link delay %v, gap %v", c.LinkDelay, c.Gap)
	}
	if len(c.Collectives) == 0 {
		c.Collectives = []Collective{{Kind: AllReduce, Size: DefaultSize}}
	}
	if len(c.Collectives) > maxCollectives {
		return bad("%d collectives (at most %d)", len(c.Collectives), maxCollectives)
	}
	var total float64
	c.Collectives = slices.Clone(c.Collectives) // the caller's stay as given
	for i, co := range c.Collectives {
		if !slices.Contains(Kinds(), co.Kind) {
			return bad("collective %d: kind %q (want one of %s)", i+1, co.Kind, strings.Join(Kinds(), ", "))
		}
		switch {
		case co.Algorithm == "":
			c.Collectives[i].Algorithm = AlgoRing
		case co.Algorithm == AlgoTree && co.Kind != AllReduce:
			return bad("collective %d: %s runs on the ring only", i+1, co.Kind)
		case co.Algorithm != AlgoRing && co.Algorithm != AlgoTree:
			return bad("collective %d: algorithm %q (want ring or tree)", i+1, co.Algorithm)
		}
		if co.Size < 1 {
			return bad("collective %d: size %d bytes", i+1, co.Size)
		}
		if (co.Kind == AllGather || co.Kind == ReduceScatter) && co.Size%int64(c.Ranks) != 0 {
			return bad("collective %d: %s of %d bytes is not %d equal parts", i+1, co.Kind, co.Size, c.Ranks)
		}
		total += float64(co.Size) * 2 * float64(c.Ranks-1)
	}
	if total > maxTotalBytes {
		return bad("the collectives move %.0f bytes (at most %d)", total, int64(maxTotalBytes))
	}
	if len(c.ClockOffsets) > c.Ranks {
		return bad("%d clock offsets for %d ranks", len(c.ClockOffsets), c.Ranks)
	}
	for _, l := range slices.Concat(c.HostLate, c.GPULate) {
		if l.Rank < 0 || l.Rank >= c.Ranks || l.Delay < 0 || l.Delay > time.Minute {
			return bad("late rank %d by %v", l.Rank, l.Delay)
		}
	}
	for _, l := range c.Loss {
		if l.Sender < 0 || l.Sender >= c.Ranks || l.Every < 2 {
			return bad("loss on the link from rank %d every %d packets (want 2 or more)", l.Sender, l.Every)
		}
	}
	for _, p := range c.Pause {
		if p.Sender < 0 || p.Sender >= c.Ranks || p.Every < 1 || p.Quanta == 0 {
			return bad("PFC pauses of rank %d every %d packets, %d quanta", p.Sender, p.Every, p.Quanta)
		}
	}
	for _, s := range c.Slow {
		if s.Sender < 0 || s.Sender >= c.Ranks || !(s.Factor >= 1 && s.Factor <= 1000) {
			return bad("slow link from rank %d, factor %v (want 1 to 1000)", s.Sender, s.Factor)
		}
	}
	return nil
}

// errNoRanks is returned by Write when the outputs are not one per rank.
var errNoRanks = errors.New("ncclsynth: one output per rank")
