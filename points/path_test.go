package points

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
)

// along returns the sightings of stream at n points on one path: the
// packets from hostA pass the points in the order path gives, hop apart,
// hostB's in the reverse order; a point misses the first miss[point]
// packets of every flow it sees (absent: none). Sightings are in time
// order, ties in file order (as the merge of the files gives them).
func along(stream []*analyze.Packet, n int, path []int, hop time.Duration, miss map[int]int) []sight {
	var ss []sight
	seen := map[[2]int]int{} // flow, point → packets so far
	for _, p := range stream {
		for k, q := range path {
			if p.Src != hostA {
				q = path[len(path)-1-k]
			}
			key := [2]int{int(p.BTH.DestQP), q}
			seen[key]++
			if seen[key] <= miss[q] {
				continue
			}
			c := *p
			c.Time = p.Time.Add(time.Duration(k) * hop)
			ss = append(ss, sight{q, &c})
		}
	}
	slices.SortStableFunc(ss, func(a, b sight) int {
		return cmp.Or(a.p.Time.Compare(b.p.Time), cmp.Compare(a.file, b.file))
	})
	return ss
}

// TestMatcherPathLinks: the capture points of a path (in any file order)
// give one link per two consecutive points of every flow, upstream first,
// each with every transmission both saw and the hop's delay; the Matcher
// keeps at most 2(n−1)−1 pairs per flow whatever n (the links and the
// pairs two apart), not every pair. A point that misses a flow's first
// packets still takes its place on the path, and what it missed counts
// as missing there. The oracle is the stream itself: 1,024 writes on four
// flows and their acknowledgements, 256 packets a flow.
func TestMatcherPathLinks(t *testing.T) {
	stream := copyStream(1024)
	const perFlow = 256
	rng := rand.New(rand.NewPCG(25, 1))
	perm := func(n int) []int { return rng.Perm(n) }
	ident := func(n int) []int {
		p := make([]int, n)
		for i := range p {
			p[i] = i
		}
		return p
	}
	cases := []struct {
		name string
		path []int
		hop  time.Duration
		miss map[int]int
	}{
		{"2 points, second upstream", []int{1, 0}, 3 * time.Microsecond, nil},
		{"3 points, scrambled", []int{2, 0, 1}, time.Microsecond, nil},
		{"16 points, scrambled", perm(16), 500 * time.Nanosecond, nil},
		{"64 points, scrambled", perm(64), 100 * time.Nanosecond, nil},
		{"64 copies", ident(64), 0, nil},
		{"middle points miss the first packets", ident(5), time.Microsecond, map[int]int{1: 3, 2: 1, 3: 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.path)
			files := make([]string, n)
			for i := range files {
				files[i] = fmt.Sprintf("p%02d", i)
			}
			m := New(Options{Files: files})
			for _, s := range along(stream, n, tc.path, tc.hop, tc.miss) {
				m.Add(s.file, s.p)
			}
			require.Len(t, m.fl, 8)
			for _, fs := range m.fl {
				name := fmt.Sprintf("%s → %s QP %#x", fs.key.src, fs.key.dst, fs.key.qp)
				assert.Len(t, fs.path.links, n-1, "links of %s", name)
				assert.LessOrEqual(t, len(fs.path.links)+len(fs.path.skips), max(2*(n-1)-1, 1), "pairs kept for %s", name)
			}
			rep := m.Finish()
			require.Len(t, rep.Links, 8*(n-1))
			hops := map[[2]string]bool{}
			for k := 0; k+1 < n; k++ {
				hops[[2]string{files[tc.path[k]], files[tc.path[k+1]]}] = true
			}
			for _, l := range rep.Links {
				// Copies: a zero delay puts the file given first upstream,
				// both ways.
				fwd := l.Src == hostA.String() || tc.hop == 0
				if fwd {
					assert.True(t, hops[[2]string{l.From, l.To}], "%s: not a hop of the path", l.String())
				} else {
					assert.True(t, hops[[2]string{l.To, l.From}], "%s: not a hop of the path, backwards", l.String())
				}
				from, to := tc.miss[slices.Index(files, l.From)], tc.miss[slices.Index(files, l.To)]
				assert.Equal(t, uint64(perFlow-max(from, to)), l.Matched, "%s: matched", l.String())
				assert.Equal(t, uint64(max(to-from, 0)), l.Lost+l.NotCaptured, "%s: seen upstream, missing downstream", l.String())
				assert.Equal(t, Delay{Min: int64(tc.hop), Median: int64(tc.hop), P99: int64(tc.hop), Max: int64(tc.hop), Samples: int(l.Matched)}, l.OneWayDelayNs, "%s", l.String())
				assert.Zero(t, l.Corrupted)
				assert.Zero(t, l.Reordered)
			}
		})
	}
}

// TestMatcherOtherStretch: a flow that passes points 0 and 1, then
// (another route) points 2 and 3 only, has a link on each stretch, and
// none between them (the points of the two share no transmission).
func TestMatcherOtherStretch(t *testing.T) {
	m := New(Options{Files: []string{"a", "b", "c", "d"}})
	us := time.Microsecond
	var ss []sight
	for i := range uint32(40) {
		at := time.Duration(i) * 10 * us
		pts := []int{0, 1}
		if i >= 20 {
			pts = []int{2, 3}
		}
		ss = append(ss, sight{pts[0], write(i, at, uint64(i+1))}, sight{pts[1], write(i, at+2*us, uint64(i+1))})
	}
	feed(m, ss)
	rep := m.Finish()
	var got []string
	for _, l := range rep.Links {
		got = append(got, fmt.Sprintf("%s→%s %d", l.From, l.To, l.Matched))
	}
	assert.Equal(t, []string{"a→b 20", "c→d 20"}, got)
}

// TestMatcherLateSighting: a point that first sees a flow long after the
// others (its capture missed the first 15,000 of 20,000 writes, 15 ms,
// more than the window) counts every miss when there are three points or
// fewer, as every pair is kept from the start; with more, the misses
// count from the window before it joins the flow's path.
func TestMatcherLateSighting(t *testing.T) {
	const writes, missed = 20000, 15000
	for _, n := range []int{2, 3, 4} {
		t.Run(fmt.Sprintf("%d points", n), func(t *testing.T) {
			files := []string{"a", "b", "c", "d"}[:n]
			m := New(Options{Files: files})
			var ss []sight
			for i := range uint32(writes) {
				at := time.Duration(i) * time.Microsecond
				for k := range n {
					if k == 1 && i < missed {
						continue
					}
					ss = append(ss, sight{k, write(i, at+time.Duration(k)*100*time.Nanosecond, uint64(i+1))})
				}
			}
			feed(m, ss)
			rep := m.Finish()
			require.Len(t, rep.Links, n-1)
			l := rep.Links[0]
			require.Equal(t, "a → b", l.From+" → "+l.To)
			assert.Equal(t, uint64(writes-missed), l.Matched)
			want := uint64(missed)
			if n > 3 {
				// The transmissions still in the window when b joined.
				want = uint64(DefaultWindow / time.Microsecond)
			}
			assert.InDelta(t, want, l.Lost+l.NotCaptured, 2)
		})
	}
}
