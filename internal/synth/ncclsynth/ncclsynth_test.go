package ncclsynth

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/analyzetest"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// generate writes cfg to memory: each rank's capture and the truth.
func generate(t testing.TB, cfg Config) ([][]byte, *Truth) {
	t.Helper()
	bufs := make([]*bytes.Buffer, cfg.Ranks)
	outs := make([]io.Writer, cfg.Ranks)
	names := make([]string, cfg.Ranks)
	for r := range bufs {
		bufs[r] = &bytes.Buffer{}
		outs[r], names[r] = bufs[r], fmt.Sprintf("rank%d.pcap", r)
	}
	tr, err := Write(cfg, outs, names)
	require.NoError(t, err)
	files := make([][]byte, cfg.Ranks)
	for r, b := range bufs {
		files[r] = b.Bytes()
	}
	return files, tr
}

// collect decodes a capture with the analyzer and the nccl Collector as
// its observer; it returns the collector and the analyzer's report.
func collect(t testing.TB, file []byte) (*nccl.Collector, *analyze.Report) {
	t.Helper()
	col := nccl.NewCollector()
	rep := analyzetest.ReportOf(t, bytes.NewReader(file), analyze.Options{Observer: func() func(*analyze.Packet) { return col.Add }})
	return col, rep
}

