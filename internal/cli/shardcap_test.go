package cli_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestShardCapsSameReport: with a cap hit by flows or connections spread
// over every shard, every -j gives -j 1's report byte for byte, run after
// run: the shards share the cap's budget, race for its last flows, and
// the combiner finds and reruns what -j 1 tracks.
func TestShardCapsSameReport(t *testing.T) {
	dir := t.TempDir()
	pairs := writeCapture(t, filepath.Join(dir, "pairs.pcap"), func(w io.Writer) error { return writeHostPairs(w, 20000) })
	reqs := writeCapture(t, filepath.Join(dir, "reqs.pcap"), func(w io.Writer) error { return writeHostPairREQs(w, 5000) })
	for _, tc := range []struct {
		name string
		args []string
		hit  []string // what -j 1's JSON says of the caps
	}{
		{"max-flows", []string{"--max-flows", "3000", pairs}, []string{`"packets_of_dropped_flows": 17000,`}},
		{"max-connections", []string{"--max-connections", "1000", reqs}, []string{`"connections_dropped": 4000`}},
		{"both caps", []string{"--max-flows", "700", "--max-connections", "900", reqs}, []string{`"packets_of_dropped_flows": 4300,`, `"connections_dropped": 4100`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, out := range []string{"json", "text"} {
				args := append([]string{"-o", out}, tc.args...)
				code, want, errs := run(t, nil, append([]string{"-j", "1"}, args...)...)
				require.Equal(t, 0, code, errs)
				for _, hit := range tc.hit {
					if out == "json" {
						require.True(t, strings.Contains(want, hit), "-j 1's report says %s", hit)
					}
				}
				for _, j := range []string{"2", "3", "8"} {
					for i := range 3 {
						code, got, errs := run(t, nil, append([]string{"-j", j}, args...)...)
						require.Equal(t, 0, code, errs)
						require.True(t, want == got, "-j %s run %d: %s differs from -j 1's", j, i, out)
					}
				}
			}
		})
	}
}

// BenchmarkShardCaps: the peak heap (peak-heap-B/op) and CPU time of a
// run whose caps are hit by flows or connections spread over every
// shard, at -j 1, 2, 8 and the default: 200,000 one-frame host pairs
// with --max-flows 20000, 100,000 CM REQs of as many host pairs with
// --max-connections 10000, and a flood of 200,000 REQs of new CommIDs in
// one host pair with --max-connections 1000 (docs/robustness.md, "The
// caps at every -j").
func BenchmarkShardCaps(b *testing.B) {
	dir := b.TempDir()
	pairs := writeCapture(b, filepath.Join(dir, "pairs.pcap"), func(w io.Writer) error { return writeHostPairs(w, 200_000) })
	reqs := writeCapture(b, filepath.Join(dir, "reqs.pcap"), func(w io.Writer) error { return writeHostPairREQs(w, 100_000) })
	flood := writeCapture(b, filepath.Join(dir, "flood.pcap"), func(w io.Writer) error { return writeREQs(w, 1, 200_000) })
	for _, in := range []struct {
		name string
		args []string
	}{
		{"flows", []string{"--max-flows", "20000", pairs}},
		{"connections", []string{"--max-connections", "10000", reqs}},
		{"flood", []string{"--max-connections", "1000", flood}},
	} {
		for _, j := range []string{"1", "2", "8", "default"} {
			b.Run(in.name+"/j"+j, func(b *testing.B) {
				args := append([]string{"-o", "json"}, in.args...)
				if j != "default" {
					args = append([]string{"-j", j}, args...)
				}
				runPeak(b, args...)
			})
		}
	}
}

// writeCapture writes the capture write makes to path, and returns path.
func writeCapture(tb testing.TB, path string, write func(io.Writer) error) string {
	tb.Helper()
	f, err := os.Create(path)
	require.NoError(tb, err)
	require.NoError(tb, write(f))
	require.NoError(tb, f.Close())
	return path
}

// TestShardCapRetransmittedREQ: a REQ the connection cap refused and its
// retransmission are one refused connection, not two (review: the second
// pass then stopped a connection too early, and -j 2 dropped one that
// -j 1 keeps). REQs A, R, R again, B, C of two host pairs with
// --max-connections 3: every -j keeps A, R and B.
func TestShardCapRetransmittedREQ(t *testing.T) {
	reqs := []struct {
		pair   int
		commID int
	}{{0, 0x1001}, {1, 0x2001}, {1, 0x2001}, {0, 0x1002}, {0, 0x1003}}
	path := writeCapture(t, filepath.Join(t.TempDir(), "reqs.pcap"), func(w io.Writer) error {
		return writeEach(w, 0, len(reqs), func(i int, ip *gplayers.IPv4) { ownHostPair(reqs[i].pair, ip) },
			func(i int) []gopacket.SerializableLayer { return reqLayers(reqs[i].commID) })
	})
	code, want, errs := run(t, nil, "-o", "json", "-j", "1", "--max-connections", "3", path)
	require.Equal(t, 0, code, errs)
	require.Contains(t, want, `"connections_dropped": 1`)
	for _, j := range []string{"2", "3", "8"} {
		code, got, errs := run(t, nil, "-o", "json", "-j", j, "--max-connections", "3", path)
		require.Equal(t, 0, code, errs)
		assert.Equal(t, want, got, "-j %s", j)
	}
}
