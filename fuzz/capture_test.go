package fuzz_test

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
)

// captureViews are the command lines FuzzCapture runs a capture through
// ("-" is the capture, on stdin): the report in every format and both
// per-packet views, so every renderer meets what the decoders let through.
var captureViews = [][]string{
	{"--color=never", "-"},
	{"-o", "json", "-"},
	{"-o", "csv", "-"},
	{"-P", "--color=always", "-"},
	{"-V", "--color=never", "-"},
	{"-P", "-o", "json", "-"},
	{"-P", "-o", "csv", "-"},
	{"--max-flows", "2", "--interval", "1ns", "-o", "json", "-"},
}

// FuzzCapture runs a whole capture file — pcap, pcapng, gzip'd or
// anything else — through the command (cli.RunWithStdin), in one of
// captureViews. The command must not panic or hang; its exit status is 0
// or 1 (never 2: the command line is right); a status of 1 comes with
// exactly one line on stderr naming the input; JSON output parses.
func FuzzCapture(f *testing.F) {
	// Seeds are kept small (the fuzzer minimizes every new input it
	// finds, which takes long on big ones): the first frames of each seed
	// capture rewritten as a pcap, and its first 2 KiB as they are (cut
	// short, for pcapng and gzip).
	seeds := seedCaptures(f)
	for i, name := range sortedKeys(seeds) {
		c := seeds[name]
		f.Add(uint8(i), pcapOf(readFrames(f, name, c), 6))
		if len(c) > 2048 {
			c = c[:2048]
		}
		f.Add(uint8(i+1), c)
	}
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), []byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, view uint8, data []byte) {
		defer watchdog(data)()
		args := captureViews[int(view)%len(captureViews)]
		var out, errb bytes.Buffer
		code := cli.RunWithStdin(context.Background(), args, bytes.NewReader(data), &out, &errb)
		require.Contains(t, []int{cli.ExitOK, cli.ExitDamaged}, code, "stderr %q", errb.String())
		stderr := strings.TrimSpace(errb.String())
		if code == cli.ExitDamaged {
			require.Equal(t, 1, strings.Count(stderr, "\n")+1, "one line: %q", stderr)
			require.True(t, strings.HasPrefix(stderr, "roce-dissect: <stdin>: "), "names the input: %q", stderr)
		} else {
			require.Empty(t, stderr)
		}
		if isJSONReport(args) && out.Len() > 0 {
			require.True(t, json.Valid(out.Bytes()), "JSON report: %s", out.String())
		}
	})
}

// isJSONReport says whether the command line asks for the JSON report (not
// the per-packet NDJSON).
func isJSONReport(args []string) bool {
	return slices.Contains(args, "json") && !slices.Contains(args, "-P")
}
