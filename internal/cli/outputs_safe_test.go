package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/export"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// The two captures of the output tests: the last run's outputs are those
// of before, this run's of after, and the two differ in every output.
const (
	before = "../../testdata/loss_nak_gobackn.pcap"
	after  = "../../testdata/mix_small.pcap"
)

// outputFlags are the files an output test writes in dir: every output
// of a file (the --export tables are read as one, by dirTree).
func outputFlags(dir string) []string {
	return []string{
		"--html", filepath.Join(dir, "report.html"),
		"--trace", filepath.Join(dir, "trace.json"),
		"--plot", filepath.Join(dir, "tput.svg"),
		"--export", filepath.Join(dir, "export"),
	}
}

// dirTree returns every entry under dir, by its path in dir, with its
// bytes (a symlink's as "-> target", a directory's as "dir").
func dirTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(path)
			tree[rel] = "-> " + target
			return err
		case d.IsDir():
			tree[rel] = "dir"
		default:
			b, err := os.ReadFile(path)
			tree[rel] = string(b)
			return err
		}
		return nil
	}))
	return tree
}

// TestOutputsReplaceLinks: --html, --trace and --plot replace a symlink
// planted at their path, never write its target, and never create the
// target of a dangling one.
func TestOutputsReplaceLinks(t *testing.T) {
	for _, o := range []struct{ flag, name string }{{"--html", "out.html"}, {"--trace", "out.json"}, {"--plot", "out.svg"}} {
		for _, dangling := range []bool{false, true} {
			t.Run(o.flag+map[bool]string{false: " to a file", true: " dangling"}[dangling], func(t *testing.T) {
				dir := t.TempDir()
				victim := filepath.Join(dir, "victim.txt")
				if !dangling {
					require.NoError(t, os.WriteFile(victim, []byte("precious"), 0o644))
				}
				out := filepath.Join(dir, o.name)
				require.NoError(t, os.Symlink(victim, out))
				code, _, stderr := run(t, nil, o.flag, out, before)
				require.Equal(t, cli.ExitOK, code, stderr)

				fi, err := os.Lstat(out)
				require.NoError(t, err)
				assert.True(t, fi.Mode().IsRegular(), "%s is the output, not a link", out)
				b, err := os.ReadFile(out)
				require.NoError(t, err)
				assert.NotEmpty(t, b)
				if dangling {
					assert.NoFileExists(t, victim)
				} else {
					b, err := os.ReadFile(victim)
					require.NoError(t, err)
					assert.Equal(t, "precious", string(b))
				}
				assert.Len(t, dirTree(t, dir), map[bool]int{false: 2, true: 1}[dangling], "no temporary file left")
			})
		}
	}
}

// TestOutputsEachAttempted: an output that cannot be written (its
// directory is missing) is said once, the run fails, and the outputs
// after it are written all the same.
func TestOutputsEachAttempted(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing", "x")
	cases := []struct{ failing string }{{"--plot"}, {"--html"}, {"--trace"}}
	for _, tc := range cases {
		t.Run(tc.failing, func(t *testing.T) {
			out := t.TempDir()
			var args []string
			want := map[string]bool{}
			for _, o := range []struct{ flag, name string }{{"--plot", "tput.svg"}, {"--html", "report.html"}, {"--trace", "trace.json"}} {
				if o.flag == tc.failing {
					args = append(args, o.flag, missing+filepath.Ext(o.name))
					continue
				}
				args = append(args, o.flag, filepath.Join(out, o.name))
				want[o.name] = true
			}
			code, _, stderr := run(t, nil, append(args, before)...)
			assert.Equal(t, cli.ExitDamaged, code)
			assert.Equal(t, 1, strings.Count(stderr, "roce-dissect: "), stderr)
			assert.Contains(t, stderr, "roce-dissect: "+tc.failing+" "+missing)
			got := map[string]bool{}
			for name := range dirTree(t, out) {
				got[name] = true
			}
			assert.Equal(t, want, got)
		})
	}
}

