package cli_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/roce-dissect/roce-dissect/internal/export/exporttest"
	"github.com/roce-dissect/roce-dissect/internal/synth/ncclsynth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readParquet reads a Parquet file with Apache Arrow's reader (not the
// library that wrote it) into rows of JSON-like values: numbers as
// float64, timestamps as RFC 3339 strings, nulls as nil.
func readParquet(t *testing.T, path string) []map[string]any {
	t.Helper()
	rows := exporttest.ReadRows(t, path)
	for _, row := range rows {
		for k, v := range row {
			row[k] = jsonValue(t, v)
		}
	}
	return rows
}

// jsonValue is a value Arrow read as JSON has it.
func jsonValue(t *testing.T, v any) any {
	switch v := v.(type) {
	case nil, float64, bool, string:
		return v
	case uint64:
		return float64(v)
	case uint32:
		return float64(v)
	case uint16:
		return float64(v)
	case uint8:
		return float64(v)
	case int64:
		return float64(v)
	case int32:
		return float64(v)
	case arrow.Timestamp:
		return time.Unix(0, int64(v)).UTC().Format(time.RFC3339Nano)
	}
	t.Fatalf("unexpected value %T", v)
	return nil
}

// jsonLines decodes NDJSON.
func jsonLines(t *testing.T, s string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m))
		out = append(out, m)
	}
	return out
}

