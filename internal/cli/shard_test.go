package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/synth"
	"github.com/roce-dissect/roce-dissect/layers"
)

func gzipWriter(w *bytes.Buffer) *gzip.Writer { return gzip.NewWriter(w) }

// runCLI runs the command on args and returns its exit status, stdout
// and stderr.
func runCLI(args ...string) (int, string, string) { return runStdin(nil, args...) }

func runStdin(stdin []byte, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := RunWithStdin(context.Background(), args, bytes.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

// sameAsSequential checks that the text, JSON and CSV outputs (and
// stderr, and the exit status) of -j 2, 3 and 7 are byte for byte those
// of -j 1: the sequential analysis is the oracle.
func sameAsSequential(t *testing.T, file string, extra ...string) {
	t.Helper()
	// With 8 cores -j 2, 3 and 7 analyze on exactly 2, 3 and 7 shards,
	// and -j 8 on shardsPerCore×8 (all cores: more shards than cores),
	// whatever the cores of the machine running the test.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(8))
	for _, format := range []string{"text", "json", "csv"} {
		args := append([]string{"--color=never", "-o", format}, extra...)
		code, want, werr := runCLI(append(args, "-j", "1", file)...)
		for _, j := range []string{"2", "3", "7", "8"} {
			gcode, got, gerr := runCLI(append(args, "-j", j, file)...)
			assert.Equal(t, code, gcode, "%s -o %s -j %s: exit status", file, format, j)
			assert.Equal(t, werr, gerr, "%s -o %s -j %s: stderr", file, format, j)
			if !assert.Equal(t, want, got, "%s -o %s -j %s", file, format, j) {
				return
			}
		}
	}
}

// shardExact runs the sharded analysis of a file on n shards and returns
// its combined report, how many shards had frames, and why the report is
// not exact (nil: it is).
func shardExact(t *testing.T, n int, args ...string) (*analyze.Report, int, error) {
	t.Helper()
	cfg, files, err := parseArgs(args)
	require.NoError(t, err)
	r := &runner{cfg: cfg}
	res := r.shardPass(context.Background(), oneFile(files[0]), n, r.options(oneFile(files[0]), false), false)
	require.NoError(t, res.err)
	busy := 0
	for _, f := range res.frames {
		if f > 0 {
			busy++
		}
	}
	rep := res.report
	if s := res.stream; s != nil { // the report written while built (streams): built whole here
		var flows []analyze.Flow
		for f := (analyze.Flow{}); s.Next(&f); {
			flows = append(flows, f)
		}
		rep = s.End()
		if flows != nil {
			rep.Flows = flows
		}
	}
	return rep, busy, res.combineErr
}

// generate writes a roce-synth capture.
func generate(t *testing.T, dir, name string, cfg synth.Config) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = synth.Generate(cfg, f, nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path
}

// frameAt is one frame of a capture being interleaved.
type frameAt struct {
	ci   gopacket.CaptureInfo
	data []byte
	src  int
}

// interleave writes one capture of the frames of several RoCE v2 (IPv4)
// captures of one host pair each, merged by time (each shifted by its
// index × shift), the hosts of capture i renamed 10.200+i.x.y. Their
// ICRCs are recomputed for the new addresses where they verified before,
// so that only the impairments the generator wrote show.
func interleave(t *testing.T, out string, shift int64, inputs ...string) {
	t.Helper()
	interleaveDup(t, out, shift, 0, 0, inputs...)
}

// interleaveDup is interleave, with the third frame of every input (the
// RTU of roce-synth's CM handshake) repeated dup more times.
func interleaveDup(t *testing.T, out string, shift int64, third, dup int, inputs ...string) {
	t.Helper()
	var all []frameAt
	for i, in := range inputs {
		cr, err := capture.Open(in)
		require.NoError(t, err)
		a := analyze.New(analyze.Options{})
		for {
			ci, data, lt, err := cr.Next()
			if err != nil {
				break
			}
			require.Equal(t, gplayers.LinkTypeEthernet, lt)
			d := append([]byte(nil), data...)
			ok := a.Feed(ci, lt, d).ICRC.Status == layers.ICRCOK
			if len(d) >= 34 && binary.BigEndian.Uint16(d[12:14]) == uint16(gplayers.EthernetTypeIPv4) {
				d[14+12+1], d[14+16+1] = byte(200+i), byte(200+i)
				if ok {
					p := analyze.New(analyze.Options{}).Feed(ci, lt, d)
					if p.ICRC.Status == layers.ICRCBad {
						end := 14 + int(binary.BigEndian.Uint16(d[16:18]))
						binary.LittleEndian.PutUint32(d[end-4:end], p.ICRC.Expected)
					}
				}
			}
			ci.Timestamp = ci.Timestamp.Add(time.Duration(int64(i) * shift))
			all = append(all, frameAt{ci: ci, data: d, src: i})
			if third++; third == 3 {
				for range dup {
					all = append(all, frameAt{ci: ci, data: d, src: i})
				}
			}
		}
		third = 0
		cr.Close()
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].ci.Timestamp.Before(all[j].ci.Timestamp) })
	f, err := os.Create(out)
	require.NoError(t, err)
	w := pcapgo.NewWriterNanos(f)
	require.NoError(t, w.WriteFileHeader(65535, gplayers.LinkTypeEthernet))
	for _, fr := range all {
		require.NoError(t, w.WritePacket(fr.ci, fr.data))
	}
	require.NoError(t, f.Close())
}