// TestCollectorFindsTruth: the nccl package's Collector, given every
// rank's capture as the analyzer decodes it, finds the ranks, the
// connections (QPs, FIFO, counts) and the rings the truth says, and the
// analyzer finds every frame well-formed.
func TestCollectorFindsTruth(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"3 ranks, 2.20, like the real captures", Config{Ranks: 3, MTU: 1024, Collectives: []Collective{{Kind: AllReduce, Size: 1}, {Kind: AllReduce, Size: 24576}}}},
		{"4 ranks, 2.19", Config{Ranks: 4, Layout: "2.19", Collectives: []Collective{{Kind: AllReduce, Size: 3 << 20}}}},
		{"5 ranks, 2.25, big-endian immediate", Config{Ranks: 5, Layout: "2.25", BigEndianImm: new(true), Collectives: []Collective{{Kind: AllReduce, Size: 100_000}}}},
		{"3 ranks, 2.30, host-order immediate", Config{Ranks: 3, Layout: "2.30", BigEndianImm: new(false)}},
		{"3 ranks, 2.30, 2 channels", Config{Ranks: 3, Layout: "2.30", Channels: 2, Collectives: []Collective{{Kind: AllReduce, Size: 5 << 20}}}},
		{"8 ranks, 4 channels, 3 QPs per connection", Config{Ranks: 8, Channels: 4, QPs: 3, Collectives: []Collective{{Kind: AllReduce, Size: 6 << 20}}}},
		{"5 ranks, ring 3 → 0 → 4 → 2 → 1, Broadcast from rank 0", Config{Ranks: 5, Ring: []int{3, 0, 4, 2, 1},
			Collectives: []Collective{{Kind: AllReduce, Size: 1 << 20}, {Kind: Broadcast, Size: 3 << 20}, {Kind: AllGather, Size: 5 << 10}}}},
		{"64 ranks", Config{Ranks: 64, Collectives: []Collective{{Kind: AllReduce, Size: 1 << 20}}}},
		{"odd size: byte elements", Config{Ranks: 3, Collectives: []Collective{{Kind: AllReduce, Size: 12345}}}},
		{"tree AllReduce, 2 channels (both trees), then ring", Config{Ranks: 6, Channels: 2,
			Collectives: []Collective{{Kind: AllReduce, Size: 3 << 20, Algorithm: AlgoTree}, {Kind: AllReduce, Size: 1 << 20}}}},
		{"every kind in turn, faults, clock offsets, IPv6, µs pcap cut at 134", Config{Ranks: 4, Channels: 2, Layout: "2.30", Encap: synth.EncapIPv6, SnapLen: 134 + 20,
			Collectives:  []Collective{{Kind: AllReduce, Size: 1 << 20}, {Kind: AllGather, Size: 4 << 20}, {Kind: ReduceScatter, Size: 400}, {Kind: Broadcast, Size: 3 << 20}, {Kind: AllReduce, Size: 8}},
			ClockOffsets: []time.Duration{0, 3 * time.Millisecond, -time.Second}, HostLate: []Late{{1, time.Millisecond}}, GPULate: []Late{{3, time.Millisecond}},
			Slow: []SlowLink{{2, 5}}, Loss: []LinkLoss{{0, 7}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, tr := generate(t, tc.cfg)
			var cols []*nccl.Collector
			for r, f := range files {
				c, rep := collect(t, f)
				assert.Zero(t, rep.Capture.Malformed)
				assert.Equal(t, uint64(tr.Files[r].Frames), rep.Capture.RoCEPackets)
				cols = append(cols, c)
			}
			res := nccl.Combine(cols...)
			require.NotNil(t, res)
			assert.Equal(t, tr.FIFOLayout, res.FIFOLayout)
			var ranks []nccl.Rank
			for _, r := range tr.Ranks {
				ranks = append(ranks, nccl.Rank{Rank: r.Rank, Addr: r.Addr})
			}
			assert.Equal(t, ranks, res.Ranks)
			var conns []nccl.Connection
			for _, c := range tr.Connections {
				if !c.Active {
					continue // nothing on the wire shows it
				}
				conns = append(conns, nccl.Connection{SenderRank: new(c.SenderRank), ReceiverRank: new(c.ReceiverRank),
					Sender: c.Sender, Receiver: c.Receiver, DataQPs: c.DataQPs, CTSQP: c.CTSQP, FIFORkey: c.FIFORkey,
					FIFOAddr: c.FIFOAddr, CTS: uint64(c.CTS), Messages: uint64(c.Messages), Bytes: uint64(c.Bytes), Active: c.Active})
			}
			assert.ElementsMatch(t, conns, res.Connections)
			if tr.Trees == nil {
				assert.Equal(t, tr.Channels, res.Channels)
				assert.Equal(t, tr.Rings, res.Rings)
			} else { // a rank with two successors: the Collector tells no ring
				assert.Zero(t, res.Channels)
				assert.Nil(t, res.Rings)
			}
			// Each file alone: a part that never contradicts the whole. A
			// host sees its own rank and its predecessor's (the CTS written
			// to each), not its successor's.
			for r, c := range cols {
				part := c.Result()
				require.NotNil(t, part)
				assert.Subset(t, ranks, part.Ranks)
				assert.Contains(t, part.Ranks, ranks[r])
				for _, pc := range part.Connections {
					if pc.ReceiverRank == nil {
						require.Equal(t, ranks[r].Addr, pc.Sender)
						pc.ReceiverRank = new(successor(tr, r))
					}
					assert.Contains(t, conns, pc)
				}
			}
		})
	}
}

