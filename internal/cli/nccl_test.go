package cli_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/nccltest"
)

// ncclJSON is the "nccl" object of -o json's output, nil for null.
func ncclJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	var doc map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	raw, ok := doc["nccl"]
	require.True(t, ok, `the document has the "nccl" key`)
	var v map[string]any
	require.NoError(t, json.Unmarshal(raw, &v))
	return v
}

// TestNCCLView: the real 3-host job, its three files together (capture
// points) and each alone (streamed, sequential and sharded), against
// NCCL's own logs.
func TestNCCLView(t *testing.T) {
	job := nccltest.Read(t, filepath.Join(shared, "nccl"))
	code, out, errs := run(t, nil, append([]string{"-o", "json"}, job.Pcaps...)...)
	require.Equal(t, 0, code, errs)
	whole := ncclJSON(t, out)
	require.NotNil(t, whole)
	assert.ElementsMatch(t, []string{"fifo_layout", "ranks", "connections", "channels", "rings", "collectives"}, slices.Collect(maps.Keys(whole)))
	assert.Equal(t, "2.20", whole["fifo_layout"])
	var ranks []any
	for _, r := range slices.Sorted(maps.Keys(job.Addr)) {
		ranks = append(ranks, map[string]any{"rank": float64(r), "addr": job.Addr[r]})
	}
	assert.Equal(t, ranks, whole["ranks"])
	assert.Equal(t, float64(1), whole["channels"])
	var ring []any
	for _, r := range job.Ring {
		ring = append(ring, float64(r))
	}
	assert.Equal(t, []any{ring}, whole["rings"])
	conns := whole["connections"].([]any)
	require.Len(t, conns, len(job.Ring))
	for _, c := range conns {
		c := c.(map[string]any)
		assert.ElementsMatch(t, []string{"sender_rank", "receiver_rank", "sender", "receiver", "data_qps", "cts_qp", "fifo_rkey", "fifo_addr", "cts", "messages", "bytes", "active"}, slices.Collect(maps.Keys(c)))
		s, r := int(c["sender_rank"].(float64)), int(c["receiver_rank"].(float64))
		assert.Equal(t, job.Successor(s), r)
		assert.Equal(t, job.Addr[s], c["sender"])
		assert.Equal(t, job.Addr[r], c["receiver"])
	}

	code, text, errs := run(t, nil, append([]string{"--color=never"}, job.Pcaps...)...)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, text, "\nCollectives (NCCL)\n")
	assert.Contains(t, text, "Ranks: 0 = "+job.Addr[0]+", 1 = "+job.Addr[1]+", 2 = "+job.Addr[2]+"\n")
	assert.Contains(t, text, "Ring of channel 0: 0 → 1 → 2 → 0\n")
	// A line per collective: its kind and S as the captures' README says.
	for i, size := range job.Sizes {
		assert.Regexp(t, fmt.Sprintf(`\n  %d +all_reduce +ring, simple +%d +[0-9.]+[µm]?s +[0-9.]+[µm]?s +[0-9.]+ [kMG]?b/s +[0-9.]+ [kMG]?b/s +`, i+1, size), text)
	}

	for i, file := range job.Pcaps {
		var alone map[string]any
		for _, jobs := range []string{"1", "2"} { // sequential; sharded by host pair
			code, out, errs := run(t, nil, "-o", "json", "-j", jobs, file)
			require.Equal(t, 0, code, errs)
			got := ncclJSON(t, out)
			require.NotNil(t, got, "%s -j %s", file, jobs)
			if alone == nil {
				alone = got
			}
			assert.Equal(t, alone, got, "-j %s: the same view as -j 1", jobs)
		}
		// Each alone: a part of the whole, never a contradiction.
		assert.Subset(t, whole["ranks"], alone["ranks"])
		assert.Contains(t, alone["ranks"], map[string]any{"rank": float64(job.Ranks[i]), "addr": job.Addr[job.Ranks[i]]})
		assert.Nil(t, alone["rings"], "one host does not see the whole ring")
		for _, c := range alone["connections"].([]any) {
			c := c.(map[string]any)
			if c["receiver_rank"] == nil {
				c["receiver_rank"] = float64(job.Successor(int(c["sender_rank"].(float64))))
			}
			assert.Contains(t, conns, c)
		}
		// Its collectives: the whole's, their kind unknown to one host.
		colls := alone["collectives"].([]any)
		require.Len(t, colls, len(whole["collectives"].([]any)))
		for _, c := range colls {
			c := c.(map[string]any)
			assert.Equal(t, "unknown", c["kind"])
			assert.Nil(t, c["size_bytes"])
			assert.Nil(t, c["straggler"])
		}
		code, text, errs := run(t, nil, "--color=never", file)
		require.Equal(t, 0, code, errs)
		assert.Contains(t, text, "\nCollectives (NCCL)\n")
		assert.NotContains(t, text, "Ring of channel")
	}
}

// TestNCCLViewAbsent: plain RoCE traffic has no NCCL view: null in the
// JSON, no section in the text.
func TestNCCLViewAbsent(t *testing.T) {
	for _, file := range []string{"../../testdata/mix_small.pcap", "../../testdata/loss_nak_gobackn.pcap"} {
		for _, jobs := range []string{"1", "2"} {
			code, out, errs := run(t, nil, "-o", "json", "-j", jobs, file)
			require.Equal(t, 0, code, errs)
			assert.Nil(t, ncclJSON(t, out))
			code, out, errs = run(t, nil, "--color=never", "-j", jobs, file)
			require.Equal(t, 0, code, errs)
			assert.False(t, strings.Contains(out, "Collectives (NCCL)"))
		}
	}
}
