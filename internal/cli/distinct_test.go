package cli

import (
	"compress/gzip"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestInputsThatLie: a capture given twice (the same path, another path
// to the same file, a copy, its .gz), or a --clock-offset naming no input
// or beyond a year, is a usage error (exit 2) that says so; before, the
// twice-given file became two capture points with offset 0, and the
// offset of 2562047h wrapped the run's times to 1733.
func TestInputsThatLie(t *testing.T) {
	dir := t.TempDir()
	ud := "../../testdata/ud.pcap"
	data, err := os.ReadFile(ud)
	require.NoError(t, err)
	cp := filepath.Join(dir, "copy.pcap")
	require.NoError(t, os.WriteFile(cp, data, 0o644))
	gz := filepath.Join(dir, "ud.pcap.gz")
	f, err := os.Create(gz)
	require.NoError(t, err)
	zw := gzip.NewWriter(f)
	_, err = zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, f.Close())
	link := filepath.Join(dir, "link.pcap")
	abs, err := filepath.Abs(ud)
	require.NoError(t, err)
	require.NoError(t, os.Symlink(abs, link))
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"same path", []string{ud, "../../testdata/./ud.pcap"}, "is given twice"},
		{"same file", []string{ud, link}, "are the same file"},
		{"a copy", []string{ud, cp}, "hold the same capture"},
		{"its .gz", []string{gz, ud}, "hold the same capture"},
		{"offset of no input", []string{"--clock-offset", "nope.pcap=1ms", ud, "../../testdata/rocev1.pcap"}, "names nope.pcap, which is not one of the captures given"},
		{"offset out of range", []string{"--clock-offset", ud + "=2562047h47m16.854775807s", ud, "../../testdata/rocev1.pcap"}, "beyond a year either way"},
		{"negative offset out of range", []string{"--clock-offset", ud + "=-8761h", ud, "../../testdata/rocev1.pcap"}, "beyond a year either way"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runCLI(tc.args...)
			assert.Equal(t, ExitUsage, code)
			assert.Empty(t, out)
			assert.Contains(t, errs, tc.want)
		})
	}
	// Distinct captures, and an offset of one of them within range, are
	// analyzed.
	code, _, errs := runCLI("--clock-offset", ud+"=-8759h", ud, "../../testdata/rocev1.pcap")
	assert.Equal(t, ExitOK, code, errs)
}

// TestCSVFormulaFileName: a capture file named like a spreadsheet formula
// reaches -P -o csv's file column as text ('=…), read back with
// encoding/csv.
func TestCSVFormulaFileName(t *testing.T) {
	data, err := os.ReadFile("../../testdata/ud.pcap")
	require.NoError(t, err)
	other, err := filepath.Abs("../../testdata/rocev1.pcap")
	require.NoError(t, err)
	t.Chdir(t.TempDir())
	const evil = "=cmd|' -C calc'!A0.pcap"
	require.NoError(t, os.WriteFile(evil, data, 0o644))
	code, out, errs := runCLI("-P", "-o", "csv", evil, other)
	require.Equal(t, ExitOK, code, errs)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	col := slices.Index(rows[0], "file")
	require.GreaterOrEqual(t, col, 0)
	seen := 0
	for _, row := range rows[1:] {
		if strings.Contains(row[col], "calc") {
			seen++
			assert.Equal(t, "'"+evil, row[col])
		}
		assert.NotContains(t, "=+-@", row[col][:1], "a cell that a spreadsheet runs")
	}
	assert.Positive(t, seen)
}
