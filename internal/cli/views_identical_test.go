package cli_test

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// viewsGolden holds, for every capture of TestGoldenJSON's cases and every
// view other than JSON (which TestGoldenJSON keeps whole), the SHA-256 of
// what the view wrote at -j 1 at commit 36f52b4, before analyze was cut
// into stages: "case view digest" a line.
const viewsGolden = "testdata/views.sha256"

// TestViewsIdentical holds every view of every testdata and shared capture
// (the text report, CSV, -P, -V and each Parquet table of --export) to the
// bytes it wrote before analyze was cut into stages, at -j 1 and at -j 3:
// a restructuring of the analyzer changes no output. go test -run
// TestViewsIdentical -update rewrites the digests from -j 1, for a change
// that means to change an output.
func TestViewsIdentical(t *testing.T) {
	views := []struct {
		name string
		args []string
	}{
		{"text", []string{"--color=never"}},
		{"csv", []string{"-o", "csv"}},
		{"P", []string{"--color=never", "-P"}},
		{"V", []string{"--color=never", "-V"}},
		{"export", nil},
	}
	want := readViewDigests(t)
	got := map[string]string{}
	for _, tc := range goldenCases(t) {
		t.Run(tc.golden, func(t *testing.T) {
			if tc.shared {
				needShared(t, filepath.Join(shared, "README.md"))
			}
			for _, v := range views {
				key := tc.golden + " " + v.name
				for _, jobs := range []string{"1", "3"} {
					d := viewDigest(t, v.name, append(append([]string{"-j", jobs}, v.args...), tc.files...))
					if jobs == "1" {
						got[key] = d
					}
					if !*update {
						require.Equal(t, want[key], d, "%s at -j %s: the view's bytes changed", key, jobs)
					}
				}
			}
		})
	}
	if *update {
		writeViewDigests(t, got)
	}
}

// goldenCase is a capture, or several read as one, that the golden tests
// run every view on.
type goldenCase struct {
	golden string
	files  []string
	shared bool
}

// goldenCases are every capture of ../../testdata alone and all of them
// together, and every shared capture alone and, for the Soft-RoCE and
// NCCL folders, together.
func goldenCases(t *testing.T) []goldenCase {
	t.Helper()
	var cases []goldenCase
	local, err := filepath.Glob("../../testdata/*.pcap*")
	require.NoError(t, err)
	local = slices.DeleteFunc(local, func(f string) bool { return strings.HasSuffix(f, ".json") })
	require.NotEmpty(t, local)
	for _, f := range local {
		cases = append(cases, goldenCase{golden: filepath.Base(f), files: []string{f}})
	}
	cases = append(cases, goldenCase{golden: "testdata-all", files: local})
	for _, dir := range []string{"softroce", "vectors", "ib-erf", "nccl"} {
		files, err := filepath.Glob(filepath.Join(shared, dir, "*.pcap"))
		require.NoError(t, err)
		for _, f := range files {
			cases = append(cases, goldenCase{golden: dir + "-" + filepath.Base(f), files: []string{f}, shared: true})
		}
		if dir == "softroce" || dir == "nccl" {
			cases = append(cases, goldenCase{golden: dir + "-all", files: files, shared: true})
		}
	}
	return cases
}

// viewDigest runs the command with args and returns the SHA-256 of what
// it wrote: its standard output, or for "export" each table file's name
// and bytes in name order.
func viewDigest(t *testing.T, view string, args []string) string {
	t.Helper()
	h := sha256.New()
	if view != "export" {
		code, out, errs := run(t, nil, args...)
		require.Equal(t, 0, code, errs)
		h.Write([]byte(out))
		return hex.EncodeToString(h.Sum(nil))
	}
	dir := t.TempDir()
	code, _, errs := run(t, nil, append([]string{"--export", dir}, args...)...)
	require.Equal(t, 0, code, errs)
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	require.NotEmpty(t, names)
	slices.Sort(names)
	for _, name := range names {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		fmt.Fprintf(h, "%s %d\n", filepath.Base(name), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// readViewDigests reads viewsGolden: digests by "case view".
func readViewDigests(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(viewsGolden)
	if *update && os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	m := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		require.Len(t, fs, 3, "a line of %s", viewsGolden)
		m[fs[0]+" "+fs[1]] = fs[2]
	}
	require.NoError(t, sc.Err())
	return m
}

// writeViewDigests rewrites viewsGolden with got, keeping the digests of
// cases this run skipped (the shared captures, when absent).
func writeViewDigests(t *testing.T, got map[string]string) {
	t.Helper()
	all := readViewDigests(t)
	if all == nil {
		all = map[string]string{}
	}
	for k, v := range got {
		all[k] = v
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s\n", k, all[k])
	}
	require.NoError(t, os.WriteFile(viewsGolden, []byte(b.String()), 0o644))
}
