package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// TestStreamedReportIsHeld checks that the report written while it is
// built (one file, text, JSON or CSV) is byte for byte the report the
// command writes from the whole report, which --plot still asks for (the
// plot reads every flow's series; the series are in the JSON either
// way, of the interval given): on every testdata and real capture and on a generated mix of 600
// flows (the text report's top-N summary), -j 1 and -j 2 (sharded), with
// --qp, --all-flows and a findings cap.
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
	files = append(files, mix)
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
