package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/export"
)

// TestExportFileHazards: --export writes only its own files in DIR and
// each error once (issue 22): a symlink planted in DIR under an output's
// name is replaced, its target untouched; an input in DIR named like an
// output is refused, not overwritten; a second run leaves none of the
// first run's packets files; an export that cannot start says so once,
// and leaves no file.
func TestExportFileHazards(t *testing.T) {
	ud, ib := filepath.Join("..", "..", "testdata", "ud.pcap"), filepath.Join("..", "..", "testdata", "ib.pcap")
	udBytes, err := os.ReadFile(ud)
	require.NoError(t, err)
	cases := []struct {
		name string
		// setup prepares base and returns the arguments of each run, in order.
		setup func(t *testing.T, base string) [][]string
		// check looks at base after the last run (its exit status, stderr).
		check func(t *testing.T, base string, code int, stderr string)
	}{
		{"symlink in DIR", func(t *testing.T, base string) [][]string {
			dir := filepath.Join(base, "x")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(base, "target"), []byte("precious"), 0o644))
			for _, name := range []string{export.FlowsFile, export.PacketsFile(0, 0)} {
				require.NoError(t, os.Symlink(filepath.Join(base, "target"), filepath.Join(dir, name)))
			}
			return [][]string{{"-o", "parquet", "--export", dir, ud}}
		}, func(t *testing.T, base string, code int, stderr string) {
			assert.Equal(t, 0, code, stderr)
			got, err := os.ReadFile(filepath.Join(base, "target"))
			require.NoError(t, err)
			assert.Equal(t, "precious", string(got), "the symlink's target is untouched")
			for _, name := range []string{export.FlowsFile, export.PacketsFile(0, 0)} {
				fi, err := os.Lstat(filepath.Join(base, "x", name))
				require.NoError(t, err)
				assert.True(t, fi.Mode().IsRegular(), "%s: the export's own file", name)
			}
		}},
		{"input in DIR named like an output", func(t *testing.T, base string) [][]string {
			dir := filepath.Join(base, "x")
			require.NoError(t, os.MkdirAll(dir, 0o755))
			in := filepath.Join(dir, export.PacketsFile(0, 0))
			require.NoError(t, os.WriteFile(in, udBytes, 0o644))
			return [][]string{{"-o", "parquet", "--export", dir, in}}
		}, func(t *testing.T, base string, code int, stderr string) {
			assert.NotEqual(t, 0, code)
			assert.Contains(t, stderr, "is an input")
			assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
			got, err := os.ReadFile(filepath.Join(base, "x", export.PacketsFile(0, 0)))
			require.NoError(t, err)
			assert.Equal(t, udBytes, got, "the input is untouched")
		}},
		{"second run into the same DIR", func(t *testing.T, base string) [][]string {
			dir := filepath.Join(base, "x")
			return [][]string{{"-o", "parquet", "--export", dir, ud, ib}, {"-o", "parquet", "--export", dir, ud}}
		}, func(t *testing.T, base string, code int, stderr string) {
			assert.Equal(t, 0, code, stderr)
			assert.Equal(t, []string{"collective_arrivals.parquet", "collective_links.parquet", "collectives.parquet",
				"connections.parquet", "findings.parquet", "flows.parquet", export.PacketsFile(0, 0), "pause.parquet"}, dirNames(t, filepath.Join(base, "x")))
		}},
		{"DIR cannot be made", func(t *testing.T, base string) [][]string {
			require.NoError(t, os.WriteFile(filepath.Join(base, "file"), nil, 0o644))
			return [][]string{{"-o", "parquet", "--export", filepath.Join(base, "file", "x"), ud}}
		}, func(t *testing.T, base string, code int, stderr string) {
			assert.NotEqual(t, 0, code)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "the error once: %s", stderr)
			assert.Contains(t, stderr, "not a directory")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			var code int
			var stderr string
			for _, args := range tc.setup(t, base) {
				code, _, stderr = run(t, nil, args...)
			}
			tc.check(t, base, code, stderr)
		})
	}
}

// dirNames are the names in dir, sorted.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
