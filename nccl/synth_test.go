package nccl_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/analyzetest"
	"github.com/roce-dissect/roce-dissect/internal/synth/ncclsynth"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// synthJob writes cfg's per-rank captures with roce-synth nccl's
// generator and returns one Collector per capture, each fed its file
// through the analyzer and put on the reference clock by the offset the
// truth gives its file, and the truth.
func synthJob(t *testing.T, cfg ncclsynth.Config) ([]*nccl.Collector, *ncclsynth.Truth) {
	t.Helper()
	bufs := make([]*bytes.Buffer, cfg.Ranks)
	outs := make([]io.Writer, cfg.Ranks)
	names := make([]string, cfg.Ranks)
	for r := range bufs {
		bufs[r] = &bytes.Buffer{}
		outs[r], names[r] = bufs[r], fmt.Sprintf("rank%d.pcap", r)
	}
	truth, err := ncclsynth.Write(cfg, outs, names)
	require.NoError(t, err)
	cols := make([]*nccl.Collector, cfg.Ranks)
	for r, b := range bufs {
		c := nccl.NewCollector()
		analyzetest.ReportOf(t, b, analyze.Options{Observer: func() func(*analyze.Packet) { return c.Add }})
		c.SetClockOffset(time.Duration(truth.Files[r].ClockOffsetNs))
		cols[r] = c
	}
	return cols, truth
}

