package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// nofileChild names the environment variable that makes
// TestDescriptorLimit the child: it lowers its descriptor limit to the
// value and runs the command on the files its arguments name.
const nofileChild = "ROCE_TEST_NOFILE_CHILD"

// TestDescriptorLimit: 2,000 files whose frames alternate (a capture's
// frames dealt to them in turn: merged by time) are read whole by a
// process allowed 256 descriptors, as ulimit -n 256 allows: every frame
// the generator wrote is counted, each file's in its entry, and nothing
// says "too many open files".
func TestDescriptorLimit(t *testing.T) {
	if v := os.Getenv(nofileChild); v != "" {
		var limit uint64
		_, err := fmt.Sscan(v, &limit)
		require.NoError(t, err)
		var rl syscall.Rlimit
		require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl))
		rl.Cur = limit
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl))
		files, err := filepath.Glob(filepath.Join(os.Getenv(nofileChild+"_DIR"), "f_*.pcap"))
		require.NoError(t, err)
		os.Exit(cli.Run(context.Background(), append([]string{"-o", "json", "--progress", "never"}, files...), os.Stdout, os.Stderr))
	}
	if testing.Short() {
		t.Skip("writes 2,000 files")
	}
	const n = 2000
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.pcap")
	f, err := os.Create(whole)
	require.NoError(t, err)
	tr, err := synth.Generate(synth.Config{Scenario: synth.ScenarioWriteBW, Messages: 3 * n, MTU: 1024, MsgSize: 1024, SnapLen: 64, Nanos: true, Seed: 3}, f, nil)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	files := make([]string, n)
	for i := range files {
		files[i] = filepath.Join(dir, fmt.Sprintf("f_%05d.pcap", i))
	}
	require.NoError(t, alternateCapture(whole, files...))

	cmd := exec.Command(os.Args[0], "-test.run=^TestDescriptorLimit$")
	cmd.Env = append(os.Environ(), nofileChild+"=256", nofileChild+"_DIR="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	assert.False(t, strings.Contains(stderr.String(), "too many open files"), "stderr: %.500s", stderr.String())
	require.NoError(t, err, "stderr: %.500s", stderr.String())

	var rep struct {
		Capture struct {
			Frames      int  `json:"frames"`
			FilesMerged bool `json:"files_merged"`
			Files       []struct {
				File   string `json:"file"`
				Frames int    `json:"frames"`
			} `json:"files"`
		} `json:"capture"`
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &rep), "stdout: %.500s", stdout.String())
	assert.Equal(t, tr.Frames, rep.Capture.Frames, "every frame the generator wrote")
	assert.True(t, rep.Capture.FilesMerged)
	require.Len(t, rep.Capture.Files, n)
	for i, cf := range rep.Capture.Files {
		// alternateCapture deals frame k to file k mod n.
		want := tr.Frames / n
		if i < tr.Frames%n {
			want++
		}
		assert.Equal(t, want, cf.Frames, cf.File)
		assert.True(t, strings.HasSuffix(cf.File, fmt.Sprintf("f_%05d.pcap", i)), cf.File)
	}
}