// asList is a JSON array, nil for none.
func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func get(m map[string]any, path ...string) any {
	var v any = m
	for _, k := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// TestExportReadBack: the Parquet tables --export writes, read back with
// Apache Arrow's Go reader, hold the same packets as the per-packet JSON
// output (-P -o json) and the same flows, connections and findings as the
// JSON report, with -j 1 and -j 3.
func TestExportReadBack(t *testing.T) {
	caps, err := filepath.Glob("../../testdata/*.pcap*")
	require.NoError(t, err)
	for _, file := range caps {
		if strings.HasSuffix(file, ".json") {
			continue
		}
		for _, jobs := range []string{"1", "3"} {
			t.Run(filepath.Base(file)+"/j"+jobs, func(t *testing.T) {
				checkExportReadBack(t, file, jobs)
			})
		}
	}
}

// checkExportReadBack exports file's tables with -j jobs and compares
// them with the per-packet JSON output and the JSON report (-j jobs).
func checkExportReadBack(t *testing.T, file, jobs string) {
	t.Helper()
	dir := t.TempDir()
	code, _, errs := run(t, nil, "-o", "parquet", "--export", dir, "-j", jobs, file)
	require.Equal(t, 0, code, errs)
	code, pk, errs := run(t, nil, "-P", "-o", "json", file)
	require.Equal(t, 0, code, errs)
	code, rep, errs := run(t, nil, "-o", "json", "-j", jobs, file)
	require.Equal(t, 0, code, errs)

	// With -j the findings at a range's seam differ (docs/parallel.md);
	// -P reads sequentially.
	checkPacketsReadBack(t, dir, file, pk, jobs == "1")
	var r map[string]any
	require.NoError(t, json.Unmarshal([]byte(rep), &r))
	checkTableReadBack(t, dir, "flows", r["flows"].([]any), func(i int, w, g map[string]any) {
		checkFlowRow(t, file, i, w, g)
	})
	checkTableReadBack(t, dir, "pause", asList(r["pause"]), func(i int, w, g map[string]any) {
		checkPauseRow(t, r, i, w, g)
	})
	checkTableReadBack(t, dir, "connections", r["connections"].([]any), func(_ int, w, g map[string]any) {
		checkConnectionRow(t, w, g)
	})
	checkTableReadBack(t, dir, "findings", r["findings"].([]any), func(i int, w, g map[string]any) {
		checkFindingRow(t, file, i, w, g)
	})
	checkCollectiveTables(t, dir, filepath.Base(file), r)
}

// checkCollectiveTables compares the collectives, collective_links and
// collective_arrivals tables in dir with the JSON report r's
// nccl.collectives, their links and arrivals (none: empty tables), each
// row's capture column naming capture.
func checkCollectiveTables(t *testing.T, dir, capture string, r map[string]any) {
	t.Helper()
	colls := asList(get(r, "nccl", "collectives"))
	var links, arrivals []any
	for _, c := range colls {
		c := c.(map[string]any)
		for _, sub := range []struct {
			key  string
			rows *[]any
		}{{"links", &links}, {"arrivals", &arrivals}} {
			for _, x := range asList(c[sub.key]) {
				row := maps.Clone(x.(map[string]any))
				row["index"] = c["index"]
				*sub.rows = append(*sub.rows, row)
			}
		}
	}
	checkTableReadBack(t, dir, "collectives", colls, func(i int, w, g map[string]any) {
		for _, k := range []string{"index", "kind", "algorithm", "protocol", "size_bytes", "start", "end",
			"duration_ns", "busy_ns", "algbw_bps", "busbw_bps"} {
			assert.Equal(t, w[k], g[k], "collective %d: %s", i, k)
		}
		s, _ := w["straggler"].(map[string]any)
		for k, col := range map[string]string{"rank": "straggler_rank", "kind": "straggler_kind", "late_ns": "straggler_late_ns",
			"receiver_rank": "straggler_receiver_rank", "why": "straggler_why"} {
			assert.Equal(t, s[k], g[col], "collective %d: %s", i, col)
		}
		assert.Equal(t, capture, g["capture"], "collective %d", i)
	})
	checkTableReadBack(t, dir, "collective_links", links, func(i int, w, g map[string]any) {
		for _, k := range []string{"index", "sender_rank", "receiver_rank", "bytes", "messages", "steps"} {
			assert.Equal(t, w[k], g[k], "link %d: %s", i, k)
		}
		assert.Equal(t, capture, g["capture"], "link %d", i)
	})
	checkTableReadBack(t, dir, "collective_arrivals", arrivals, func(i int, w, g map[string]any) {
		for _, k := range []string{"index", "rank", "first_cts", "first_data", "late_ns"} {
			assert.Equal(t, w[k], g[k], "arrival %d: %s", i, k)
		}
		assert.Equal(t, capture, g["capture"], "arrival %d", i)
	})
}

// TestExportCollectives: the collectives tables of a roce-synth nccl job
// with a host-late rank, read back with Arrow, hold the JSON report's
// nccl collectives, links and arrivals: each host's capture exported
// alone (-o parquet, written while the report is built) and the job's
// captures together as capture points (--export with -o json).
func TestExportCollectives(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "job")
	var out, errb bytes.Buffer
	require.Zero(t, ncclsynth.Run([]string{"-o", prefix, "--nanos", "--ranks", "3", "--gap", "20ms", "--host-late", "1=2ms",
		"--coll", "all_reduce:1M,all_gather:768K"}, &out, &errb), errb.String())
	files, err := filepath.Glob(prefix + ".rank*.pcap")
	require.NoError(t, err)
	require.Len(t, files, 3)
	n := 0
	for _, in := range append([][]string{files}, [][]string{{files[0]}, {files[1]}, {files[2]}}...) {
		t.Run(fmt.Sprint(len(in), " files"), func(t *testing.T) {
			exp := t.TempDir()
			args := []string{"-o", "parquet", "--export", exp}
			if len(in) > 1 {
				args = []string{"-o", "json", "--export", exp}
			}
			code, _, errs := run(t, nil, append(args, in...)...)
			require.Equal(t, 0, code, errs)
			code, rep, errs := run(t, nil, append([]string{"-o", "json"}, in...)...)
			require.Equal(t, 0, code, errs)
			var r map[string]any
			require.NoError(t, json.Unmarshal([]byte(rep), &r))
			n += len(asList(get(r, "nccl", "collectives")))
			checkCollectiveTables(t, exp, strings.Join(in, " "), r) // the files as named

		})
	}
	assert.Equal(t, 2*4, n, "collectives compared: 2 in each view")
}

// checkTableReadBack reads table (table.parquet) in dir, requires as
// many rows as the report's, want (a JSON array of objects), and has
// check compare each report row w with the table's row g, in order.
func checkTableReadBack(t *testing.T, dir, table string, want []any, check func(i int, w, g map[string]any)) {
	t.Helper()
	rows := readParquet(t, filepath.Join(dir, table+".parquet"))
	require.Equal(t, len(want), len(rows), table)
	for i, x := range want {
		check(i, x.(map[string]any), rows[i])
	}
}

