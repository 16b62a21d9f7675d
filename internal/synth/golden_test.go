package synth

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testdataDir = "../../testdata"

// TestGolden fails when a committed capture or truth of testdata/ differs
// from what the generator writes now (regenerate: go generate ./...).
func TestGolden(t *testing.T) {
	for _, gf := range Golden() {
		t.Run(gf.Name, func(t *testing.T) {
			cfg, _, _, err := ParseArgs(gf.Args)
			require.NoError(t, err)
			var capBuf, truthBuf bytes.Buffer
			_, err = Generate(cfg, &capBuf, &truthBuf)
			require.NoError(t, err)
			path := filepath.Join(testdataDir, gf.Name)
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go generate ./... to write testdata")
			assert.Less(t, len(want), 100_000, "testdata captures stay under 100 KB")
			assert.True(t, bytes.Equal(want, capBuf.Bytes()), "%s differs from the generator's output: run go generate ./...", path)
			wantTruth, err := os.ReadFile(path + ".truth.json")
			require.NoError(t, err)
			assert.Equal(t, string(wantTruth), truthBuf.String(), "%s.truth.json differs: run go generate ./...", path)
		})
	}
}

// TestGoldenDecodes checks the committed captures and truths themselves:
// each capture of testdata/ decodes frame by frame to what the generator
// says it wrote, and its committed truth adds up and counts the ICRC
// statuses found in the committed bytes.
func TestGoldenDecodes(t *testing.T) {
	for _, gf := range Golden() {
		t.Run(gf.Name, func(t *testing.T) {
			cfg, _, _, err := ParseArgs(gf.Args)
			require.NoError(t, err)
			_, _, infos := generate(t, cfg)
			path := filepath.Join(testdataDir, gf.Name)
			capture, err := os.ReadFile(path)
			require.NoError(t, err, "run go generate ./... to write testdata")
			truthJSON, err := os.ReadFile(path + ".truth.json")
			require.NoError(t, err)
			var tr Truth
			require.NoError(t, json.Unmarshal(truthJSON, &tr))
			checkDecode(t, capture, infos, cfg.Encap)
			checkTruthTotals(t, &tr, infos, capture)
		})
	}
}