// TestRun: the command line writes a capture per rank and the truth
// under the prefix, whose files say what was written; bad command lines
// are usage errors that write nothing.
func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		errs string
	}{
		{"3 ranks", []string{"--ranks", "3", "--nanos", "--coll", "all_reduce:24K,all_reduce:1"}, 0, ""},
		{"tree", []string{"--ranks", "5", "--channels", "2", "--coll", "all_reduce:1M:tree,all_reduce:1M:ring"}, 0, ""},
		{"tree all_gather", []string{"--ranks", "3", "--coll", "all_gather:3M:tree"}, 2, "ring only"},
		{"unknown algorithm", []string{"--ranks", "3", "--coll", "all_reduce:3M:nvls"}, 2, "algorithm"},
		{"pcapng, 2.25, big immediate, offsets", []string{"--ranks", "4", "--format", "pcapng", "--layout", "2.25", "--imm", "big", "--clock-offset", "1=3ms,3=-2ms"}, 0, ""},
		{"no ranks", nil, 2, "0 ranks"},
		{"too many ranks", []string{"--ranks", "65"}, 2, "65 ranks"},
		{"unknown layout", []string{"--ranks", "3", "--layout", "2.18"}, 2, "FIFO layout"},
		{"unknown kind", []string{"--ranks", "3", "--coll", "all_to_all:8"}, 2, "kind"},
		{"bad size", []string{"--ranks", "3", "--coll", "all_reduce:0"}, 2, "bytes"},
		{"all_gather not in equal parts", []string{"--ranks", "3", "--coll", "all_gather:10"}, 2, "equal parts"},
		{"bad immediate order", []string{"--ranks", "3", "--imm", "little"}, 2, "--imm"},
		{"pfc", []string{"--ranks", "3", "--nanos", "--pfc", "1=10:500"}, 0, ""},
		{"pfc without quanta", []string{"--ranks", "3", "--pfc", "1=10"}, 2, "EVERY:QUANTA"},
		{"ring", []string{"--ranks", "4", "--nanos", "--ring", "3,1,0,2"}, 0, ""},
		{"ring of other ranks", []string{"--ranks", "4", "--ring", "3,1,0,0"}, 2, "not an order"},
		{"ring too short", []string{"--ranks", "4", "--ring", "3,1,0"}, 2, "not an order"},
		{"a rank twice", []string{"--ranks", "3", "--host-late", "1=1ms,1=2ms"}, 2, "twice"},
		{"late rank out of range", []string{"--ranks", "3", "--gpu-late", "3=1ms"}, 2, "late rank 3"},
		{"native IB", []string{"--ranks", "3", "--encap", "ib"}, 2, "RoCE v2"},
		{"standard output", []string{"--ranks", "3", "-o", "-"}, 2, "prefix"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := filepath.Join(t.TempDir(), "job")
			var stdout, stderr bytes.Buffer
			args := append([]string{"-o", prefix}, tc.args...)
			require.Equal(t, tc.code, Run(args, &stdout, &stderr), stderr.String())
			if tc.code != 0 {
				assert.Contains(t, stderr.String(), tc.errs)
				matches, err := filepath.Glob(prefix + "*")
				require.NoError(t, err)
				assert.Empty(t, matches)
				return
			}
			b, err := os.ReadFile(prefix + ".truth.json")
			require.NoError(t, err)
			var tr Truth
			require.NoError(t, json.Unmarshal(b, &tr))
			require.NotEmpty(t, tr.Files)
			for r, f := range tr.Files {
				assert.Equal(t, r, f.Rank)
				assert.Contains(t, stdout.String(), "wrote "+f.File+"\n")
				data, err := os.ReadFile(f.File)
				require.NoError(t, err)
				_, rep := collect(t, data)
				assert.Equal(t, uint64(f.Frames), rep.Capture.Frames)
				assert.Zero(t, rep.Capture.Malformed)
				if tr.Trees == nil { // firstSeen knows the rings only
					assert.Equal(t, f.ClockOffsetNs, rep.Capture.FirstTime.Sub(synth.StartTime).Nanoseconds()-firstSeen(&tr, r))
				}
			}
		})
	}
	var stdout bytes.Buffer
	require.Equal(t, 0, Run([]string{"-h"}, &stdout, io.Discard))
	assert.Contains(t, stdout.String(), "--ranks")
}

// successor is rank r's successor on the truth's ring.
func successor(tr *Truth, r int) int {
	ring := tr.Rings[0]
	return ring[(slices.Index(ring, r)+1)%len(ring)]
}

// firstSeen is when rank r's NIC saw its first packet (true time, ns
// from synth.StartTime): its first CTS, or the first CTS written to it a
// link delay after.
func firstSeen(tr *Truth, r int) int64 {
	first := int64(-1)
	for _, co := range tr.Collectives {
		for _, a := range co.Arrivals {
			if a.FirstCTS == nil {
				continue
			}
			ts, _ := time.Parse(time.RFC3339Nano, *a.FirstCTS)
			at := ts.Sub(synth.StartTime).Nanoseconds()
			if a.Rank != r {
				at += int64(defaultDelay) // seen by its predecessor r a link delay later
				if successor(tr, r) != a.Rank {
					continue
				}
			}
			if first < 0 || at < first {
				first = at
			}
		}
	}
	return first
}