// checkPacketsReadBack compares the packets tables in dir, in order,
// with the per-packet JSON lines pk of file but its pause frames, the
// packets' findings only when withFindings.
func checkPacketsReadBack(t *testing.T, dir, file, pk string, withFindings bool) {
	t.Helper()
	parts, err := filepath.Glob(filepath.Join(dir, "packets-*.parquet"))
	require.NoError(t, err)
	sort.Strings(parts)
	var got []map[string]any
	for _, p := range parts {
		got = append(got, readParquet(t, p)...)
	}
	var want []map[string]any
	for _, w := range jsonLines(t, pk) {
		if w["mac_control"] == nil { // pause frames are no packets rows
			want = append(want, w)
		}
	}
	require.Equal(t, len(want), len(got), "packets")
	for i, w := range want {
		checkPacketRow(t, file, w, got[i], withFindings)
	}
}

// checkPacketRow compares packets row g with the packet's JSON w: the
// file, the frame's columns, the BTH, ICRC, AETH and RETH fields, the
// priority and the encapsulation (the wraps' kinds joined by "/", null
// without wraps); the findings only when withFindings.
func checkPacketRow(t *testing.T, file string, w, g map[string]any, withFindings bool) {
	t.Helper()
	label := fmt.Sprintf("frame %v", w["frame"])
	assert.Equal(t, file, g["file"], label)
	for _, k := range []string{"frame", "time", "src", "dst", "encap", "length", "payload_len"} {
		assert.Equal(t, w[k], g[k], "%s: %s", label, k)
	}
	if withFindings {
		assert.Equal(t, w["findings"], g["findings"], label)
	}
	assert.Equal(t, w["error"], g["error"], label)
	for _, k := range []string{"dest_qp", "opcode", "opcode_name", "psn", "ack_req", "se", "fecn", "becn", "pkey"} {
		assert.Equal(t, get(w, "bth", k), g[k], "%s: %s", label, k)
	}
	assert.Equal(t, get(w, "icrc", "status"), g["icrc"], label)
	assert.Equal(t, get(w, "icrc", "original_src_port") != nil, g["icrc_port_rewritten"], label)
	assert.Equal(t, get(w, "aeth", "type"), g["aeth_type"], label)
	assert.Equal(t, get(w, "aeth", "msn"), g["aeth_msn"], label)
	assert.Equal(t, get(w, "reth", "dma_length"), g["reth_dma_length"], label)
	assert.Equal(t, w["priority"], g["priority"], label)
	var chain []string
	for _, x := range asList(w["wraps"]) {
		chain = append(chain, x.(map[string]any)["kind"].(string))
	}
	if chain == nil {
		assert.Nil(t, g["encapsulation"], label)
	} else {
		assert.Equal(t, strings.Join(chain, "/"), g["encapsulation"], label)
	}
}

// flowNestedColumns are the flows table's columns of the report's nested
// flow fields: the object, the field in it and the column.
var flowNestedColumns = [][3]string{
	{"requests", "packets", "request_packets"},
	{"requests", "psn_first", "psn_first"},
	{"requests", "psn_last", "psn_last"},
	{"requests", "missing", "missing"},
	{"requests", "missing_not_captured", "missing_not_captured"},
	{"requests", "missing_lost", "missing_lost"},
	{"requests", "retransmitted", "retransmitted"},
	{"requests", "duplicates", "duplicates"},
	{"requests", "out_of_order", "out_of_order"},
	{"responses", "packets", "response_packets"},
	{"responses", "acks", "acks"},
	{"responses", "naks", "naks"},
	{"responses", "rnr_naks", "rnr_naks"},
	{"congestion", "ecn_ce", "ecn_ce"},
	{"congestion", "cnps", "cnps"},
	{"icrc", "ok", "icrc_ok"},
	{"icrc", "bad", "icrc_bad"},
	{"icrc", "unverifiable", "icrc_unverifiable"},
	{"icrc", "port_rewritten", "icrc_port_rewritten"},
	{"mtu", "inferred", "mtu_inferred"},
	{"mtu", "negotiated", "mtu_negotiated"},
}