// TestExportKeptWhole: an export that does not complete leaves the last
// export in DIR as it was: an input that cannot be opened (a typo, alone
// or beside a good one: the tables would lack it), a table of the last
// export that cannot be replaced (an immutable file), and a run
// interrupted (Ctrl-C), whose tables would hold only the frames read.
func TestExportKeptWhole(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.pcap")
	var outb, errb bytes.Buffer
	require.Equal(t, 0, synth.Run([]string{"write-bw", "--messages", "3000", "-o", big}, &outb, &errb), errb.String())
	cases := []struct {
		name    string
		prepare func(t *testing.T, dir string)
		args    func(dir string) []string
		stderr  string
		stop    bool // interrupt the run after its first 4,096 frames
	}{
		{"interrupted", func(*testing.T, string) {},
			func(dir string) []string { return []string{"--progress", "never", "--export", dir, big} },
			"nothing exported, as the run was interrupted: the last export there is left as it was", true},
		{"a typo in the input's name", func(*testing.T, string) {},
			func(dir string) []string { return []string{"--export", dir, after + ".typo"} },
			"nothing exported, as an input could not be opened: the last export there is left as it was", false},
		{"a typo in one of two inputs' names", func(*testing.T, string) {},
			func(dir string) []string { return []string{"--export", dir, after, before + ".typo"} },
			"nothing exported, as an input could not be opened: the last export there is left as it was", false},
		{"an immutable table", func(t *testing.T, dir string) {
			immutable(t, filepath.Join(dir, export.FlowsFile))
		}, func(dir string) []string { return []string{"--export", dir, after} }, "the last export is left as it was", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "export")
			code, _, stderr := run(t, nil, "--export", dir, before)
			require.Equal(t, cli.ExitOK, code, stderr)
			last := dirTree(t, dir)
			require.Len(t, last, 8)
			tc.prepare(t, dir)

			var ctx context.Context = context.Background()
			if tc.stop {
				ctx = &stopAfter{Context: ctx, looks: 1}
			}
			var out, errb bytes.Buffer
			code = cli.Run(ctx, tc.args(dir), &out, &errb)
			stderr = errb.String()
			assert.Equal(t, cli.ExitDamaged, code)
			assert.Contains(t, stderr, tc.stderr)
			assert.Equal(t, last, dirTree(t, dir))
		})
	}
}

// immutable makes path immutable (chattr +i) until the test ends: as
// root, the one thing that refuses a rename.
func immutable(t *testing.T, path string) {
	t.Helper()
	if out, err := exec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Skipf("chattr +i %s: %v: %s (needs root and a file system with the immutable flag)", path, err, out)
	}
	t.Cleanup(func() { exec.Command("chattr", "-i", path).Run() })
}

// TestOutputsFullDisk: when the files cannot be written whole (a limit
// on the size of a file, RLIMIT_FSIZE, which fails write(2) with EFBIG as
// a full disk fails it with ENOSPC), each output says so once, the last
// run's files are left as they were, byte for byte, and nothing else is
// left behind.
func TestOutputsFullDisk(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := run(t, nil, append(outputFlags(dir), before)...)
	require.Equal(t, cli.ExitOK, code, stderr)
	last := dirTree(t, dir)
	require.Len(t, last, 3+1+8)

	code, stderr = runLimited(t, 2048, append(outputFlags(dir), after)...)
	assert.Equal(t, cli.ExitDamaged, code)
	for _, flag := range []string{"--html", "--trace", "--plot"} {
		assert.Equal(t, 1, strings.Count(stderr, "roce-dissect: "+flag+" "), "%s: %s", flag, stderr)
	}
	assert.Contains(t, stderr, "file too large")
	assert.Contains(t, stderr, "the last export there is left as it was")
	assert.Equal(t, last, dirTree(t, dir))
}

// runLimited runs the command in a process of its own whose files may
// not grow past fsize bytes (TestRunLimitedChild), and returns its exit
// status and stderr.
func runLimited(t *testing.T, fsize uint64, args ...string) (int, string) {
	t.Helper()
	argv, err := json.Marshal(args)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunLimitedChild$")
	cmd.Env = append(os.Environ(), "ROCE_CHILD_ARGS="+string(argv), "ROCE_CHILD_FSIZE="+strconv.FormatUint(fsize, 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return code, stderr.String()
}

// TestRunLimitedChild is runLimited's process: it lowers its file size
// limit and runs the command; it does nothing unless runLimited ran it.
func TestRunLimitedChild(t *testing.T) {
	argv, fsize := os.Getenv("ROCE_CHILD_ARGS"), os.Getenv("ROCE_CHILD_FSIZE")
	if argv == "" {
		return
	}
	var args []string
	require.NoError(t, json.Unmarshal([]byte(argv), &args))
	n, err := strconv.ParseUint(fsize, 10, 64)
	require.NoError(t, err)
	require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}))
	var out bytes.Buffer
	os.Exit(cli.RunWithStdin(context.Background(), args, nil, &out, os.Stderr))
}

