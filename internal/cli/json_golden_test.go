package cli_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoldenJSON compares -o json, at -j 1 and at -j 3, with the reports
// of testdata/json/ (gzip-compressed; go test -run TestGoldenJSON -update
// rewrites them from -j 1): every capture of ../../testdata and of the
// shared captures alone (the report streamed while its flows are
// released, at -j 3 encoded on several cores), and several captures at
// once (the merged report, the capture points' "points" of the NCCL
// nodes). The files were written by the encoder of commit abc5c29
// (internal/jsonindent on goccy/go-json), so that the JSON stays the same
// bytes whatever encodes it.
func TestGoldenJSON(t *testing.T) {
	cases := goldenCases(t)
	for _, tc := range cases {
		t.Run(tc.golden, func(t *testing.T) {
			if tc.shared {
				needShared(t, filepath.Join(shared, "README.md"))
			}
			golden := filepath.Join("testdata", "json", tc.golden+".json.gz")
			for _, jobs := range []string{"1", "3"} {
				code, out, errs := run(t, nil, append([]string{"-o", "json", "-j", jobs}, tc.files...)...)
				require.Equal(t, 0, code, errs)
				if *update && jobs == "1" {
					writeGzip(t, golden, out)
				}
				require.Equal(t, readGzip(t, golden), out, "-j %s", jobs)
			}
		})
	}
}

// writeGzip writes s gzip-compressed to name.
func writeGzip(t *testing.T, name, s string) {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.MkdirAll(filepath.Dir(name), 0o755))
	require.NoError(t, os.WriteFile(name, b.Bytes(), 0o644))
}

// readGzip is the content of the gzip-compressed file name.
func readGzip(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	b, err := io.ReadAll(zr)
	require.NoError(t, err)
	return string(b)
}
