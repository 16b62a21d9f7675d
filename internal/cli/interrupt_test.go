package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
	"github.com/roce-dissect/roce-dissect/internal/synth"
)

// stopAfter is a context whose Err says it was cancelled (Ctrl-C) from
// its (looks+1)th look on: the reader looks every 4,096 frames, so the
// reading stops after looks × 4,096 frames, whatever the machine's
// speed.
type stopAfter struct {
	context.Context
	looks, n int
}

func (c *stopAfter) Err() error {
	c.n++
	if c.n > c.looks {
		return context.Canceled
	}
	return nil
}

// TestInterrupted: a run interrupted (the context cancelled, as Ctrl-C
// does) says so on stderr, "interrupted after N frames: the report covers
// only the frames read", never "context canceled", with N the frames its
// report covers, fewer than the input holds; the text report says it
// under its capture and the JSON report marks the capture interrupted:
// one file, on shards, two pieces of one capture (N counts both) and
// -P. Before, stderr said "context canceled" and the report nothing.
func TestInterrupted(t *testing.T) {
	dir := t.TempDir()
	var b bytes.Buffer
	_, err := synth.Generate(synth.Config{Scenario: "write-bw", Messages: 3000}, &b, nil)
	require.NoError(t, err)
	one := filepath.Join(dir, "w.pcap")
	require.NoError(t, os.WriteFile(one, b.Bytes(), 0o644))
	split := filepath.Join(dir, "s.pcap")
	var out, errb bytes.Buffer
	require.Equal(t, 0, synth.Run([]string{"write-bw", "--messages", "3000", "--split", "6000", "-o", split}, &out, &errb), errb.String())
	pieces := synth.SplitNames(split, 2)
	total := map[string]uint64{one: uint64(len(readAll(t, one)))}
	for _, p := range pieces {
		total[split] += uint64(len(readAll(t, p)))
	}
	said := regexp.MustCompile(`interrupted after (\d+) frames: the report covers only the frames read\n`)
	for _, tc := range []struct {
		name  string
		looks int
		input string
		args  []string
		want  uint64 // frames read
	}{
		{"text", 2, one, []string{one}, 8192},
		{"json", 1, one, []string{"-o", "json", one}, 4096},
		{"json on 2 shards", 2, one, []string{"-o", "json", "-j", "2", one}, 8192},
		{"pieces, the second interrupted", 3, split, []string{"-o", "json", pieces[0], pieces[1]}, 6000 + 4096},
		{"packets", 1, one, []string{"-P", one}, 4096},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := cli.Run(&stopAfter{Context: context.Background(), looks: tc.looks}, append([]string{"--color", "never", "--progress", "never"}, tc.args...), &out, &errb)
			assert.Equal(t, cli.ExitDamaged, code)
			stderr := errb.String()
			assert.NotContains(t, stderr, "context canceled")
			m := said.FindStringSubmatch(stderr)
			require.NotNil(t, m, "stderr: %s", stderr)
			n, err := strconv.ParseUint(m[1], 10, 64)
			require.NoError(t, err)
			assert.Equal(t, tc.want, n)
			require.Less(t, n, total[tc.input], "the case reads the whole input")
			switch {
			case tc.args[0] == "-o":
				var rep struct {
					Capture struct {
						Frames      uint64 `json:"frames"`
						Interrupted bool   `json:"interrupted"`
					} `json:"capture"`
				}
				require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
				assert.True(t, rep.Capture.Interrupted)
				assert.Equal(t, n, rep.Capture.Frames)
			case tc.args[0] == "-P":
				assert.Equal(t, int(n), bytes.Count(out.Bytes(), []byte("\n")), "one line per frame read")
			default:
				assert.Contains(t, out.String(), "  error: "+m[0])
			}
		})
	}
	// Read to its end, the report is not marked.
	var out2, errb2 bytes.Buffer
	require.Equal(t, cli.ExitOK, cli.Run(context.Background(), []string{"-o", "json", one}, &out2, &errb2), errb2.String())
	assert.NotContains(t, out2.String(), `"interrupted"`)
}