// TestTruthArithmetic checks the truth against NCCL.md's rules: the
// links of an AllReduce move 2(n−1)·S bytes together, of an AllGather
// or ReduceScatter (n−1)·S, of a Broadcast (n−1)·S; each step posts the
// Simple protocol's slices; algbw = S/busy and busbw its nccl-tests
// factor; and the faults injected are the stragglers found.
func TestTruthArithmetic(t *testing.T) {
	type want struct {
		kind      string
		straggler *StragglerTruth
	}
	for _, tc := range []struct {
		name   string
		cfg    Config
		factor func(n int64) float64 // the links' bytes over S
		slices int                   // data messages per step
		want   want
	}{
		{"all_reduce", Config{Ranks: 5, Channels: 2, Collectives: []Collective{{Kind: AllReduce, Size: 3 << 20}}},
			func(n int64) float64 { return float64(2 * (n - 1)) }, 2, want{AllReduce, nil}},
		{"all_reduce of 1 byte", Config{Ranks: 3, Collectives: []Collective{{Kind: AllReduce, Size: 1}}},
			func(n int64) float64 { return float64(2 * (n - 1)) }, 2, want{AllReduce, nil}},
		{"all_gather", Config{Ranks: 4, Collectives: []Collective{{Kind: AllGather, Size: 4 << 20}}},
			func(n int64) float64 { return float64(n - 1) }, 2, want{AllGather, nil}},
		{"reduce_scatter", Config{Ranks: 6, Channels: 3, Collectives: []Collective{{Kind: ReduceScatter, Size: 6 * 100_000}}},
			func(n int64) float64 { return float64(n - 1) }, 2, want{ReduceScatter, nil}},
		{"tree all_reduce", Config{Ranks: 7, Channels: 2, Collectives: []Collective{{Kind: AllReduce, Size: 5 << 20, Algorithm: AlgoTree}}},
			func(n int64) float64 { return float64(2 * (n - 1)) }, 1, want{AllReduce, nil}},
		{"tree all_reduce, GPU-late rank 4", Config{Ranks: 8, Channels: 2, GPULate: []Late{{4, time.Millisecond}}, Collectives: []Collective{{Kind: AllReduce, Size: 1 << 20, Algorithm: AlgoTree}}},
			func(n int64) float64 { return float64(2 * (n - 1)) }, 1, want{AllReduce, &StragglerTruth{Rank: 4, Kind: "gpu", LateNs: 1e6}}},
		{"broadcast on ring 2 → 0 → 3 → 1", Config{Ranks: 4, Ring: []int{2, 0, 3, 1}, Collectives: []Collective{{Kind: Broadcast, Size: 1 << 20}}},
			func(n int64) float64 { return float64(n - 1) }, 1, want{Broadcast, nil}},
		{"broadcast", Config{Ranks: 4, Collectives: []Collective{{Kind: Broadcast, Size: 3 << 20}}},
			func(n int64) float64 { return float64(n - 1) }, 1, want{Broadcast, nil}},
		{"host-late rank 2", Config{Ranks: 4, HostLate: []Late{{2, 2 * time.Millisecond}}, Collectives: []Collective{{Kind: AllReduce, Size: 1 << 20}}},
			func(n int64) float64 { return float64(2 * (n - 1)) }, 2, want{AllReduce, &StragglerTruth{Rank: 2, Kind: "host"}}},
		{"GPU-late rank 1", Config{Ranks: 4, GPULate: []Late{{1, 2 * time.Millisecond}}, Collectives: []Collective{{Kind: AllReduce, Size: 1 << 20}}},
			func(n int64) float64 { return float64(2 * (n - 1)) }, 2, want{AllReduce, &StragglerTruth{Rank: 1, Kind: "gpu"}}},
		{"loss on link 1 → 2", Config{Ranks: 4, MTU: 1024, Loss: []LinkLoss{{1, 3}}, Collectives: []Collective{{Kind: AllReduce, Size: 4 << 20}}},
			func(n int64) float64 { return float64(2 * (n - 1)) }, 2, want{AllReduce, &StragglerTruth{Rank: 1, Kind: "link", ReceiverRank: new(2)}}},
		{"PFC pauses of rank 0", Config{Ranks: 4, Pause: []LinkPause{{0, 4, 2000}}, Collectives: []Collective{{Kind: ReduceScatter, Size: 8 << 20}}},
			func(n int64) float64 { return float64(n - 1) }, 2, want{ReduceScatter, &StragglerTruth{Rank: 0, Kind: "link", ReceiverRank: new(1)}}},
		{"slow link 3 → 0", Config{Ranks: 4, Slow: []SlowLink{{3, 20}}, Collectives: []Collective{{Kind: AllGather, Size: 8 << 20}}},
			func(n int64) float64 { return float64(n - 1) }, 2, want{AllGather, &StragglerTruth{Rank: 3, Kind: "link", ReceiverRank: new(0)}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, tr := generate(t, tc.cfg)
			n := int64(tc.cfg.Ranks)
			require.Len(t, tr.Collectives, 1)
			co := tr.Collectives[0]
			assert.Equal(t, tc.want.kind, co.Kind)
			var bytes int64
			for _, l := range co.Links {
				bytes += l.Bytes
				assert.Equal(t, l.Steps*tc.slices, l.Messages, "link %d → %d", l.SenderRank, l.ReceiverRank)
			}
			assert.Equal(t, int64(tc.factor(n)*float64(co.SizeBytes)), bytes)
			var conns int64
			for _, c := range tr.Connections {
				conns += c.Bytes
			}
			assert.Equal(t, bytes, conns)
			start, err := time.Parse(time.RFC3339Nano, co.Start)
			require.NoError(t, err)
			end, err := time.Parse(time.RFC3339Nano, co.End)
			require.NoError(t, err)
			assert.Equal(t, end.Sub(start).Nanoseconds(), co.DurationNs)
			var lastCTS time.Time
			for _, a := range co.Arrivals {
				if a.FirstCTS != nil {
					at, err := time.Parse(time.RFC3339Nano, *a.FirstCTS)
					require.NoError(t, err)
					assert.Equal(t, at.Sub(start).Nanoseconds(), a.LateNs)
					if at.After(lastCTS) {
						lastCTS = at
					}
				}
			}
			assert.Equal(t, end.Sub(lastCTS).Nanoseconds(), co.BusyNs)
			algbw := float64(co.SizeBytes) * 8 / end.Sub(lastCTS).Seconds()
			assert.InEpsilon(t, algbw, co.AlgBWBps, 1e-9)
			bus := map[string]float64{AllReduce: 2 * float64(n-1) / float64(n), AllGather: float64(n-1) / float64(n),
				ReduceScatter: float64(n-1) / float64(n), Broadcast: 1}[co.Kind]
			assert.InEpsilon(t, algbw*bus, co.BusBWBps, 1e-9)
			if tc.want.straggler == nil {
				assert.Nil(t, co.Straggler)
				return
			}
			require.NotNil(t, co.Straggler)
			assert.Equal(t, tc.want.straggler.Rank, co.Straggler.Rank)
			assert.Equal(t, tc.want.straggler.Kind, co.Straggler.Kind)
			assert.Equal(t, tc.want.straggler.ReceiverRank, co.Straggler.ReceiverRank)
			assert.Positive(t, co.Straggler.LateNs)
			if tc.want.straggler.LateNs > 0 { // the delay injected, give or take the hosts' jitter and the proxies' delays
				assert.InDelta(t, tc.want.straggler.LateNs, co.Straggler.LateNs, 10e3)
			}
		})
	}
}

