package nccl_test

import (
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/nccltest"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// captures is the real 3-host NCCL job (NCCL 2.20.5, one channel, Ring,
// Simple) with NCCL's own logs.
const captures = "../../shared/captures/nccl"

// collect feeds a capture file to an Analyzer with a Collector as its
// observer.
func collect(t *testing.T, name string) *nccl.Collector {
	t.Helper()
	col, _ := analyzeFile(t, name)
	return col
}

// analyzeFile feeds a capture file to an Analyzer with a Collector as its
// observer, and returns the Collector and the Analyzer's report.
func analyzeFile(t *testing.T, name string) (*nccl.Collector, *analyze.Report) {
	t.Helper()
	col := nccl.NewCollector()
	a := analyze.New(analyze.Options{Observer: func() func(*analyze.Packet) { return col.Add }})
	cr, err := capture.Open(name)
	require.NoError(t, err)
	defer cr.Close()
	for {
		ci, data, lt, err := cr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		a.Feed(ci, lt, data)
	}
	return col, a.Finish()
}

func TestRealCaptures(t *testing.T) {
	job := nccltest.Read(t, captures)
	cols := make([]*nccl.Collector, len(job.Pcaps))
	for i, name := range job.Pcaps {
		cols[i] = collect(t, name)
	}
	whole := nccl.Combine(cols...)
	require.NotNil(t, whole)
	assert.Equal(t, "2.20", whole.FIFOLayout)
	// Every rank at the address of its log.
	var want []nccl.Rank
	for r, a := range job.Addr {
		want = append(want, nccl.Rank{Rank: r, Addr: a})
	}
	slices.SortFunc(want, func(a, b nccl.Rank) int { return a.Rank - b.Rank })
	assert.Equal(t, want, whole.Ranks)
	// The ring of the log, one channel: its connections, each carrying
	// data, its sender and receiver at their ranks' addresses.
	assert.Equal(t, 1, whole.Channels)
	assert.Equal(t, [][]int{job.Ring}, whole.Rings)
	var links, ringLinks [][2]int
	for _, c := range whole.Connections {
		require.NotNil(t, c.SenderRank)
		require.NotNil(t, c.ReceiverRank)
		assert.Equal(t, job.Addr[*c.SenderRank], c.Sender)
		assert.Equal(t, job.Addr[*c.ReceiverRank], c.Receiver)
		assert.True(t, c.Active)
		assert.NotZero(t, c.CTS)
		links = append(links, [2]int{*c.SenderRank, *c.ReceiverRank})
	}
	for r := range job.Addr {
		ringLinks = append(ringLinks, [2]int{r, job.Successor(r)})
	}
	slices.SortFunc(ringLinks, func(a, b [2]int) int { return a[0] - b[0] })
	assert.Equal(t, ringLinks, links)
	// An AllReduce moves 2(n−1)·S bytes over all links together: the
	// barrier (S = 1) and the all_reduce of 6 × 1024 float32.
	var bytes uint64
	for _, c := range whole.Connections {
		bytes += c.Bytes
	}
	assert.Equal(t, uint64(2*(len(job.Pcaps)-1)*(1+6*1024*4)), bytes)
	// The collectives: one per all_reduce of the job, S as its README
	// says, their links' bytes 2(n−1)·S, the ring's links only.
	n := len(job.Pcaps)
	require.Len(t, whole.Collectives, len(job.Sizes))
	for i, col := range whole.Collectives {
		assert.Equal(t, i+1, col.Index)
		assert.Equal(t, nccl.KindAllReduce, col.Kind)
		assert.Equal(t, nccl.AlgorithmRing, col.Algorithm)
		require.NotNil(t, col.SizeBytes)
		assert.Equal(t, job.Sizes[i], *col.SizeBytes)
		var sum uint64
		var got [][2]int
		for _, l := range col.Links {
			sum += l.Bytes
			got = append(got, [2]int{*l.SenderRank, *l.ReceiverRank})
		}
		assert.Equal(t, 2*uint64(n-1)*job.Sizes[i], sum)
		assert.Equal(t, ringLinks, got)
		require.Len(t, col.Arrivals, n)
		require.NotNil(t, col.BusyNs)
		assert.LessOrEqual(t, *col.BusyNs, col.DurationNs)
		assert.Equal(t, col.End.Sub(col.Start).Nanoseconds(), col.DurationNs)
		require.NotNil(t, col.AlgBWBps)
		assert.InEpsilon(t, float64(*col.SizeBytes)*8e9/float64(*col.BusyNs), *col.AlgBWBps, 1e-9)
		assert.InEpsilon(t, *col.AlgBWBps*2*float64(n-1)/float64(n), *col.BusBWBps, 1e-9)
	}

	// Each file alone: its own part, which never contradicts the whole.
	for i, col := range cols {
		part := col.Result()
		require.NotNil(t, part, job.Pcaps[i])
		assert.Equal(t, whole.FIFOLayout, part.FIFOLayout)
		assert.Subset(t, whole.Ranks, part.Ranks)
		rank := job.Ranks[i]
		assert.Contains(t, part.Ranks, nccl.Rank{Rank: rank, Addr: job.Addr[rank]}, "a host sees the CTS written to it")
		require.Len(t, part.Connections, 2, "a host sends on one ring connection and receives on another")
		for _, c := range part.Connections {
			if c.ReceiverRank == nil { // its rank is not in this file
				require.Equal(t, job.Addr[rank], c.Sender)
				c.ReceiverRank = new(job.Successor(rank))
			}
			assert.Contains(t, whole.Connections, c)
		}
		if part.Rings != nil {
			assert.Equal(t, whole.Rings, part.Rings)
		}
		// Its collectives: the whole's, as far as it sees them.
		require.Len(t, part.Collectives, len(whole.Collectives), job.Pcaps[i])
		for k, col := range part.Collectives {
			w := whole.Collectives[k]
			assert.Equal(t, w.Index, col.Index)
			assert.Contains(t, []string{w.Kind, nccl.KindUnknown}, col.Kind)
			if col.SizeBytes != nil {
				assert.Equal(t, *w.SizeBytes, *col.SizeBytes)
			}
			assert.False(t, col.Start.Before(w.Start), "%s: a part starts no earlier than the whole", job.Pcaps[i])
			// A link's figures (its times are those of the point that saw
			// it, apart from the whole's first sightings).
			figures := func(l nccl.Link) [5]uint64 {
				r := job.Successor(*l.SenderRank)
				if l.ReceiverRank != nil {
					r = *l.ReceiverRank
				}
				return [5]uint64{uint64(*l.SenderRank), uint64(r), l.Bytes, l.Messages, l.Steps}
			}
			var all [][5]uint64
			for _, l := range w.Links {
				all = append(all, figures(l))
			}
			for _, l := range col.Links {
				assert.Contains(t, all, figures(l))
			}
			for _, a := range col.Arrivals {
				wa := w.Arrivals[slices.IndexFunc(w.Arrivals, func(b nccl.Arrival) bool { return b.Rank == a.Rank })]
				if a.FirstCTS != nil {
					assert.False(t, a.FirstCTS.Before(*wa.FirstCTS))
				}
				if a.FirstData != nil {
					assert.False(t, a.FirstData.Before(*wa.FirstData))
				}
			}
		}
	}
}
