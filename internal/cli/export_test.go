package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readParquet reads a Parquet file with Apache Arrow's reader (not the
// library that wrote it) into rows of JSON-like values: numbers as
// float64, timestamps as RFC 3339 strings, nulls as nil.
func readParquet(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	tbl, err := pqarrow.ReadTable(context.Background(), f, parquet.NewReaderProperties(memory.DefaultAllocator), pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	require.NoError(t, err, path)
	defer tbl.Release()
	rows := make([]map[string]any, tbl.NumRows())
	for i := range rows {
		rows[i] = map[string]any{}
	}
	for c := 0; c < int(tbl.NumCols()); c++ {
		col := tbl.Column(c)
		row := 0
		for _, chunk := range col.Data().Chunks() {
			for i := 0; i < chunk.Len(); i++ {
				rows[row][col.Name()] = arrowValue(t, chunk, i)
				row++
			}
		}
	}
	return rows
}

func arrowValue(t *testing.T, a arrow.Array, i int) any {
	if a.IsNull(i) {
		return nil
	}
	switch a := a.(type) {
	case *array.Uint64:
		return float64(a.Value(i))
	case *array.Uint32:
		return float64(a.Value(i))
	case *array.Uint16:
		return float64(a.Value(i))
	case *array.Uint8:
		return float64(a.Value(i))
	case *array.Int64:
		return float64(a.Value(i))
	case *array.Int32:
		return float64(a.Value(i))
	case *array.Float64:
		return a.Value(i)
	case *array.Boolean:
		return a.Value(i)
	case *array.String:
		return a.Value(i)
	case *array.Timestamp:
		return time.Unix(0, int64(a.Value(i))).UTC().Format(time.RFC3339Nano)
	}
	t.Fatalf("unexpected Arrow type %s", a.DataType())
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
				dir := t.TempDir()
				code, _, errs := run(t, nil, "-o", "parquet", "--export", dir, "-j", jobs, file)
				require.Equal(t, 0, code, errs)
				code, pk, errs := run(t, nil, "-P", "-o", "json", file)
				require.Equal(t, 0, code, errs)
				code, rep, errs := run(t, nil, "-o", "json", "-j", jobs, file)
				require.Equal(t, 0, code, errs)

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
					g := got[i]
					label := fmt.Sprintf("frame %v", w["frame"])
					assert.Equal(t, file, g["file"], label)
					for _, k := range []string{"frame", "time", "src", "dst", "encap", "length", "payload_len"} {
						assert.Equal(t, w[k], g[k], "%s: %s", label, k)
					}
					if jobs == "1" {
						// With -j the findings at a range's seam differ
						// (docs/parallel.md); -P reads sequentially.
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

				var r map[string]any
				require.NoError(t, json.Unmarshal([]byte(rep), &r))
				flows := readParquet(t, filepath.Join(dir, "flows.parquet"))
				wf := r["flows"].([]any)
				require.Equal(t, len(wf), len(flows), "flows")
				for i, x := range wf {
					w, g := x.(map[string]any), flows[i]
					assert.Equal(t, file, g["capture"])
					for _, k := range []string{"src", "dst", "dest_qp", "transport", "connection", "packets", "wire_bytes", "payload_bytes", "first_time", "last_time", "throughput_bps"} {
						assert.Equal(t, w[k], g[k], "flow %d: %s", i, k)
					}
					for _, k := range [][2]string{{"requests", "packets"}, {"requests", "psn_first"}, {"requests", "psn_last"}, {"requests", "missing"}, {"requests", "missing_not_captured"}, {"requests", "missing_lost"}, {"requests", "retransmitted"}, {"requests", "duplicates"}, {"requests", "out_of_order"}, {"responses", "packets"}, {"responses", "acks"}, {"responses", "naks"}, {"responses", "rnr_naks"}, {"congestion", "ecn_ce"}, {"congestion", "cnps"}, {"icrc", "ok"}, {"icrc", "bad"}, {"icrc", "unverifiable"}, {"mtu", "inferred"}, {"mtu", "negotiated"}} {
						col := k[1]
						switch k {
						case [2]string{"requests", "packets"}:
							col = "request_packets"
						case [2]string{"responses", "packets"}:
							col = "response_packets"
						case [2]string{"icrc", "ok"}, [2]string{"icrc", "bad"}, [2]string{"icrc", "unverifiable"}, [2]string{"mtu", "inferred"}, [2]string{"mtu", "negotiated"}:
							col = k[0] + "_" + k[1]
						}
						assert.Equal(t, get(w, k[0], k[1]), g[col], "flow %d: %s", i, col)
					}
					assert.Equal(t, float64(len(get(w, "requests", "gaps").([]any))), g["gaps"], "flow %d: gaps", i)
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
				}
				pause := readParquet(t, filepath.Join(dir, "pause.parquet"))
				wp := asList(r["pause"])
				require.Equal(t, len(wp), len(pause), "pause")
				for i, x := range wp {
					w, g := x.(map[string]any), pause[i]
					for k, v := range w {
						assert.Equal(t, v, g[k], "pause %d: %s", i, k)
					}
					assert.Equal(t, get(r, "capture", "link_speed_bps"), g["link_speed_bps"], "pause %d", i)
				}
				conns := readParquet(t, filepath.Join(dir, "connections.parquet"))
				wc := r["connections"].([]any)
				require.Equal(t, len(wc), len(conns), "connections")
				for i, x := range wc {
					w, g := x.(map[string]any), conns[i]
					assert.Equal(t, w["id"], g["id"])
					assert.Equal(t, w["state"], g["state"])
					assert.Equal(t, w["service_id"], g["service_id"])
					assert.Equal(t, get(w, "requester", "qpn"), g["requester_qpn"])
					assert.Equal(t, get(w, "responder", "ip"), g["responder_ip"])
					assert.Equal(t, get(w, "frames", "req"), g["req_frame"])
				}
				finds := readParquet(t, filepath.Join(dir, "findings.parquet"))
				wd := r["findings"].([]any)
				require.Equal(t, len(wd), len(finds), "findings")
				for i, x := range wd {
					w, g := x.(map[string]any), finds[i]
					for _, k := range []string{"frame", "kind", "severity", "flow", "detail", "connection"} {
						assert.Equal(t, w[k], g[k], "finding %d: %s", i, k)
					}
					assert.Equal(t, file, g["file"])
				}
			})
		}
	}
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
			for _, table := range []string{"flows.parquet", "connections.parquet", "findings.parquet", "pause.parquet"} {
				w := readParquet(t, filepath.Join(whole, table))
				n += len(w)
				assert.Equal(t, w, readParquet(t, filepath.Join(streamed, table)), "%s %v: %s", file, sel, table)
			}
		}
	}
	assert.NotZero(t, n, "rows compared")
}
