package sqltest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyCapture writes testdata's capture src to dir/name and returns its
// path.
func copyCapture(t *testing.T, dir, name, src string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "testdata", src))
	require.NoError(t, err)
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// jsonText is s as encoding/json writes it, read back: valid UTF-8, a
// U+FFFD for each byte that is not.
func jsonText(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var out string
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// column is the values of a query's only column, in its order.
func column(t *testing.T, res result) []string {
	t.Helper()
	require.Len(t, res.cols, 1)
	var out []string
	for _, r := range res.rows {
		out = append(out, r[0])
	}
	return out
}

// TestNamesNotUTF8: captures whose file names are not UTF-8 (one with a
// newline too) are exported with --export, and DuckDB reads the fleet:
// every query of sql/ and docs/ runs, every view reads whole, and each
// name column holds the name as the JSON report writes it (the oracle),
// a U+FFFD for each byte that is not UTF-8.
func TestNamesNotUTF8(t *testing.T) {
	src := t.TempDir()
	one := copyCapture(t, src, "lost \xff\xfe.pcap", "loss_nak_gobackn.pcap")
	two := []string{copyCapture(t, src, "a\xc3\n.pcap", "loss_nak_gobackn.pcap"), copyCapture(t, src, "b\xe2\x82.pcap", "rnr_corrupt_icrc.pcap")}
	root := t.TempDir()
	reps := exportCaptures(t, root, map[string][]string{"one": {one}, "two": two})
	conn := openFleet(t, root)

	for name, q := range queryFiles(t) {
		t.Run(name, func(t *testing.T) {
			res, err := query(t, conn, q)
			require.NoError(t, err)
			assert.NotEmpty(t, res.cols)
		})
	}
	for _, view := range []string{"packets", "flows", "connections", "findings", "pause"} {
		_, err := query(t, conn, "SELECT * FROM "+view)
		require.NoError(t, err, view)
	}

	oneName := jsonText(t, one)
	require.Equal(t, filepath.Join(src, "lost \uFFFD\uFFFD.pcap"), oneName)
	for _, q := range []string{
		"SELECT DISTINCT file FROM packets WHERE capture = 'one'",
		"SELECT DISTINCT inputs FROM flows WHERE capture = 'one'",
		"SELECT DISTINCT file FROM findings WHERE capture = 'one'",
	} {
		res, err := query(t, conn, q)
		require.NoError(t, err, q)
		assert.Equal(t, []string{oneName}, column(t, res), q)
	}

	// Two files read as one: each packet, finding and CM frame names its
	// file as the JSON report does.
	var files, findingFiles, connFiles []string
	for _, f := range get(reps["two"], "capture", "files").([]any) {
		files = append(files, get(f, "file").(string))
	}
	for _, fd := range get(reps["two"], "findings").([]any) {
		findingFiles = append(findingFiles, get(fd, "file").(string))
	}
	for _, c := range get(reps["two"], "connections").([]any) {
		for _, k := range []string{"req", "rep", "dreq"} {
			if f, ok := get(c, "frames", "files", k).(string); ok {
				connFiles = append(connFiles, f)
			}
		}
	}
	slices.Sort(files)
	require.Equal(t, []string{jsonText(t, two[0]), jsonText(t, two[1])}, files)
	require.Contains(t, files[0], "a\uFFFD\n.pcap")
	require.NotEmpty(t, findingFiles)
	require.NotEmpty(t, connFiles)
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"SELECT DISTINCT file FROM packets WHERE capture = 'two' ORDER BY file", files},
		{"SELECT DISTINCT inputs FROM flows WHERE capture = 'two'", []string{strings.Join([]string{jsonText(t, two[0]), jsonText(t, two[1])}, " ")}},
		{"SELECT file FROM findings WHERE capture = 'two'", findingFiles},
		{"SELECT req_file FROM connections WHERE capture = 'two' UNION ALL SELECT rep_file FROM connections WHERE capture = 'two' UNION ALL SELECT dreq_file FROM connections WHERE capture = 'two'", connFiles},
	} {
		res, err := query(t, conn, c.q)
		require.NoError(t, err, c.q)
		assert.ElementsMatch(t, c.want, column(t, res), c.q)
	}
}
