package cli_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// speedRun is one command of a BenchmarkSpeed case: the floor (a nil
// args), the analyzer with args, or tshark.
type speedRun struct {
	name   string
	args   []string // the analyzer's arguments before the capture
	tshark bool
}

// speedRatio is a metric of a BenchmarkSpeed case: the wall time of run
// num over that of run den.
type speedRatio struct{ unit, num, den string }

// BenchmarkSpeed measures the rows of issue 24's table, each run of a
// case one after the other in every iteration, so that their ratios
// compare runs under the same load of the shared machine:
//   - floor: pcapgo and gopacket's DecodingLayerParser over
//     Ethernet/IPv4/UDP reading each BTH's PSN, the least any analyzer
//     must do (speedFloor);
//   - mix16, mix256, mix256cut128: roce-synth mix of 16 and 256 QPs, and
//     the latter cut to 128 bytes: -j 1 over the floor, -j 2 over -j 1;
//   - qps30packets: a QP for every 30 packets, at most the 65,536 the
//     generator makes (the 65,536 in 2,000,000 packets, 30.5 a
//     QP) against 16 QPs, -j 1 each, and -j 2 over -j 1 on the many QPs;
//   - frames4k: frames of 4 KB (write-bw, MTU 4096): -j 1 over the floor,
//     -j 2 over -j 1, and tshark -T fields over -j 1 when tshark is here;
//   - curve/mix256, curve/frames4k: -j 1, 2, 3 and 4, each over -j 1
//     (docs/parallel.md, "Scaling curve");
//   - flows200k: 200,000 one-packet flows, -o json over text at -j 1,
//     and the time over the floor per flow (ns-over-floor/flow).
//
// Every run writes the report to io.Discard. The mixes have
// ROCE_BENCH_SPEED_PACKETS packets (default 400,000; the table
// is of 2,000,000), the 4 KB capture an eighth as many (messages of 256
// frames of 4 KB: 50,000 frames, 200 MB by default); the captures are
// written once into ROCE_BENCH_SPEED_DIR when it is set.
func BenchmarkSpeed(b *testing.B) {
	packets := 400_000
	if s := os.Getenv("ROCE_BENCH_SPEED_PACKETS"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(b, err)
		packets = n
	}
	dir := os.Getenv("ROCE_BENCH_SPEED_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	mix := func(qps, snap int) synth.Config {
		return synth.Config{Scenario: synth.ScenarioMix, Packets: packets, QPs: qps, SnapLen: snap}
	}
	j1, j2 := speedRun{name: "j1", args: []string{"-j", "1"}}, speedRun{name: "j2", args: []string{"-j", "2"}}
	floor := speedRun{name: "floor"}
	mixRatios := []speedRatio{{"j1/floor", "j1", "floor"}, {"j2/j1", "j2", "j1"}}
	type speedCase struct {
		name   string
		files  map[string]synth.Config // the runs' captures by run name ("" for all)
		runs   []speedRun
		ratios []speedRatio
	}
	manyQPs := min(packets/30, 1<<16)
	cases := []speedCase{
		{"mix16", map[string]synth.Config{"": mix(16, 0)}, []speedRun{floor, j1, j2}, mixRatios},
		{"mix256", map[string]synth.Config{"": mix(256, 0)}, []speedRun{floor, j1, j2}, mixRatios},
		{"mix256cut128", map[string]synth.Config{"": mix(256, 128)}, []speedRun{floor, j1, j2}, mixRatios},
		{"qps30packets", map[string]synth.Config{"qps16": mix(16, 0), "many": mix(manyQPs, 0), "many-j2": mix(manyQPs, 0)},
			[]speedRun{{name: "qps16", args: j1.args}, {name: "many", args: j1.args}, {name: "many-j2", args: j2.args}},
			[]speedRatio{{"many/16", "many", "qps16"}, {"many-j2/j1", "many-j2", "many"}}},
		{"frames4k", map[string]synth.Config{"": {Scenario: synth.ScenarioWriteBW, MTU: 4096, MsgSize: 1 << 20, Messages: max(1, packets/8/256)}},
			[]speedRun{floor, j1, j2, {name: "tshark", tshark: true}}, append(mixRatios, speedRatio{"tshark/j1", "tshark", "j1"})},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			paths := map[string]string{}
			for run, cfg := range c.files {
				paths[run] = speedCapture(b, dir, cfg)
			}
			runSpeed(b, c.runs, func(run string) string {
				if p, ok := paths[run]; ok {
					return p
				}
				return paths[""]
			}, c.ratios)
		})
	}
	// The scaling curve (docs/parallel.md): -j 1 to 4 on two cores and
	// more, each -j N over -j 1.
	curve := []speedRun{j1, j2, {name: "j3", args: []string{"-j", "3"}}, {name: "j4", args: []string{"-j", "4"}}}
	curveRatios := []speedRatio{{"j2/j1", "j2", "j1"}, {"j3/j1", "j3", "j1"}, {"j4/j1", "j4", "j1"}}
	for _, c := range []struct {
		name string
		cfg  synth.Config
	}{
		{"curve/mix256", mix(256, 0)},
		{"curve/frames4k", synth.Config{Scenario: synth.ScenarioWriteBW, MTU: 4096, MsgSize: 1 << 20, Messages: max(1, packets/8/256)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := speedCapture(b, dir, c.cfg)
			runSpeed(b, curve, func(string) string { return path }, curveRatios)
		})
	}
	b.Run("flows200k", func(b *testing.B) {
		const flows = 200_000
		path := filepath.Join(dir, "flows200k.pcap")
		if _, err := os.Stat(path); err != nil {
			f, err := os.Create(path)
			require.NoError(b, err)
			require.NoError(b, writeManyQPs(f, flows))
			require.NoError(b, f.Close())
		}
		runs := []speedRun{floor, {name: "text", args: []string{"-j", "1"}}, {name: "json", args: []string{"-j", "1", "-o", "json"}}}
		wall := runSpeed(b, runs, func(string) string { return path }, []speedRatio{{"json/text", "json", "text"}})
		b.ReportMetric(float64(wall["text"]-wall["floor"])/flows, "ns-over-floor/flow")
	})
}