// checkFlowRow compares flows row g with flow i of the report, w: the
// capture, the flat and nested fields, the gaps, the retransmit causes,
// the messages, the RTT, the priority and the time paused (0 for a flow
// with a priority the report gives no time paused), and the tunnel.
func checkFlowRow(t *testing.T, file string, i int, w, g map[string]any) {
	t.Helper()
	assert.Equal(t, file, g["capture"])
	for _, k := range []string{"src", "dst", "dest_qp", "transport", "connection", "packets", "wire_bytes", "payload_bytes", "first_time", "last_time", "throughput_bps"} {
		assert.Equal(t, w[k], g[k], "flow %d: %s", i, k)
	}
	for _, k := range flowNestedColumns {
		assert.Equal(t, get(w, k[0], k[1]), g[k[2]], "flow %d: %s", i, k[2])
	}
	gaps, _ := get(w, "requests", "gaps").([]any) // absent when none
	assert.Equal(t, float64(len(gaps)), g["gaps"], "flow %d: gaps", i)
	for _, k := range []string{"nak", "rnr", "timeout"} {
		assert.Equal(t, get(w, "requests", "retransmit_causes", k), g["retransmit_causes_"+k], "flow %d: retransmit_causes_%s", i, k)
	}
	assert.Equal(t, get(w, "messages", "count"), g["messages"], "flow %d", i)
	assert.Equal(t, get(w, "messages", "incomplete"), g["incomplete_messages"], "flow %d", i)
	assert.Equal(t, get(w, "responses", "rtt", "median_ns"), g["rtt_median_ns"], "flow %d", i)
	assert.Equal(t, w["priority"], g["priority"], "flow %d", i)
	if w["priority"] != nil && w["paused_ns"] == nil {
		assert.Equal(t, 0.0, g["paused_ns"], "flow %d: not paused", i)
	} else {
		assert.Equal(t, w["paused_ns"], g["paused_ns"], "flow %d", i)
	}
	for _, k := range []string{"kind", "id", "id_name"} {
		assert.Equal(t, get(w, "tunnel", k), g["tunnel_"+k], "flow %d: tunnel_%s", i, k)
	}
}

// checkPauseRow compares pause row g with pause row i of the report r,
// w: every field, and the capture's link speed.
func checkPauseRow(t *testing.T, r map[string]any, i int, w, g map[string]any) {
	t.Helper()
	for k, v := range w {
		assert.Equal(t, v, g[k], "pause %d: %s", i, k)
	}
	assert.Equal(t, get(r, "capture", "link_speed_bps"), g["link_speed_bps"], "pause %d", i)
}

// checkConnectionRow compares connections row g with the report's
// connection w: its id, state, service ID, requester QPN, responder IP
// and REQ frame.
func checkConnectionRow(t *testing.T, w, g map[string]any) {
	t.Helper()
	assert.Equal(t, w["id"], g["id"])
	assert.Equal(t, w["state"], g["state"])
	assert.Equal(t, w["service_id"], g["service_id"])
	assert.Equal(t, get(w, "requester", "qpn"), g["requester_qpn"])
	assert.Equal(t, get(w, "responder", "ip"), g["responder_ip"])
	assert.Equal(t, get(w, "frames", "req"), g["req_frame"])
}

// checkFindingRow compares findings row g with finding i of the report,
// w, of file.
func checkFindingRow(t *testing.T, file string, i int, w, g map[string]any) {
	t.Helper()
	for _, k := range []string{"frame", "kind", "severity", "flow", "detail", "connection"} {
		assert.Equal(t, w[k], g[k], "finding %d: %s", i, k)
	}
	assert.Equal(t, file, g["file"])
}

// TestExportStreamedTables: -o parquet writes the flows, connections and
// findings tables while the report is built (streamExport); --export with
// another output writes them from the report held whole (exportReport).
// Both hold the same rows, with and without --qp, read back with Arrow.
func TestExportStreamedTables(t *testing.T) {
	caps, err := filepath.Glob("../../testdata/*.pcap*")
	require.NoError(t, err)
	n := 0
	for _, file := range caps {
		if strings.HasSuffix(file, ".json") {
			continue
		}
		for _, sel := range [][]string{nil, {"--qp", "0x11"}} {
			streamed, whole := t.TempDir(), t.TempDir()
			code, _, errs := run(t, nil, append(append([]string{"-o", "parquet", "--export", streamed}, sel...), file)...)
			require.Equal(t, 0, code, errs)
			code, _, errs = run(t, nil, append(append([]string{"-o", "json", "--export", whole}, sel...), file)...)
			require.Equal(t, 0, code, errs)
			for _, table := range []string{"flows.parquet", "connections.parquet", "findings.parquet", "pause.parquet",
				"collectives.parquet", "collective_links.parquet", "collective_arrivals.parquet"} {
				w := readParquet(t, filepath.Join(whole, table))
				n += len(w)
				assert.Equal(t, w, readParquet(t, filepath.Join(streamed, table)), "%s %v: %s", file, sel, table)
			}
		}
	}
	assert.NotZero(t, n, "rows compared")
}