// TestCollectivesSynthTruth: the collectives of roce-synth nccl's jobs,
// every rank's capture together on the reference clock, against the
// generator's truth: as many collectives; their links' bytes and
// messages (a receive per message here, so steps too); the kind, S,
// algorithm and protocol where the pattern tells them (kinds: the
// kinds the view names; AllGather and Broadcast write as ReduceScatter
// and Reduce would, and an AllReduce of full chunks only as an
// AllGather of twice its size: unknown); busy time, algbw and busbw
// within 2 %; each rank's first CTS and first data within 1 µs; the
// straggler's rank and kind exact. Each file alone is a part of it.
func TestCollectivesSynthTruth(t *testing.T) {
	ar := func(size int64) ncclsynth.Collective {
		return ncclsynth.Collective{Kind: ncclsynth.AllReduce, Size: size}
	}
	const ms, us = time.Millisecond, time.Microsecond
	for _, tc := range []struct {
		name  string
		cfg   ncclsynth.Config
		kinds []string
	}{
		{"3 ranks like the real job, 50 µs apart", ncclsynth.Config{Ranks: 3, MTU: 1024,
			Collectives: []ncclsynth.Collective{ar(1), ar(24576)}}, []string{"all_reduce", "all_reduce"}},
		{"8 ranks, a GPU late", ncclsynth.Config{Ranks: 8, GPULate: []ncclsynth.Late{{Rank: 1, Delay: 500 * us}},
			Collectives: []ncclsynth.Collective{ar(1 << 20), ar(2 << 20)}}, []string{"all_reduce", "all_reduce"}},
		{"8 ranks, a host late", ncclsynth.Config{Ranks: 8, HostLate: []ncclsynth.Late{{Rank: 3, Delay: ms}},
			Collectives: []ncclsynth.Collective{ar(1 << 20)}}, []string{"all_reduce"}},
		{"8 ranks, a host late by less than the second's busy time: gpu-late there", ncclsynth.Config{Ranks: 8,
			HostLate: []ncclsynth.Late{{Rank: 3, Delay: 200 * us}}, Collectives: []ncclsynth.Collective{ar(1 << 20), ar(2 << 20)}},
			[]string{"all_reduce", "all_reduce"}},
		{"8 ranks, a tree, a host late", ncclsynth.Config{Ranks: 8, HostLate: []ncclsynth.Late{{Rank: 6, Delay: 2 * ms}},
			Collectives: []ncclsynth.Collective{{Kind: ncclsynth.AllReduce, Size: 4 << 20, Algorithm: ncclsynth.AlgoTree}}}, []string{"all_reduce"}},
		{"4 ranks, a link losing packets", ncclsynth.Config{Ranks: 4, Loss: []ncclsynth.LinkLoss{{Sender: 1, Every: 50}},
			Collectives: []ncclsynth.Collective{ar(3 << 20)}}, []string{"all_reduce"}},
		{"4 ranks, a link paused", ncclsynth.Config{Ranks: 4, Pause: []ncclsynth.LinkPause{{Sender: 2, Every: 10, Quanta: 65535}},
			Collectives: []ncclsynth.Collective{ar(1 << 20)}}, []string{"all_reduce"}},
		{"6 ranks, clocks off, a ring out of rank order, ns timestamps", ncclsynth.Config{Ranks: 6, Ring: []int{0, 3, 1, 5, 2, 4}, Nanos: true,
			ClockOffsets: []time.Duration{0, 3 * ms, -2 * ms, 700 * us},
			Collectives:  []ncclsynth.Collective{ar(1 << 20), ar(1 << 20), ar(8192)}}, []string{"all_reduce", "all_reduce", "all_reduce"}},
		{"4 ranks, 2 channels, 2 QPs, layout 2.30", ncclsynth.Config{Ranks: 4, Channels: 2, QPs: 2, Layout: "2.30",
			Collectives: []ncclsynth.Collective{ar(1 << 20)}}, []string{"all_reduce"}},
		{"4 ranks, layout 2.19", ncclsynth.Config{Ranks: 4, Layout: "2.19",
			Collectives: []ncclsynth.Collective{ar(1 << 20)}}, []string{"all_reduce"}},
		{"4 ranks, a tree", ncclsynth.Config{Ranks: 4,
			Collectives: []ncclsynth.Collective{{Kind: ncclsynth.AllReduce, Size: 4 << 20, Algorithm: ncclsynth.AlgoTree}}}, []string{"all_reduce"}},
		{"4 ranks, what the pattern does not tell", ncclsynth.Config{Ranks: 4,
			Collectives: []ncclsynth.Collective{{Kind: ncclsynth.AllGather, Size: 4 << 20}, ar(16 << 20), {Kind: ncclsynth.Broadcast, Size: 1 << 20}}},
			[]string{"unknown", "unknown", "unknown"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols, truth := synthJob(t, tc.cfg)
			r := nccl.Combine(cols...)
			require.NotNil(t, r)
			require.Len(t, r.Collectives, len(truth.Collectives))
			if tc.cfg.Channels <= 1 { // several channels' trees make no one tree
				var wantTrees []nccl.Tree
				for _, tr := range truth.Trees {
					w := nccl.Tree{Root: tr.Root, Parents: []nccl.Parent{}}
					for _, p := range tr.Parents {
						w.Parents = append(w.Parents, nccl.Parent{Rank: p.Rank, Parent: p.Parent})
					}
					wantTrees = append(wantTrees, w)
				}
				assert.Equal(t, wantTrees, r.Trees, "the trees")
			}
			for i, col := range r.Collectives {
				want := truth.Collectives[i]
				assert.Equal(t, want.Index, col.Index)
				assert.Equal(t, tc.kinds[i], col.Kind, "collective %d", i+1)
				assert.Equal(t, want.Protocol, col.Protocol)
				if col.Kind != nccl.KindUnknown {
					assert.Equal(t, want.Kind, col.Kind)
					assert.Equal(t, want.Algorithm, col.Algorithm)
					require.NotNil(t, col.SizeBytes)
					assert.Equal(t, want.SizeBytes, int64(*col.SizeBytes))
					assert.InEpsilon(t, want.AlgBWBps, *col.AlgBWBps, 0.02)
					assert.InEpsilon(t, want.BusBWBps, *col.BusBWBps, 0.02)
				}
				type figures struct {
					s, r            int
					bytes, messages uint64
				}
				var wantLinks, gotLinks []figures
				for _, l := range want.Links {
					wantLinks = append(wantLinks, figures{l.SenderRank, l.ReceiverRank, uint64(l.Bytes), uint64(l.Messages)})
				}
				for _, l := range col.Links {
					require.NotNil(t, l.SenderRank)
					require.NotNil(t, l.ReceiverRank)
					gotLinks = append(gotLinks, figures{*l.SenderRank, *l.ReceiverRank, l.Bytes, l.Messages})
					assert.Equal(t, l.Messages, l.Steps, "one receive per message")
				}
				assert.ElementsMatch(t, wantLinks, gotLinks)
				if want.BusyNs > 0 && col.BusyNs != nil {
					assert.InEpsilon(t, want.BusyNs, *col.BusyNs, 0.02)
				}
				within := func(want *string, got *time.Time, what string) {
					if want == nil {
						return
					}
					require.NotNil(t, got, what)
					w, err := time.Parse(time.RFC3339Nano, *want)
					require.NoError(t, err)
					assert.InDelta(t, 0, got.Sub(w).Nanoseconds(), float64(time.Microsecond), what)
				}
				for _, a := range want.Arrivals {
					k := 0
					for k < len(col.Arrivals) && col.Arrivals[k].Rank != a.Rank {
						k++
					}
					require.Less(t, k, len(col.Arrivals), "rank %d arrives", a.Rank)
					within(a.FirstCTS, col.Arrivals[k].FirstCTS, fmt.Sprintf("rank %d first CTS", a.Rank))
					within(a.FirstData, col.Arrivals[k].FirstData, fmt.Sprintf("rank %d first data", a.Rank))
				}
				if want.Straggler == nil {
					assert.Nil(t, col.Straggler, "collective %d", i+1)
					continue
				}
				require.NotNil(t, col.Straggler, "collective %d", i+1)
				assert.Equal(t, want.Straggler.Rank, col.Straggler.Rank)
				assert.Equal(t, want.Straggler.Kind, col.Straggler.Kind)
				assert.Equal(t, want.Straggler.ReceiverRank, col.Straggler.ReceiverRank)
			}
			// Each file alone: a part of the whole, whose kinds and sizes,
			// where it names them (a tree's inner rank sees every link),
			// are the whole's.
			for rank, c := range cols {
				part := c.Result()
				require.NotNil(t, part)
				for _, col := range part.Collectives {
					if col.Kind == nccl.KindUnknown || len(part.Collectives) != len(r.Collectives) {
						continue
					}
					w := r.Collectives[col.Index-1]
					assert.Equal(t, w.Kind, col.Kind, "rank %d's file", rank)
					assert.Equal(t, *w.SizeBytes, *col.SizeBytes, "rank %d's file", rank)
				}
			}
		})
	}
}
