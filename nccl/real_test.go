package nccl_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// captures is the real 3-host NCCL job (NCCL 2.20.5, one channel, Ring,
// Simple) with NCCL's own logs.
const captures = "../../../shared/captures/nccl"

// logFacts is what NCCL's logs say of the job: each rank's address
// ("Bootstrap : Using eth0:ADDR" and "rank R nranks N"), the ring of
// channel 0 ("Channel 00/01 :    0   1   2") and each rank's tree parent
// ("Trees [0] c/c/c->R->P").
type logFacts struct {
	addr   map[int]string
	ring   []int
	parent map[int]int
}

var (
	bootstrapRE = regexp.MustCompile(`Bootstrap : Using \w+:([0-9.]+)<`)
	rankRE      = regexp.MustCompile(` rank (\d+) nranks (\d+) `)
	ringRE      = regexp.MustCompile(`Channel 00/01 :((?:\s+\d+)+)\s*$`)
	treeRE      = regexp.MustCompile(`Trees \[0\] \S+->(\d+)->(-?\d+)`)
)

// readLogs parses the logs of the job's hosts.
func readLogs(t *testing.T, files []string) logFacts {
	t.Helper()
	f := logFacts{addr: map[int]string{}, parent: map[int]int{}}
	for _, name := range files {
		fh, err := os.Open(name)
		require.NoError(t, err)
		addr, rank := "", -1
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			line := sc.Text()
			if m := bootstrapRE.FindStringSubmatch(line); m != nil {
				addr = m[1]
			}
			if m := rankRE.FindStringSubmatch(line); m != nil {
				rank, _ = strconv.Atoi(m[1])
			}
			if m := ringRE.FindStringSubmatch(line); m != nil && f.ring == nil {
				for _, s := range strings.Fields(m[1]) {
					n, _ := strconv.Atoi(s)
					f.ring = append(f.ring, n)
				}
			}
			if m := treeRE.FindStringSubmatch(line); m != nil {
				r, _ := strconv.Atoi(m[1])
				p, _ := strconv.Atoi(m[2])
				f.parent[r] = p
			}
		}
		require.NoError(t, sc.Err())
		fh.Close()
		require.NotEmpty(t, addr, name)
		require.GreaterOrEqual(t, rank, 0, name)
		f.addr[rank] = addr
	}
	require.Len(t, f.ring, len(files))
	return f
}

// collect feeds a capture file to an Analyzer with a Collector as its
// observer.
func collect(t *testing.T, name string) *nccl.Collector {
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
	return col
}

func TestRealCaptures(t *testing.T) {
	if _, err := os.Stat(captures); err != nil {
		t.Skipf("%s absent: shared captures not available", captures)
	}
	var pcaps, logs []string
	for i := range 3 {
		pcaps = append(pcaps, filepath.Join(captures, "node"+strconv.Itoa(i)+".pcap"))
		logs = append(logs, filepath.Join(captures, "node"+strconv.Itoa(i)+".log"))
	}
	facts := readLogs(t, logs)
	cols := make([]*nccl.Collector, len(pcaps))
	for i, name := range pcaps {
		cols[i] = collect(t, name)
	}
	whole := nccl.Combine(cols...)
	require.NotNil(t, whole)
	assert.Equal(t, "2.20", whole.FIFOLayout)
	// Every rank at the address of its log.
	var want []nccl.Rank
	for r, a := range facts.addr {
		want = append(want, nccl.Rank{Rank: r, Addr: a})
	}
	slices.SortFunc(want, func(a, b nccl.Rank) int { return a.Rank - b.Rank })
	assert.Equal(t, want, whole.Ranks)
	// The ring of the log, one channel: its connections, each carrying
	// data, its sender and receiver at their ranks' addresses.
	assert.Equal(t, 1, whole.Channels)
	assert.Equal(t, [][]int{facts.ring}, whole.Rings)
	var links [][2]int
	for _, c := range whole.Connections {
		require.NotNil(t, c.SenderRank)
		require.NotNil(t, c.ReceiverRank)
		assert.Equal(t, facts.addr[*c.SenderRank], c.Sender)
		assert.Equal(t, facts.addr[*c.ReceiverRank], c.Receiver)
		assert.True(t, c.Active)
		assert.NotZero(t, c.CTS)
		links = append(links, [2]int{*c.SenderRank, *c.ReceiverRank})
	}
	var ringLinks [][2]int
	for i, r := range facts.ring {
		ringLinks = append(ringLinks, [2]int{r, facts.ring[(i+1)%len(facts.ring)]})
	}
	slices.SortFunc(ringLinks, func(a, b [2]int) int { return a[0] - b[0] })
	assert.Equal(t, ringLinks, links)
	// An AllReduce moves 2(n−1)·S bytes over all links together: the
	// barrier (S = 1) and the all_reduce of 6 × 1024 float32.
	var bytes uint64
	for _, c := range whole.Connections {
		bytes += c.Bytes
	}
	assert.Equal(t, uint64(2*(len(pcaps)-1)*(1+6*1024*4)), bytes)

	// Each file alone: its own part, which never contradicts the whole.
	for i, col := range cols {
		part := col.Result()
		require.NotNil(t, part, pcaps[i])
		assert.Equal(t, whole.FIFOLayout, part.FIFOLayout)
		assert.Subset(t, whole.Ranks, part.Ranks)
		assert.Contains(t, part.Ranks, nccl.Rank{Rank: i, Addr: facts.addr[i]}, "a host sees the CTS written to it")
		require.Len(t, part.Connections, 2, "a host sends on one ring connection and receives on another")
		for _, c := range part.Connections {
			if c.ReceiverRank == nil { // its rank is not in this file
				require.Equal(t, facts.addr[i], c.Sender)
				c.ReceiverRank = new(facts.ring[(slices.Index(facts.ring, i)+1)%len(facts.ring)])
			}
			assert.Contains(t, whole.Connections, c)
		}
		if part.Rings != nil {
			assert.Equal(t, whole.Rings, part.Rings)
		}
	}
}
