package cli_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// copyNamed writes the bytes of testdata's capture src (cut to cut bytes
// when cut > 0) to dir/name and returns its path.
func copyNamed(t *testing.T, dir, name, src string, cut int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../../testdata", src))
	require.NoError(t, err)
	if cut > 0 {
		b = b[:cut]
	}
	p := filepath.Join(dir, name)
	require.NoError(t, os.WriteFile(p, b, 0o644))
	return p
}

// namedRuns are runs over two captures, loss_nak_gobackn.pcap (findings,
// and cut when damaged) and rnr_corrupt_icrc.pcap (a CM connection, a
// bad ICRC), each printing the files' names in the text report, -V or
// stderr, and what it prints them in.
var namedRuns = []struct {
	name    string
	args    []string
	files   int  // the first files of the two given
	damaged bool // the first file is cut in a record: stderr names it
}{
	{"report of one file", []string{"--color=never"}, 1, false},
	{"report of one damaged file", []string{"--color=never"}, 1, true},
	{"report of two files merged", []string{"--color=never"}, 2, false},
	{"report of two files, findings all", []string{"--color=never", "--findings", "all"}, 2, false},
	{"report of two damaged files", []string{"--color=never"}, 2, true},
	{"report in colour", []string{"--color=always"}, 2, false},
	{"-V of two files", []string{"-V", "-c", "3", "--color=never"}, 2, false},
	{"-P of a damaged file", []string{"-P", "--color=never"}, 1, true},
}

// runNamed runs a namedRuns entry on copies of its captures named names.
func runNamed(t *testing.T, args []string, files int, damaged bool, names [2]string) (int, string, string) {
	t.Helper()
	dir := t.TempDir()
	cut := 0
	if damaged {
		cut = 3000 // in loss_nak_gobackn.pcap's fifth record
	}
	paths := []string{copyNamed(t, dir, names[0], "loss_nak_gobackn.pcap", cut), copyNamed(t, dir, names[1], "rnr_corrupt_icrc.pcap", 0)}
	code, out, errs := run(t, nil, append(append([]string{}, args...), paths[:files]...)...)
	// The names are the test's: the temporary folder's name is not.
	return code, strings.ReplaceAll(out, dir+"/", ""), strings.ReplaceAll(errs, dir+"/", "")
}

// spaces are the runs of spaces that pad a table's columns.
var spaces = regexp.MustCompile(` +`)

// TestNameForgesNoLine: a file name of newlines and report-looking text
// forges no line of the text report, -V or stderr: each prints as many
// lines as for the same captures with plain names, none of them the
// name's, and the name quoted (\n) where the plain name is.
func TestNameForgesNoLine(t *testing.T) {
	var forged strings.Builder
	forged.WriteString("a.pcap")
	for i := range 20 {
		fmt.Fprintf(&forged, "\nERROR f%02d", i)
	}
	names := [2]string{forged.String(), "b.pcap\r\n  WARNING forged"}
	quoted := [2]string{strings.ReplaceAll(names[0], "\n", `\n`), `b.pcap\r\n  WARNING forged`}
	for _, tc := range namedRuns {
		t.Run(tc.name, func(t *testing.T) {
			plainCode, plainOut, plainErr := runNamed(t, tc.args, tc.files, tc.damaged, [2]string{"a.pcap", "b.pcap"})
			code, out, errs := runNamed(t, tc.args, tc.files, tc.damaged, names)
			assert.Equal(t, plainCode, code)
			for _, o := range []struct{ plain, got string }{{plainOut, out}, {plainErr, errs}} {
				assert.Equal(t, strings.Count(o.plain, "\n"), strings.Count(o.got, "\n"), "lines")
				assert.NotContains(t, o.got, "\r", "a carriage return")
				for _, line := range strings.Split(o.got, "\n") {
					assert.NotRegexp(t, `^(ERROR f\d\d|  WARNING forged)`, line, "a forged line")
				}
				// Each line names the files where the plain names' does,
				// quoted: the lines but the names (and the spaces that
				// pad them in tables) are the same.
				want := strings.ReplaceAll(o.plain, "a.pcap", quoted[0])
				want = strings.ReplaceAll(want, "b.pcap", quoted[1])
				assert.Equal(t, spaces.ReplaceAllString(want, " "), spaces.ReplaceAllString(o.got, " "))
			}
			assert.Contains(t, out+errs, quoted[0])
		})
	}
}

// TestNameNoEscape: a file name of ESC sequences (a window title, a
// colour, a C1 CSI) reaches neither stdout nor stderr raw: no ESC byte
// but the report's own colours, no C1 control; the name is there quoted.
func TestNameNoEscape(t *testing.T) {
	names := [2]string{"\x1b]0;pwned\x07\x1b[31mred.pcap", "\u009b2Jb.pcap"}
	quoted := [2]string{`\033]0;pwned\a\033[31mred.pcap`, `\u009b2Jb.pcap`}
	for _, tc := range namedRuns {
		t.Run(tc.name, func(t *testing.T) {
			_, out, errs := runNamed(t, tc.args, tc.files, tc.damaged, names)
			_, plainOut, plainErr := runNamed(t, tc.args, tc.files, tc.damaged, [2]string{"a.pcap", "b.pcap"})
			for _, o := range []struct{ plain, got string }{{plainOut, out}, {plainErr, errs}} {
				assert.Equal(t, strings.Count(o.plain, "\x1b"), strings.Count(o.got, "\x1b"), "ESC bytes: the palette's only")
				assert.NotContains(t, o.got, "\x07")
				assert.NotContains(t, o.got, "\u009b")
			}
			assert.Contains(t, out+errs, quoted[0])
			if tc.files == 2 {
				assert.Contains(t, out+errs, quoted[1])
			}
		})
	}
}

// TestNameInCSV: -P -o csv names each packet's file as -P -o json does
// (encoding/json, the oracle): valid UTF-8, a U+FFFD for each byte that
// is not.
func TestNameInCSV(t *testing.T) {
	dir := t.TempDir()
	paths := []string{copyNamed(t, dir, "a\xff\xfe.pcap", "loss_nak_gobackn.pcap", 0), copyNamed(t, dir, "b\xc3.pcap", "rnr_corrupt_icrc.pcap", 0)}
	code, out, errs := run(t, nil, append([]string{"-P", "-o", "csv"}, paths...)...)
	require.Equal(t, 0, code, errs)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	col := slices.Index(rows[0], "file")
	require.Positive(t, col)
	code, out, errs = run(t, nil, append([]string{"-P", "-o", "json"}, paths...)...)
	require.Equal(t, 0, code, errs)
	dec := json.NewDecoder(strings.NewReader(out))
	var want []string
	for dec.More() {
		var o struct {
			File string `json:"file"`
		}
		require.NoError(t, dec.Decode(&o))
		want = append(want, o.File)
	}
	require.Len(t, rows, len(want)+1)
	seen := map[string]bool{}
	for i, row := range rows[1:] {
		assert.Equal(t, want[i], row[col], "packet %d", i+1)
		assert.True(t, utf8.ValidString(row[col]), "packet %d", i+1)
		seen[row[col]] = true
	}
	assert.Equal(t, map[string]bool{filepath.Join(dir, "a\uFFFD\uFFFD.pcap"): true, filepath.Join(dir, "b\uFFFD.pcap"): true}, seen)
}