// TestReportOutputsRefusePerPacket: an output of the report asked for
// with a per-packet view, which writes no report, is a usage error that
// names both, not a run that writes nothing and exits 0.
func TestReportOutputsRefusePerPacket(t *testing.T) {
	for _, view := range []string{"-P", "-V", "-x"} {
		for _, o := range []struct{ flag, name, what string }{
			{"--html", "r.html", "page"}, {"--plot", "p.svg", "plot"}, {"--trace", "t.json", "timeline"}, {"--export", "exp", "tables"},
		} {
			t.Run(view+" "+o.flag, func(t *testing.T) {
				dir := t.TempDir()
				code, out, stderr := run(t, nil, view, o.flag, filepath.Join(dir, o.name), before)
				assert.Equal(t, cli.ExitUsage, code)
				assert.Empty(t, out)
				assert.Contains(t, stderr, "roce-dissect: "+o.flag+" writes the report's "+o.what+": give it without -P, -V or -x")
				assert.Empty(t, dirTree(t, dir))
			})
		}
	}
}

// TestOutputsWithheld: the page, the plot and the timeline of a run that
// covers only part of what was asked for (interrupted, or an input that
// cannot be opened) leave the last run's files as they were, each saying
// so once; the text report is still printed.
func TestOutputsWithheld(t *testing.T) {
	big := filepath.Join(t.TempDir(), "big.pcap")
	var outb, errb bytes.Buffer
	require.Equal(t, 0, synth.Run([]string{"write-bw", "--messages", "3000", "-o", big}, &outb, &errb), errb.String())
	for _, tc := range []struct {
		name   string
		inputs []string
		stop   bool
		why    string
	}{
		{"interrupted", []string{big}, true, "the run was interrupted"},
		{"an input that cannot be opened", []string{after, before + ".typo"}, false, "an input could not be opened"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			flags := outputFlags(dir)[:6] // --html, --trace, --plot
			code, _, stderr := run(t, nil, append(flags, before)...)
			require.Equal(t, cli.ExitOK, code, stderr)
			last := dirTree(t, dir)
			require.Len(t, last, 3)

			var ctx context.Context = context.Background()
			if tc.stop {
				ctx = &stopAfter{Context: ctx, looks: 1}
			}
			var out, errw bytes.Buffer
			code = cli.Run(ctx, append(append([]string{"--progress", "never", "--color", "never"}, flags...), tc.inputs...), &out, &errw)
			assert.Equal(t, cli.ExitDamaged, code)
			for _, flag := range []string{"--html", "--trace", "--plot"} {
				assert.Equal(t, 1, strings.Count(errw.String(), "roce-dissect: "+flag+" "), "%s: %s", flag, errw.String())
			}
			assert.Equal(t, 3, strings.Count(errw.String(), "not written, as "+tc.why+": the last one there is left as it was\n"), errw.String())
			assert.Contains(t, out.String(), "Capture ", "the text report is printed")
			assert.Equal(t, last, dirTree(t, dir))
		})
	}
}

// TestStructuredOutputsRefuseTreeAndBytes: -V (the header tree) and -x
// (the bytes) have no JSON or CSV form; with -o json or csv they are a
// usage error that names both, not a flag ignored without a word.
func TestStructuredOutputsRefuseTreeAndBytes(t *testing.T) {
	for _, view := range []string{"-V", "-x", "-PV", "-Px"} {
		for _, format := range []string{"json", "csv"} {
			t.Run(view+" -o "+format, func(t *testing.T) {
				code, out, stderr := run(t, nil, view, "-o", format, before)
				assert.Equal(t, cli.ExitUsage, code)
				assert.Empty(t, out)
				assert.Contains(t, stderr, "roce-dissect: -o "+format+" with -V or -x: the header tree and the bytes are text only; give -P -o "+format)
			})
		}
	}
	code, out, stderr := run(t, nil, "-P", "-o", "csv", before)
	assert.Equal(t, cli.ExitOK, code, stderr)
	assert.True(t, strings.HasPrefix(out, "frame,"), "-P -o csv is one row per packet")
}