// TestLossSeenByAnalyzer: the analyzer sees the loss the truth says on
// the lossy link: in the sender's capture each lost packet NAKed once
// and every packet sent again a retransmission; in the receiver's, the
// lost first transmissions are absent.
func TestLossSeenByAnalyzer(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"every 3rd packet of rank 1", Config{Ranks: 3, MTU: 1024, Loss: []LinkLoss{{1, 3}}, Collectives: []Collective{{Kind: AllReduce, Size: 1 << 20}}}},
		{"every 50th, 2 channels, 2 QPs", Config{Ranks: 5, MTU: 512, Channels: 2, QPs: 2, Loss: []LinkLoss{{4, 50}}, Collectives: []Collective{{Kind: AllGather, Size: 5 << 20}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files, tr := generate(t, tc.cfg)
			s := tc.cfg.Loss[0].Sender
			var lost, resent int
			var dataQPs []uint32
			for _, c := range tr.Connections {
				if c.SenderRank == s {
					lost, resent = lost+c.Lost, resent+c.Resent
					dataQPs = append(dataQPs, c.DataQPs...)
				} else {
					assert.Zero(t, c.Lost+c.Resent)
				}
			}
			require.Positive(t, lost)
			require.Greater(t, resent, lost-1)
			_, rep := collect(t, files[s])
			var naks, retrans uint64
			for _, f := range rep.Flows {
				if f.Src == tr.Ranks[s].Addr && slices.Contains(dataQPs, f.DestQP) {
					retrans += f.Requests.Retransmitted
				}
				if f.Dst == tr.Ranks[s].Addr {
					naks += f.Responses.NAKs
				}
			}
			assert.Equal(t, uint64(lost), naks)
			assert.Equal(t, uint64(resent), retrans)
			// Each packet is in two captures, a lost one in its sender's only.
			var frames int
			for _, f := range tr.Files {
				frames += f.Frames
			}
			assert.Equal(t, 2*tr.Frames-lost, frames)
		})
	}
}

