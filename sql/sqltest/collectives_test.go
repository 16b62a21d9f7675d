package sqltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/synth/ncclsynth"
)

// slowRow is a row of sql/slow_collectives.sql: a collective's index,
// its late rank and how late.
type slowRow struct {
	index, rank int
	lateNs      int64
}

// slowCollectives runs sql/slow_collectives.sql over the exports under
// root and returns its rows, checking that every collective was seen by
// exports exports.
func slowCollectives(t *testing.T, root string, exports int) []slowRow {
	t.Helper()
	conn := openFleet(t, root)
	res, err := query(t, conn, readSQL(t, "sql/slow_collectives.sql"))
	require.NoError(t, err)
	var rows []slowRow
	for i := range res.rows {
		r := res.row(i)
		assert.Equal(t, strconv.Itoa(exports), r["exports"], "collective %s", r["index"])
		var s slowRow
		var err error
		s.index, err = strconv.Atoi(r["index"])
		require.NoError(t, err)
		s.rank, err = strconv.Atoi(r["late_rank"])
		require.NoError(t, err)
		s.lateNs, err = strconv.ParseInt(r["late_ns"], 10, 64)
		require.NoError(t, err)
		rows = append(rows, s)
	}
	return rows
}

// exportAlone exports each file into root/NAME (its name without
// extension), each alone as one host of a fleet exports its capture.
func exportAlone(t *testing.T, root string, files []string) {
	t.Helper()
	caps := map[string][]string{}
	for _, f := range files {
		caps[filepath.Base(f[:len(f)-len(filepath.Ext(f))])] = []string{f}
	}
	exportCaptures(t, root, caps)
}

// TestSlowCollectivesSynth: sql/slow_collectives.sql over per-host
// exports of a roce-synth nccl job names the collectives the generator's
// truth says a late host held up, with that rank and its lateness
// exactly (nanosecond captures, the hosts' clocks agreeing); and none for
// a job without faults.
func TestSlowCollectivesSynth(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		anySlow bool
	}{
		{"host-late rank 2, ring", []string{"--ranks", "4", "--host-late", "2=2ms", "--coll", "all_reduce:1M,all_gather:256K,reduce_scatter:512K"}, true},
		{"host-late rank 0, 2 channels", []string{"--ranks", "3", "--channels", "2", "--host-late", "0=1ms", "--coll", "all_reduce:64K,broadcast:128K"}, true},
		{"no fault", []string{"--ranks", "4", "--coll", "all_reduce:1M,all_gather:256K"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			prefix := filepath.Join(dir, "job")
			var out, errb bytes.Buffer
			// Collectives 20 ms apart: a host alone tells one from the next by the
			// idle time between them (docs/analysis.md), longer than the lateness.
			args := append([]string{"-o", prefix, "--nanos", "--gap", "20ms"}, tc.args...)
			require.Zero(t, ncclsynth.Run(args, &out, &errb), errb.String())
			var truth ncclsynth.Truth
			b, err := os.ReadFile(prefix + ".truth.json")
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &truth))
			files, err := filepath.Glob(prefix + ".rank*.pcap")
			require.NoError(t, err)
			require.Len(t, files, len(truth.Ranks))

			var want []slowRow
			for _, c := range truth.Collectives {
				if s := c.Straggler; s != nil && s.Kind == "host" {
					want = append(want, slowRow{c.Index, s.Rank, s.LateNs})
				}
			}
			require.Equal(t, tc.anySlow, len(want) > 0, "the truth's host-late collectives")
			root := filepath.Join(dir, "fleet")
			exportAlone(t, root, files)
			assert.Equal(t, want, slowCollectives(t, root, len(files)))
		})
	}
}

// TestSlowCollectivesReal: sql/slow_collectives.sql over the exports of
// the real 3-host NCCL job's captures, each exported alone, names the
// rank the capture points analysis of the three files together (one
// clock, the JSON straggler) found host-late, in each collective it did,
// and as late within the hosts' clock disagreement (50 µs).
func TestSlowCollectivesReal(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repo, "..", "shared", "captures", "nccl", "node*.pcap"))
	require.NoError(t, err)
	if len(files) == 0 {
		t.Skip("../shared/captures/nccl absent")
	}
	root := t.TempDir()
	exportAlone(t, filepath.Join(root, "fleet"), files)
	together := exportCaptures(t, filepath.Join(root, "together"), map[string][]string{"job": files})["job"]
	var want []slowRow
	for _, c := range asSlice(get(together, "nccl", "collectives")) {
		s, ok := get(c, "straggler").(map[string]any)
		if !ok || s["kind"] != "host" {
			continue
		}
		want = append(want, slowRow{int(num(t, get(c, "index"))), int(num(t, s["rank"])), num(t, s["late_ns"])})
	}
	require.NotEmpty(t, want, "the job's JSON names host-late ranks")
	got := slowCollectives(t, filepath.Join(root, "fleet"), len(files))
	require.Len(t, got, len(want))
	for i, w := range want {
		assert.Equal(t, w.index, got[i].index)
		assert.Equal(t, w.rank, got[i].rank, "collective %d", w.index)
		assert.InDelta(t, w.lateNs, got[i].lateNs, float64(50*time.Microsecond), "collective %d", w.index)
	}
}

// num is a JSON number as an int64.
func num(t *testing.T, v any) int64 {
	t.Helper()
	n, err := strconv.ParseInt(fmt.Sprint(v), 10, 64)
	require.NoError(t, err, "%v", v)
	return n
}

// asSlice is a JSON array, nil for none.
func asSlice(v any) []any {
	l, _ := v.([]any)
	return l
}
