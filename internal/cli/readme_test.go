package cli_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMESample: the report README.md shows is what the command prints
// for that capture today (run from the repository's root, as README's
// set-up command is).
func TestREADMESample(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	const prompt = "$ roce-dissect testdata/loss_nak_gobackn.pcap\n"
	_, rest, ok := strings.Cut(string(readme), prompt)
	require.True(t, ok, "README shows the report of testdata/loss_nak_gobackn.pcap")
	sample, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	t.Chdir("../..")
	code, out, stderr := run(t, nil, "--color=never", "testdata/loss_nak_gobackn.pcap")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, out, sample, "README.md's sample report differs from the command's output: update it")
}
