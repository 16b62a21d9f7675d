package analyze_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gopacket/gopacket"
	gplayers "github.com/gopacket/gopacket/layers"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/analyze"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// recipe is a roce-synth command line of the docs: "go run
// ./cmd/roce-synth SCENARIO flags… -o FILE", or a `$ roce-synth …`
// example (whose output internal/cli's TestDocExamples compares).
var recipe = regexp.MustCompile(`(?m)^(?:go run \./cmd/|\$ )roce-synth ([a-z-]+)((?: [^#\n\\]+)?)$`)

// TestDocRecipesMatchTruth: every roce-synth recipe documented in
// README.md and docs/*.md makes a capture whose report equals the truth
// the generator writes with it (issue 23: "a test runs every documented
// recipe and checks the report against its truth").
func TestDocRecipesMatchTruth(t *testing.T) {
	docs, err := filepath.Glob("../docs/*.md")
	require.NoError(t, err)
	n := 0
	for _, doc := range append(docs, "../README.md") {
		b, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range recipe.FindAllStringSubmatch(string(b), -1) {
			scenario, rest := m[1], strings.Fields(m[2])
			if scenario == "golden" || scenario == "points" || scenario == "nccl" || strings.ToUpper(scenario) == scenario {
				// testdata's generation (TestGolden), capture points
				// (TestCapturePointsMatchTruth), an NCCL job (ncclsynth's
				// TestCollectorFindsTruth, internal/cli's TestNCCLMarksSynth)
				continue
			}
			args := []string{scenario}
			for i := 0; i < len(rest); i++ {
				if rest[i] == "-o" || rest[i] == "--o" {
					i++ // the output file: the capture is made in memory
					continue
				}
				args = append(args, rest[i])
			}
			if strings.Contains(m[2], "[") {
				continue // a usage line, not a recipe
			}
			t.Run(filepath.Base(doc)+"/"+strings.Join(args, " "), func(t *testing.T) {
				cfg, _, _, err := synth.ParseArgs(args)
				require.NoError(t, err)
				var capBuf, truthBuf bytes.Buffer
				truth, err := synth.Generate(cfg, &capBuf, &truthBuf)
				require.NoError(t, err)
				opts := analyze.Options{LinkSpeed: float64(truth.LinkSpeedBps)}
				if cfg.UDPPort != 0 && cfg.UDPPort != 4791 {
					opts.RoCEPorts = []uint16{cfg.UDPPort} // --decode-as udp.port=N, as the doc runs it
				}
				a := analyze.New(opts)
				eachFrame(t, capBuf.Bytes(), func(ci gopacket.CaptureInfo, lt gplayers.LinkType, data []byte) { a.Feed(ci, lt, data) })
				diffs := compareTruth(t, truthBuf.Bytes(), a.Report())
				assert.Empty(t, diffs, "report differs from the truth:\n%s", strings.Join(diffs, "\n"))
			})
			n++
		}
	}
	require.GreaterOrEqual(t, n, 2, "the docs' recipes were found")
	t.Logf("%d documented recipes compared with their truth", n)
}
