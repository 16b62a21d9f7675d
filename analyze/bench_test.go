package analyze_test

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/nccl"
)

// frameSet holds a capture in memory: one buffer, frame by frame.
type frameSet struct {
	buf   []byte
	ends  []int
	cis   []gopacket.CaptureInfo
	lt    gplayers.LinkType
	bytes int64 // captured bytes
}

// generate writes a synthetic capture into a temporary folder with
// roce-synth's generator and loads it.
func generate(b *testing.B, cfg synth.Config) *frameSet {
	b.Helper()
	path := filepath.Join(b.TempDir(), "bench.pcap")
	f, err := os.Create(path)
	require.NoError(b, err)
	_, err = synth.Generate(cfg, f, nil)
	require.NoError(b, err)
	require.NoError(b, f.Close())
	r, err := capture.Open(path)
	require.NoError(b, err)
	defer r.Close()
	fs := &frameSet{}
	for {
		ci, data, lt, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(b, err)
		fs.buf = append(fs.buf, data...)
		fs.ends = append(fs.ends, len(fs.buf))
		fs.cis = append(fs.cis, ci)
		fs.lt = lt
		fs.bytes += int64(len(data))
	}
	return fs
}

// run feeds the whole capture to a new analyzer per iteration and reports
// packets per second and allocations per packet.
func (fs *frameSet) run(b *testing.B, opts analyze.Options) {
	b.SetBytes(fs.bytes)
	b.ReportAllocs()
	n := len(fs.ends)
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		a := analyze.New(opts)
		prev := 0
		for i, end := range fs.ends {
			a.Feed(fs.cis[i], fs.lt, fs.buf[prev:end])
			prev = end
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(n)*float64(b.N)/elapsed.Seconds(), "pkts/s")
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(n*b.N), "ns/pkt")
}

// BenchmarkAnalyzeHeaderOnly: 1,000,000 packets of RoCE v2 RDMA WRITE over
// 16 QPs, path MTU 4096, cut to 128 bytes (header-only).
func BenchmarkAnalyzeHeaderOnly(b *testing.B) {
	fs := generate(b, synth.Config{Scenario: synth.ScenarioMix, Packets: 1_000_000, QPs: 16, MTU: 4096, MsgSize: 65536, MixOp: "write", SnapLen: 128})
	fs.run(b, analyze.Options{})
}

// BenchmarkAnalyzeHeaderOnlyNCCL: the same, with the collective view
// (nccl.Collector) observing every packet, as roce-dissect's text and
// JSON reports have it: what recognising NCCL costs traffic without it.
func BenchmarkAnalyzeHeaderOnlyNCCL(b *testing.B) {
	fs := generate(b, synth.Config{Scenario: synth.ScenarioMix, Packets: 1_000_000, QPs: 16, MTU: 4096, MsgSize: 65536, MixOp: "write", SnapLen: 128})
	fs.run(b, analyze.Options{Observer: func() func(*analyze.Packet) { return nccl.NewCollector().Add }})
}

// BenchmarkAnalyzeFullICRC: 100,000 full-size packets of the same, every
// ICRC verified.
func BenchmarkAnalyzeFullICRC(b *testing.B) {
	fs := generate(b, synth.Config{Scenario: synth.ScenarioMix, Packets: 100_000, QPs: 16, MTU: 4096, MsgSize: 65536, MixOp: "write"})
	fs.run(b, analyze.Options{})
}