// TestShardSameAsSequential: on every testdata capture and every shared
// real capture, -j 2, 3, 7 print what -j 1 prints, byte for byte.
func TestShardSameAsSequential(t *testing.T) {
	caps, err := filepath.Glob("../../testdata/*.pcap*")
	require.NoError(t, err)
	real, _ := filepath.Glob("../../../shared/captures/*/*.pcap*")
	for _, file := range append(caps, real...) {
		if strings.HasSuffix(file, ".json") {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) { sameAsSequential(t, file) })
	}
}

// generatedCaptures writes captures of many host pairs: roce-synth mix in
// every encapsulation and with the capture artefacts, and single
// connections with every impairment interleaved (each its own host pair).
func generatedCaptures(t *testing.T, dir string, packets int) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i, encap := range []synth.Encap{synth.EncapIPv4, synth.EncapIPv6, synth.EncapVLAN, synth.EncapRoCEv1, synth.EncapIB, synth.EncapERF} {
		name := "mix_" + encap.String()
		out[name] = generate(t, dir, name+".pcap", synth.Config{Scenario: synth.ScenarioMix, Encap: encap, Packets: packets, QPs: 64, Seed: uint64(i + 3)})
	}
	out["mix_header_only"] = generate(t, dir, "mix_snap.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: packets, QPs: 48, SnapLen: 128})
	out["mix_pcapng"] = generate(t, dir, "mix.pcapng", synth.Config{Scenario: synth.ScenarioMix, Packets: packets, QPs: 40, Format: synth.FormatPcapNG, Seed: 9})
	out["mix_cut"] = generate(t, dir, "mix_cut.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: packets, QPs: 32, Artefacts: synth.Artefacts{CutFrames: 243}})
	out["mix_sniffer"] = generate(t, dir, "mix_sniffer.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: packets, QPs: 32, SnifferSrcPort: true})
	out["mix_read"] = generate(t, dir, "mix_read.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: packets, QPs: 32, MixOp: "read", MTU: 512})

	psns := func(v ...uint32) []synth.PSNRef {
		var r []synth.PSNRef
		for _, p := range v {
			r = append(r, synth.PSNRef{Value: p, Relative: true})
		}
		return r
	}
	var parts []string
	for i, c := range []synth.Config{
		{Scenario: synth.ScenarioWriteBW, Messages: 64, Impairments: synth.Impairments{Drop: psns(3, 40)}},
		{Scenario: synth.ScenarioWriteBW, Messages: 64, Impairments: synth.Impairments{NAK: psns(5), Dup: psns(20), Reorder: psns(30)}},
		{Scenario: synth.ScenarioSendBW, Messages: 64, Impairments: synth.Impairments{RNR: psns(7), ECN: psns(9, 10), CorruptICRC: psns(12)}},
		{Scenario: synth.ScenarioReadBW, Messages: 48, Impairments: synth.Impairments{NAK: psns(8), Drop: psns(32)}},
		{Scenario: synth.ScenarioAtomic, Messages: 64, Impairments: synth.Impairments{Drop: psns(4), Dup: psns(8)}},
		{Scenario: synth.ScenarioUD, Messages: 64, Impairments: synth.Impairments{Drop: psns(2)}},
		{Scenario: synth.ScenarioWriteBW, Messages: 64, SnapLen: 100, Impairments: synth.Impairments{Drop: psns(11), Reorder: psns(15)}},
		{Scenario: synth.ScenarioWriteBW, Messages: 64, NIC: synth.NICKnobs{Tap: "requester"}, Impairments: synth.Impairments{NAK: psns(25)}},
	} {
		c.Seed = uint64(100 + i) // its own CommIDs
		parts = append(parts, generate(t, dir, fmt.Sprintf("part%d.pcap", i), c))
	}
	out["impairments"] = filepath.Join(dir, "impairments.pcap")
	interleave(t, out["impairments"], 3000, parts...)
	return out
}

// TestShardGenerated: on captures of many host pairs, the sharded
// analysis is exact by construction (CombineShards reports nothing that
// would make it fall back) and prints what -j 1 prints.
func TestShardGenerated(t *testing.T) {
	packets := 30000
	if testing.Short() {
		packets = 5000
	}
	for name, file := range generatedCaptures(t, t.TempDir(), packets) {
		t.Run(name, func(t *testing.T) {
			rep, busy, err := shardExact(t, 3, "-j", "3", file)
			require.NoError(t, err)
			require.NotEmpty(t, rep.Flows)
			require.GreaterOrEqual(t, busy, 2, "one shard had every frame")
			sameAsSequential(t, file)
		})
	}
}

// TestShardCommIDClash: two connections of different host pairs with the
// same CM CommIDs (the same generator seed) are not disjoint shards; the
// file is then analyzed sequentially, with the same output.
func TestShardCommIDClash(t *testing.T) {
	dir := t.TempDir()
	a := generate(t, dir, "a.pcap", synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 16})
	b := generate(t, dir, "b.pcap", synth.Config{Scenario: synth.ScenarioSendBW, Messages: 16})
	file := filepath.Join(dir, "clash.pcap")
	interleave(t, file, 1000, a, b)
	var hit bool
	for n := 2; n <= 7; n++ {
		_, _, err := shardExact(t, n, "-j", fmt.Sprint(n), file)
		if err != nil {
			require.ErrorIs(t, err, analyze.ErrNotDisjoint)
			hit = true
		}
	}
	require.True(t, hit, "the two host pairs never landed in different shards")
	sameAsSequential(t, file)
}

// TestShardMaxFlows: with --max-flows hit, the flows tracked are the first
// ones by creation frame capture-wide, in one pass: the sequential
// report.
func TestShardMaxFlows(t *testing.T) {
	dir := t.TempDir()
	file := generate(t, dir, "mix.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 8000, QPs: 64})
	rep, _, err := shardExact(t, 3, "-j", "3", "--max-flows", "10", file)
	require.NoError(t, err, "one pass")
	require.Len(t, rep.Flows, 10)
	for _, n := range []string{"1", "10", "33", "127"} {
		t.Run(n, func(t *testing.T) {
			sameAsSequential(t, file, "--max-flows", n)
			_, out, _ := runCLI("-o", "json", "-j", "2", "--max-flows", n, file)
			assert.Contains(t, out, `"flows_dropped"`)
		})
	}
}

// TestShardStdinGzip: standard input and gzip files are sharded too.
func TestShardStdinGzip(t *testing.T) {
	dir := t.TempDir()
	file := generate(t, dir, "mix.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 6000, QPs: 32})
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	_, want, _ := runCLI("-o", "json", "-j", "1", file)
	code, got, errs := runStdin(data, "-o", "json", "-j", "2", "-")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, want, stdinAs(got, file))
	var gz bytes.Buffer
	zw := gzipWriter(&gz)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	gzFile := filepath.Join(dir, "mix.pcap.gz")
	require.NoError(t, os.WriteFile(gzFile, gz.Bytes(), 0o644))
	sameAsSequential(t, gzFile)

	// Standard input is read once, so it is analyzed on one core: with the
	// flow cap hit too, its report is -j 1's, and stderr says nothing.
	_, want, _ = runCLI("-o", "json", "-j", "1", "--max-flows", "5", file)
	code, got, errs = runStdin(data, "-o", "json", "-j", "2", "--max-flows", "5", "-")
	require.Equal(t, 0, code, errs)
	assert.Empty(t, errs)
	assert.Equal(t, want, stdinAs(got, file))
}

// stdinAs names file, in the hosts of a JSON report of standard input,
// where the report says "<stdin>" (HTML-escaped, as encoding/json
// writes it).
func stdinAs(report, file string) string {
	return strings.Replace(report, `"file": "\u003cstdin\u003e"`, fmt.Sprintf("%q: %q", "file", file), 1)
}

// TestShardLarge: a large mix of many QPs and a long interleaving.
func TestShardLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large capture")
	}
	dir := t.TempDir()
	file := generate(t, dir, "big.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 300000, QPs: 1024, Seed: 77})
	rep, busy, err := shardExact(t, 7, "-j", "7", file)
	require.NoError(t, err)
	// Every shard but the reader's own (shard 0), whose reading of every
	// frame (a quarter of analyzing it: analyze/placer.go) is already more
	// than a seventh of the work.
	require.Equal(t, 6, busy)
	require.Len(t, rep.Connections, 1024)
	sameAsSequential(t, file)
}

// TestShardConnectionCap: --max-connections hit across host pairs tracks
// the first connections by REQ frame, as one core does, in one pass.
func TestShardConnectionCap(t *testing.T) {
	file := generate(t, t.TempDir(), "mix.pcap", synth.Config{Scenario: synth.ScenarioMix, Packets: 8000, QPs: 64})
	rep, _, err := shardExact(t, 3, "-j", "3", "--max-connections", "63", file)
	require.NoError(t, err, "one pass")
	// The 63 CM connections the cap kept, then the pair whose REQ it
	// refused, inferred from its flows as the REQ's QPNs are not known.
	require.Len(t, rep.Connections, 64)
	for i, c := range rep.Connections {
		assert.Equal(t, i == 63, c.State == analyze.StateInferred, "connection %d", c.ID)
	}
	// At 10 the REPs and RTUs of the 54 connections refused outnumber the
	// orphans kept to check their CommIDs across shards (10): not the
	// cap but that check sends the capture to one Analyzer.
	_, _, err = shardExact(t, 3, "-j", "3", "--max-connections", "10", file)
	require.ErrorIs(t, err, analyze.ErrNotDisjoint)
	assert.Contains(t, err.Error(), "CM messages without their REQ in one shard, more than are kept to check")
	assert.NotContains(t, err.Error(), "cap")
	for _, n := range []string{"1", "10", "63"} {
		t.Run(n, func(t *testing.T) { sameAsSequential(t, file, "--max-connections", n) })
	}
	sameAsSequential(t, file, "--max-connections", "7", "--max-flows", "20")
}

// TestShardCapturewide: the decisions a shard takes on capture-wide
// counts are replayed over all shards: a CM flood only the whole capture
// shows (each host pair's RTU repeated), and frames cut by a capture tool
// next to whole frames of other host pairs longer than the cut.
func TestShardCapturewide(t *testing.T) {
	dir := t.TempDir()
	var parts []string
	for i := range 4 {
		parts = append(parts, generate(t, dir, fmt.Sprintf("p%d.pcap", i), synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 8, Seed: uint64(10 + i)}))
	}
	flood := filepath.Join(dir, "flood.pcap")
	interleaveDup(t, flood, 100, 0, 400, parts...)
	rep, _, err := shardExact(t, 2, "-j", "2", flood)
	require.NoError(t, err)
	kinds := map[analyze.Kind]int{}
	for _, fd := range rep.Findings {
		kinds[fd.Kind]++
	}
	require.Equal(t, 1, kinds[analyze.KindCMFlood], "the flood the whole capture shows")
	sameAsSequential(t, flood)

	// Tool-cut host pairs (243 bytes) and whole ones (longer): which
	// short frames are malformed depends on frames of other host pairs.
	cut := generate(t, dir, "cut.pcap", synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 8, Seed: 21, Artefacts: synth.Artefacts{CutFrames: 243}})
	cut2 := generate(t, dir, "cut2.pcap", synth.Config{Scenario: synth.ScenarioSendBW, Messages: 8, Seed: 22, Artefacts: synth.Artefacts{CutFrames: 243}})
	mixed := filepath.Join(dir, "mixed.pcap")
	interleave(t, mixed, 2000, cut, cut2, parts[0])
	_, _, err = shardExact(t, 2, "-j", "2", mixed)
	require.ErrorIs(t, err, analyze.ErrNotDisjoint, "a shard judged a frame cut that the capture judges malformed: sequential")
	sameAsSequential(t, mixed)
	mixed2 := filepath.Join(dir, "mixed2.pcap")
	interleave(t, mixed2, 50, cut, parts[1], cut2)
	sameAsSequential(t, mixed2)
	cutOnly := filepath.Join(dir, "cutonly.pcap")
	interleave(t, cutOnly, 500, cut, cut2)
	_, _, err = shardExact(t, 2, "-j", "2", cutOnly)
	require.NoError(t, err, "cut frames of one length in every host pair replay as they were decided")
	sameAsSequential(t, cutOnly)
}

// TestShards: -j n shards a file n ways while n is fewer than the cores,
// and over shardsPerCore shards a core when it takes them all.
func TestShards(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, tc := range []struct{ jobs, want int }{
		{2, 2}, {3, 3}, {4, 4 * shardsPerCore}, {5, 4 * shardsPerCore}, {100, 100},
	} {
		assert.Equal(t, tc.want, shards(tc.jobs), "-j %d on 4 cores", tc.jobs)
	}
}
