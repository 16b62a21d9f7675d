package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/capture"
	"github.com/roce-dissect/roce-dissect/internal/cli"
)

// readAll returns the frames of a capture: the oracle of what it holds.
func readAll(t *testing.T, name string) [][]byte {
	t.Helper()
	cr, err := capture.Open(name)
	require.NoError(t, err)
	defer cr.Close()
	var out [][]byte
	for {
		_, d, _, err := cr.Next()
		if err != nil {
			return out
		}
		out = append(out, bytes.Clone(d))
	}
}

// TestUntimedFiles: two pcapng files of simple packet blocks (golden
// bytes: frames without timestamps) are read and analyzed, and the
// report says what stops them being read as the pieces of one capture,
// the first frame's missing time, not "cannot be read as a capture",
// which a file that was read is not (issue 41); each file's line says it
// has no timestamps rather than 0001-01-01T00:00:00Z.
func TestUntimedFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.pcapng"), filepath.Join(dir, "b.pcapng")
	fa, fb := readAll(t, "../../testdata/write_bw_ipv4.pcap"), readAll(t, "../../testdata/rocev1.pcap")
	require.NoError(t, os.WriteFile(a, pcapngSPB(1, fa), 0o644))
	require.NoError(t, os.WriteFile(b, pcapngSPB(1, fb), 0o644))
	var out, errb bytes.Buffer
	require.Equal(t, cli.ExitOK, cli.Run(context.Background(), []string{"--color", "never", a, b}, &out, &errb), errb.String())
	s := out.String()
	assert.NotContains(t, s, "cannot be read as a capture")
	assert.Contains(t, s, a+" has no time on its first frame (a pcapng simple packet block, which has no timestamp): it cannot be put in time order with the others")
	assert.NotContains(t, s, "0001-01-01")
	assert.Regexp(t, `(?m)^    `+regexp.QuoteMeta(a)+` +`+strconv.Itoa(len(fa))+` frames  no timestamps \(pcapng simple packet blocks\)$`, s)
	assert.Contains(t, s, strconv.Itoa(len(fa)+len(fb))+" frames: "+strconv.Itoa(len(fa)+len(fb))+" RDMA", "every frame read")
}
