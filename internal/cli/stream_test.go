package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/analyzetest"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestStreamedReportIsHeld checks that the report written while it is
// built (one file, text, JSON or CSV) is byte for byte the report the
// command writes from the whole report, which --plot still asks for (the
// plot reads every flow's series; the series are in the JSON either
// way, of the interval given): on every testdata and real capture and on a generated mix of 600
// flows (the text report's top-N summary) and on testdata's NIC
// behaviours one after another (nicFlowsCapture: flows with NIC objects
// after the text report keeps one), -j 1 and -j 2 (sharded), with --qp,
// --all-flows and a findings cap.
func TestStreamedReportIsHeld(t *testing.T) {
	files, err := filepath.Glob("../../testdata/*.pcap*")
	require.NoError(t, err)
	real, _ := filepath.Glob("../../../shared/captures/*/*.pcap*")
	files = append(files, real...)
	dir := t.TempDir()
	mix := filepath.Join(dir, "mix.pcap")
	f, err := os.Create(mix)
	require.NoError(t, err)
	_, err = synth.Generate(synth.Config{Scenario: synth.ScenarioMix, Packets: 20000, QPs: 300}, f, nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	files = append(files, mix, nicFlowsCapture(t, dir))
	plot := filepath.Join(dir, "plot.svg")
	for _, file := range files {
		for _, extra := range [][]string{{}, {"--qp", "0x11"}, {"--all-flows"}, {"--max-findings", "3"}} {
			for _, format := range []string{"text", "json", "csv"} {
				for _, j := range []string{"1", "2"} {
					// --interval: --plot's default interval is finer
					args := append([]string{"--color=never", "-o", format, "-j", j, "--interval", "1ms"}, extra...)
					code, got, gerr := runCLI(append(args, file)...)
					wcode, want, werr := runCLI(append(args, "--plot", plot, file)...)
					require.Equal(t, want, got, "%s %v", file, args)
					if strings.Contains(werr, "--plot") { // no flow to plot (--qp): the report is written first
						require.Equal(t, 0, code, "%s %v", file, args)
						require.Empty(t, gerr, "%s %v", file, args)
						continue
					}
					require.Equal(t, wcode, code, "%s %v", file, args)
					require.Equal(t, werr, gerr, "%s %v", file, args)
				}
			}
		}
	}
}

// nicFlowsCapture writes into dir, and returns, testdata's captures of
// NIC behaviours one after another (analyzetest.Concat): a capture of
// several flows each with NIC figures of its own, which the text report's
// NIC section lists.
func nicFlowsCapture(t *testing.T, dir string) string {
	t.Helper()
	frames, cis := analyzetest.Concat(t, filepath.Join("..", "..", "testdata"), "ecn_cnp.pcap", "loss_nak_gobackn.pcap", "rnr_corrupt_icrc.pcap", "loss_behind_tap.pcap")
	path := filepath.Join(dir, "nic_flows.pcap")
	writePcap(t, path, gplayers.LinkTypeEthernet, frames, cis)
	return path
}

// writePcap writes frames, captured as cis say, to a pcap file at path
// (nanosecond times, snap length 262,144).
func writePcap(t *testing.T, path string, lt gplayers.LinkType, frames [][]byte, cis []gopacket.CaptureInfo) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w := pcapgo.NewWriterNanos(f)
	require.NoError(t, w.WriteFileHeader(262144, lt))
	for i, data := range frames {
		require.NoError(t, w.WritePacket(cis[i], data))
	}
	require.NoError(t, f.Close())
}
