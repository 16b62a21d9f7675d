package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/nccltest"
	"github.com/roce-dissect/roce-dissect/internal/synth/ncclsynth"
)

// ncclConn is a connection as an oracle states it (the truth of
// roce-synth nccl, or the JSON `nccl.connections`), with the marks of
// -P counted onto it.
type ncclConn struct {
	SenderRank   *int     `json:"sender_rank"`
	ReceiverRank *int     `json:"receiver_rank"`
	Sender       string   `json:"sender"`
	Receiver     string   `json:"receiver"`
	DataQPs      []uint32 `json:"data_qps"`
	CTSQP        uint32   `json:"cts_qp"`
	CTS          int      `json:"cts"`
	Messages     int      `json:"messages"`
	Bytes        int64    `json:"bytes"`

	marked struct {
		cts, data int
		bytes     int64
	}
}

// markLine is a -P line with an NCCL mark.
var markLine = regexp.MustCompile(`^ *\d+ \S+ (\S+) → (\S+) \S+ QP=0x([0-9a-f]+) .* NCCL (CTS|data) rank (\S+) idx (\d+) conn (\S+)→(\S+)(?: \(len (\d+)\))?$`)

// countMarks counts the NCCL marks of -P's lines onto the connections
// they belong to: a CTS is written by the receiver to the sender's CTS
// QP, data by the sender to a data QP. It checks that each mark's ranks
// are the connection's (an unknown receiver rank is "?"), and returns
// the marked lines.
func countMarks(t *testing.T, text string, conns []*ncclConn) []string {
	t.Helper()
	var marks []string
	for line := range strings.Lines(text) {
		line = strings.TrimSuffix(line, "\n")
		if !strings.Contains(line, " NCCL ") {
			continue
		}
		m := markLine.FindStringSubmatch(line)
		require.NotNil(t, m, line)
		marks = append(marks, line[strings.Index(line, " NCCL ")+1:])
		src, dst, kind := m[1], m[2], m[4]
		qp, err := strconv.ParseUint(m[3], 16, 32)
		require.NoError(t, err)
		var c *ncclConn
		for _, cn := range conns {
			if kind == "CTS" && cn.Sender == dst && cn.Receiver == src && uint64(cn.CTSQP) == qp ||
				kind == "data" && cn.Sender == src && cn.Receiver == dst && slices.Contains(cn.DataQPs, uint32(qp)) {
				require.Nil(t, c, "one connection: %s", line)
				c = cn
			}
		}
		require.NotNil(t, c, "a connection of the oracle: %s", line)
		require.NotNil(t, c.SenderRank)
		assert.Equal(t, strconv.Itoa(*c.SenderRank), m[5], line)
		assert.Equal(t, m[5], m[7], line)
		if m[8] != "?" {
			require.NotNil(t, c.ReceiverRank, line)
			assert.Equal(t, strconv.Itoa(*c.ReceiverRank), m[8], line)
		}
		if kind == "CTS" {
			c.marked.cts++
			assert.Empty(t, m[9], line)
			continue
		}
		c.marked.data++
		n, err := strconv.ParseInt(m[9], 10, 64)
		require.NoError(t, err, line)
		c.marked.bytes += n
	}
	return marks
}

// TestNCCLMarksReal: -P marks as many CTS and data messages per
// connection of the real job's captures as the collective view counts,
// with the ranks of NCCL's own logs.
func TestNCCLMarksReal(t *testing.T) {
	job := nccltest.Read(t, filepath.Join(shared, "nccl"))
	for _, file := range job.Pcaps {
		t.Run(filepath.Base(file), func(t *testing.T) {
			code, out, errs := run(t, nil, "-o", "json", file)
			require.Equal(t, 0, code, errs)
			var doc struct {
				NCCL struct{ Connections []*ncclConn } `json:"nccl"`
			}
			require.NoError(t, json.Unmarshal([]byte(out), &doc))
			conns := doc.NCCL.Connections
			require.NotEmpty(t, conns)
			code, text, errs := run(t, nil, "-P", "--color=never", file)
			require.Equal(t, 0, code, errs)
			marks := countMarks(t, text, conns)
			require.NotEmpty(t, marks)
			for _, c := range conns {
				assert.Equal(t, c.CTS, c.marked.cts, "%s → %s CTS", c.Sender, c.Receiver)
				assert.Equal(t, c.Messages, c.marked.data, "%s → %s data", c.Sender, c.Receiver)
				assert.Equal(t, c.Bytes, c.marked.bytes, "%s → %s bytes", c.Sender, c.Receiver)
				assert.Equal(t, job.Addr[*c.SenderRank], c.Sender, "the rank of NCCL's log")
			}
		})
	}
}

// TestNCCLMarksSynth: a short synthetic job's -P, against its golden
// bytes and the generator's truth (each rank's capture sees every CTS
// and message of the connections to and from it), and -V's tree lines
// the same marks.
func TestNCCLMarksSynth(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "job")
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, ncclsynth.Run([]string{"--ranks", "3", "--coll", "all_reduce:6K,all_gather:3K", "-o", prefix}, &stdout, &stderr), stderr.String())
	raw, err := os.ReadFile(prefix + ".truth.json")
	require.NoError(t, err)
	var truth struct{ Connections []*ncclConn }
	require.NoError(t, json.Unmarshal(raw, &truth))
	for _, tc := range []struct {
		rank   int
		golden string
	}{
		{0, "nccl_synth_rank0.P"},
		{1, ""},
		{2, ""},
	} {
		t.Run(strconv.Itoa(tc.rank), func(t *testing.T) {
			file := prefix + ".rank" + strconv.Itoa(tc.rank) + ".pcap"
			code, text, errs := run(t, nil, "-P", "--color=never", file)
			require.Equal(t, 0, code, errs)
			if tc.golden != "" {
				golden := filepath.Join("testdata", tc.golden)
				if *update {
					require.NoError(t, os.WriteFile(golden, []byte(text), 0o644))
				}
				want, err := os.ReadFile(golden)
				require.NoError(t, err)
				assert.Equal(t, string(want), text)
			}
			var conns []*ncclConn
			for _, c := range truth.Connections {
				c := *c
				if *c.SenderRank == tc.rank || *c.ReceiverRank == tc.rank {
					conns = append(conns, &c)
				}
			}
			require.Len(t, conns, 2)
			marks := countMarks(t, text, conns)
			for _, c := range conns {
				assert.Equal(t, c.CTS, c.marked.cts, "%s → %s CTS", c.Sender, c.Receiver)
				assert.Equal(t, c.Messages, c.marked.data, "%s → %s data", c.Sender, c.Receiver)
				assert.Equal(t, c.Bytes, c.marked.bytes, "%s → %s bytes", c.Sender, c.Receiver)
			}
			code, tree, errs := run(t, nil, "-V", "--color=never", file)
			require.Equal(t, 0, code, errs)
			var treeMarks []string
			for line := range strings.Lines(tree) {
				if strings.HasPrefix(line, "NCCL ") {
					treeMarks = append(treeMarks, strings.TrimSuffix(line, "\n"))
				}
			}
			assert.Equal(t, marks, treeMarks)
		})
	}
}