// TestTrees: the channels' trees are NCCL's double binary tree: on 3
// ranks the first is the real job's (NCCL's log: rank 0 the root with
// child 2, rank 2 with child 1), the second shifted by one rank (odd n)
// or mirrored (even n); and for 3 to 64 ranks each is a tree: one root,
// every other rank its parent's child, all reached from the root.
func TestTrees(t *testing.T) {
	for _, tc := range []struct {
		n, ch  int
		root   int
		parent []int
	}{
		{3, 0, 0, []int{-1, 2, 0}},
		{3, 1, 1, []int{1, -1, 0}},
		{4, 0, 0, []int{-1, 2, 0, 2}},
		{4, 1, 3, []int{1, 3, 1, -1}},
		{8, 0, 0, []int{-1, 2, 4, 2, 0, 6, 4, 6}},
	} {
		tr := Trees(tc.n, tc.ch)
		assert.Equal(t, tc.root, tr.Root, "n %d channel %d", tc.n, tc.ch)
		assert.Equal(t, tc.parent, tr.Parent, "n %d channel %d", tc.n, tc.ch)
	}
	for n := MinRanks; n <= MaxRanks; n++ {
		for ch := range 2 {
			tr := Trees(n, ch)
			require.Equal(t, -1, tr.Parent[tr.Root])
			seen := map[int]bool{}
			var walk func(r int)
			walk = func(r int) {
				require.False(t, seen[r], "n %d channel %d: rank %d twice", n, ch, r)
				seen[r] = true
				require.LessOrEqual(t, len(tr.Children[r]), 2)
				for _, c := range tr.Children[r] {
					require.Equal(t, r, tr.Parent[c])
					walk(c)
				}
			}
			walk(tr.Root)
			assert.Len(t, seen, n, "n %d channel %d", n, ch)
		}
	}
}