// speedCapture writes the capture of cfg into dir, once, and returns its
// path.
func speedCapture(b *testing.B, dir string, cfg synth.Config) string {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("%s-%dp-%dm-%dqps-mtu%d-snap%d.pcap", cfg.Scenario, cfg.Packets, cfg.Messages, cfg.QPs, cfg.MTU, cfg.SnapLen))
	if _, err := os.Stat(path); err == nil {
		return path
	}
	f, err := os.Create(path + ".part")
	require.NoError(b, err)
	_, err = synth.Generate(cfg, f, nil)
	require.NoError(b, err)
	require.NoError(b, f.Close())
	require.NoError(b, os.Rename(path+".part", path))
	return path
}

// runSpeed runs each of runs on its capture (path) once per iteration,
// one after the other, and reports each run's least wall time over the
// iterations (NAME-ns/op: the run least disturbed by the other work of a
// shared machine) and the ratios; it returns those times. The captures
// are read once before, so that no run pays alone for the disk. A tshark
// run is left out when tshark is not installed.
func runSpeed(b *testing.B, runs []speedRun, path func(string) string, ratios []speedRatio) map[string]int64 {
	b.Helper()
	b.ReportAllocs()
	for _, r := range runs { // into the page cache, which the first run would pay for alone
		f, err := os.Open(path(r.name))
		require.NoError(b, err)
		_, err = io.Copy(io.Discard, f)
		require.NoError(b, errors.Join(err, f.Close()))
	}
	best := map[string]int64{}
	tshark, _ := exec.LookPath("tshark")
	for b.Loop() {
		for _, r := range runs {
			start := time.Now()
			switch {
			case r.tshark && tshark == "":
				continue
			case r.tshark:
				cmd := exec.Command(tshark, "-n", "-r", path(r.name), "-T", "fields", "-e", "infiniband.bth.psn")
				cmd.Stdout = io.Discard
				require.NoError(b, cmd.Run())
			case r.args == nil:
				_, psns, err := speedFloor(path(r.name))
				require.NoError(b, err)
				runtime.KeepAlive(psns) // the PSNs are read
			default:
				if code := cli.Run(context.Background(), append(append([]string(nil), r.args...), path(r.name)), io.Discard, io.Discard); code != 0 {
					b.Fatalf("%s: exit status %d", r.name, code)
				}
			}
			if ns := time.Since(start).Nanoseconds(); best[r.name] == 0 || ns < best[r.name] {
				best[r.name] = ns
			}
		}
	}
	wall := best
	for name, ns := range wall {
		b.ReportMetric(float64(ns), name+"-ns/op")
	}
	for _, q := range ratios {
		if wall[q.num] > 0 && wall[q.den] > 0 {
			b.ReportMetric(float64(wall[q.num])/float64(wall[q.den]), q.unit)
		}
	}
	return wall
}

// speedFloor reads a pcap file with pcapgo and decodes each frame with
// gopacket's DecodingLayerParser over Ethernet, 802.1Q, IPv4 and UDP,
// reading the PSN of each BTH (UDP port 4791): the least any analyzer
// of the capture must do. It returns how many BTHs it read and the sum of
// their PSNs.
func speedFloor(path string) (int, uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return 0, 0, err
	}
	var (
		eth   gplayers.Ethernet
		vlan  gplayers.Dot1Q
		ip4   gplayers.IPv4
		udp   gplayers.UDP
		psns  uint64
		bths  int
		found []gopacket.LayerType
	)
	parser := gopacket.NewDecodingLayerParser(gplayers.LayerTypeEthernet, &eth, &vlan, &ip4, &udp)
	parser.IgnoreUnsupported = true
	for {
		data, _, err := r.ZeroCopyReadPacketData()
		if errors.Is(err, io.EOF) {
			return bths, psns, nil
		}
		if err != nil {
			return bths, psns, err
		}
		if err := parser.DecodeLayers(data, &found); err != nil {
			continue
		}
		if len(found) > 0 && found[len(found)-1] == gplayers.LayerTypeUDP && udp.DstPort == 4791 && len(udp.Payload) >= 12 {
			p := udp.Payload
			psns += uint64(p[9])<<16 | uint64(p[10])<<8 | uint64(p[11])
			bths++
		}
	}
}

// TestSpeedFloor: the floor of BenchmarkSpeed reads every BTH of a
// RoCE v2 capture, as many as the generator's truth counts packets.
func TestSpeedFloor(t *testing.T) {
	for _, file := range []string{"mix_small.pcap", "loss_nak_gobackn.pcap"} {
		path := filepath.Join("../../testdata", file)
		b, err := os.ReadFile(path + ".truth.json")
		require.NoError(t, err)
		var truth synth.Truth
		require.NoError(t, json.Unmarshal(b, &truth))
		n, _, err := speedFloor(path)
		require.NoError(t, err)
		require.Equal(t, truth.RoCEPackets, n, file)
	}
}
