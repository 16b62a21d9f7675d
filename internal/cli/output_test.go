package cli_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
)

// countingWriter counts the Write calls made on it.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestOutputBuffered: every view writes standard output through one
// buffer: a header tree per frame (-V) or a line per packet (-P) of the
// 400 frames of mix_small.pcap cost a write per 64 KiB, not one per field
// or line (-V made about 49 writes per frame).
func TestOutputBuffered(t *testing.T) {
	for _, args := range [][]string{
		{"-V"}, {"-P"}, {"-P", "-o", "json"}, {"-P", "-o", "csv"}, {}, {"-o", "json"}, {"-o", "csv"},
	} {
		t.Run("args "+strings.Join(args, " "), func(t *testing.T) {
			var out countingWriter
			var errb bytes.Buffer
			code := cli.RunWithStdin(context.Background(), append(args, "--color=never", "../../testdata/mix_small.pcap"), nil, &out, &errb)
			require.Equal(t, 0, code, errb.String())
			require.NotZero(t, out.Len())
			assert.LessOrEqual(t, out.writes, out.Len()/(64<<10)+1, "%d writes for %d bytes", out.writes, out.Len())
		})
	}
}

// failingWriter fails every write, like standard output on /dev/full.
type failingWriter struct{ writes int }

var errNoSpace = errors.New("no space left on device")

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	return 0, errNoSpace
}

// TestOutputWriteError: output that cannot be written (> /dev/full) is an
// error, said once on stderr, with exit status 1, in every view; and the
// views stop formatting once it failed.
func TestOutputWriteError(t *testing.T) {
	for _, args := range [][]string{
		{"-V"}, {"-P"}, {"-P", "-o", "json"}, {"-P", "-o", "csv"}, {}, {"-o", "json"}, {"-o", "csv"},
	} {
		t.Run("args "+strings.Join(args, " "), func(t *testing.T) {
			var out failingWriter
			var errb bytes.Buffer
			code := cli.RunWithStdin(context.Background(), append(args, "--color=never", "../../testdata/mix_small.pcap"), nil, &out, &errb)
			assert.Equal(t, cli.ExitDamaged, code)
			assert.Equal(t, "roce-dissect: writing output: no space left on device\n", errb.String())
			assert.Equal(t, 1, out.writes, "nothing is written after the first failure")
		})
	}
}