// TestSnapLen: a capture cut to NCCL.md's length for the layout (Eth +
// IPv4 + UDP + BTH + RETH and the entry through idx: 102, 110, 118, 134
// bytes) still shows the job; one byte less cuts every CTS before its
// idx, and nothing is NCCL.
func TestSnapLen(t *testing.T) {
	for _, tc := range []struct {
		layout string
		snap   int
	}{{"2.19", 102}, {"2.20", 110}, {"2.25", 118}, {"2.30", 134}} {
		for _, snap := range []int{tc.snap, tc.snap - 1} {
			t.Run(fmt.Sprintf("%s cut at %d", tc.layout, snap), func(t *testing.T) {
				cfg := Config{Ranks: 3, Layout: tc.layout, SnapLen: snap, Collectives: []Collective{{Kind: AllReduce, Size: 1 << 20}}}
				files, tr := generate(t, cfg)
				var cols []*nccl.Collector
				for _, f := range files {
					c, rep := collect(t, f)
					assert.Zero(t, rep.Capture.Malformed)
					cols = append(cols, c)
				}
				res := nccl.Combine(cols...)
				if snap < tc.snap {
					assert.Nil(t, res)
					return
				}
				require.NotNil(t, res)
				assert.Equal(t, tr.Rings, res.Rings)
				assert.Len(t, res.Connections, len(tr.Connections))
			})
		}
	}
}

// TestPauseSeenByAnalyzer: the analyzer finds the truth's PFC frames in
// the paused rank's capture (priority 3, the quanta configured), and in
// no other.
func TestPauseSeenByAnalyzer(t *testing.T) {
	cfg := Config{Ranks: 3, Channels: 2, Pause: []LinkPause{{2, 5, 700}}, Collectives: []Collective{{Kind: AllReduce, Size: 2 << 20}}}
	files, tr := generate(t, cfg)
	var pauses int
	for _, c := range tr.Connections {
		if c.SenderRank == 2 {
			pauses += c.Pauses
		} else {
			assert.Zero(t, c.Pauses)
		}
	}
	require.Positive(t, pauses)
	for r, f := range files {
		_, rep := collect(t, f)
		if r != 2 {
			assert.Empty(t, rep.Pause)
			continue
		}
		require.Len(t, rep.Pause, 1)
		p := rep.Pause[0]
		assert.Equal(t, "pfc", p.Kind)
		require.NotNil(t, p.Priority)
		assert.Equal(t, pfcPriority, *p.Priority)
		assert.Equal(t, uint64(pauses), p.Frames)
		assert.Equal(t, uint64(pauses)*700, p.Quanta)
	}
}

// TestRunReplacesSymlinks: an output name that is a planted symlink is
// replaced by the capture, its target left as it was.
func TestRunReplacesSymlinks(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep"), 0o644))
	prefix := filepath.Join(dir, "job")
	for _, name := range []string{prefix + ".rank1.pcap", prefix + ".truth.json"} {
		require.NoError(t, os.Symlink(victim, name))
	}
	require.Equal(t, 0, Run([]string{"--ranks", "3", "-o", prefix}, io.Discard, io.Discard))
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "keep", string(b))
	for _, name := range []string{prefix + ".rank1.pcap", prefix + ".truth.json"} {
		fi, err := os.Lstat(name)
		require.NoError(t, err)
		assert.True(t, fi.Mode().IsRegular(), name)
	}
	// A prefix in a directory that does not exist: an error, no file.
	assert.Equal(t, 1, Run([]string{"--ranks", "3", "-o", filepath.Join(dir, "none", "job")}, io.Discard, io.Discard))
	_, err = os.Stat(filepath.Join(dir, "none"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestDeterministic: the same configuration writes the same bytes and
// truth; another seed other QPs, keys and addresses of buffers.
func TestDeterministic(t *testing.T) {
	cfg := Config{Ranks: 4, Channels: 2, Loss: []LinkLoss{{1, 9}}, Pause: []LinkPause{{2, 9, 100}},
		Collectives: []Collective{{Kind: AllReduce, Size: 1 << 20, Algorithm: AlgoTree}, {Kind: Broadcast, Size: 100}}}
	a, ta := generate(t, cfg)
	b, tb := generate(t, cfg)
	assert.Equal(t, a, b)
	assert.Equal(t, ta, tb)
	cfg.Seed = 2
	c, tc := generate(t, cfg)
	assert.NotEqual(t, a, c)
	assert.NotEqual(t, ta.Connections, tc.Connections)
	assert.Equal(t, ta.Ranks, tc.Ranks)
}
