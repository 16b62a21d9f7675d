// Package nccltest gives tests the real 3-host NCCL job of the shared
// captures (captures/nccl: node0..2.pcap) and what NCCL's own logs
// (node0..2.log) say of it, the oracle the collective view is checked
// against. It is imported by tests only.
package nccltest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Job is the NCCL job of one capture per host, with its logs' facts.
type Job struct {
	Pcaps []string // one per host, node0 first
	Ranks []int    // the rank of each Pcaps' host
	// Addr is each rank's address ("Bootstrap : Using eth0:ADDR" and
	// "rank R nranks N" of its host's log).
	Addr map[int]string
	// Ring is channel 0's ring ("Channel 00/01 :    0   1   2").
	Ring []int
	// Parent is each rank's tree parent, -1 for the root ("Trees [0]
	// c/c/c->R->P").
	Parent map[int]int
	// Sizes are the bytes of each all_reduce the job ran, in order (S as
	// nccl-tests defines it), as the captures' README describes the job:
	// "a barrier (an all_reduce of 1 byte), … an all_reduce of … (24,576
	// bytes)". The logs do not give them; their "rank R/N ok val=N"
	// lines say each all_reduce of ones summed over the N ranks.
	Sizes []uint64
}

var (
	bootstrapRE = regexp.MustCompile(`Bootstrap : Using \w+:([0-9.]+)<`)
	rankRE      = regexp.MustCompile(` rank (\d+) nranks (\d+) `)
	ringRE      = regexp.MustCompile(`Channel 00/01 :((?:\s+\d+)+)\s*$`)
	treeRE      = regexp.MustCompile(`Trees \[0\] \S+->(\d+)->(-?\d+)`)
	jobRE       = regexp.MustCompile(`(?s)## nccl/.*?The job: (.*?)\n\n`)
	sizeRE      = regexp.MustCompile(`all_reduce of (?:(\d+) byte|[^(]*\(([\d,]+) bytes\))`)
)

// Read returns the job in dir (the shared captures' "nccl" folder), and
// skips the test when dir is absent.
func Read(tb testing.TB, dir string) Job {
	tb.Helper()
	if _, err := os.Stat(dir); err != nil {
		tb.Skipf("%s absent: shared captures not available", dir)
	}
	job := Job{Addr: map[int]string{}, Parent: map[int]int{}}
	for i := 0; ; i++ {
		pcap := filepath.Join(dir, fmt.Sprintf("node%d.pcap", i))
		if _, err := os.Stat(pcap); err != nil {
			break
		}
		job.Pcaps = append(job.Pcaps, pcap)
		job.readLog(tb, filepath.Join(dir, fmt.Sprintf("node%d.log", i)))
	}
	require.Len(tb, job.Addr, len(job.Pcaps), "one rank per host")
	require.Len(tb, job.Ring, len(job.Pcaps))
	readme, err := os.ReadFile(filepath.Join(dir, "..", "README.md"))
	require.NoError(tb, err)
	m := jobRE.FindSubmatch(readme)
	require.NotNil(tb, m, "the README describes the nccl job")
	for _, s := range sizeRE.FindAllStringSubmatch(string(m[1]), -1) {
		n, err := strconv.ParseUint(strings.ReplaceAll(s[1]+s[2], ",", ""), 10, 64)
		require.NoError(tb, err)
		job.Sizes = append(job.Sizes, n)
	}
	require.NotEmpty(tb, job.Sizes)
	return job
}

// readLog reads one host's log.
func (job *Job) readLog(tb testing.TB, name string) {
	tb.Helper()
	fh, err := os.Open(name)
	require.NoError(tb, err)
	defer fh.Close()
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
		if m := ringRE.FindStringSubmatch(line); m != nil && job.Ring == nil {
			for _, s := range strings.Fields(m[1]) {
				n, _ := strconv.Atoi(s)
				job.Ring = append(job.Ring, n)
			}
		}
		if m := treeRE.FindStringSubmatch(line); m != nil {
			r, _ := strconv.Atoi(m[1])
			p, _ := strconv.Atoi(m[2])
			job.Parent[r] = p
		}
	}
	require.NoError(tb, sc.Err())
	require.NotEmpty(tb, addr, name)
	require.GreaterOrEqual(tb, rank, 0, name)
	job.Addr[rank] = addr
	job.Ranks = append(job.Ranks, rank)
}

// Successor is rank's successor on the ring.
func (job *Job) Successor(rank int) int {
	for i, r := range job.Ring {
		if r == rank {
			return job.Ring[(i+1)%len(job.Ring)]
		}
	}
	return -1
}
