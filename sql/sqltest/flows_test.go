package sqltest

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testdataFleet is the export of every capture of testdata/ into a
// folder of its own under one root, with the JSON reports: made once.
var testdataFleet struct {
	root    string
	reports map[string]report
}

func TestMain(m *testing.M) {
	code := m.Run()
	if testdataFleet.root != "" {
		os.RemoveAll(testdataFleet.root)
	}
	os.Exit(code)
}

// fleetOfTestdata returns the export of testdata/ (made on first use).
func fleetOfTestdata(t *testing.T) (string, map[string]report) {
	t.Helper()
	if testdataFleet.root == "" {
		root, err := os.MkdirTemp("", "sqltest-fleet-")
		require.NoError(t, err)
		testdataFleet.reports = exportCaptures(t, root, testdataCaptures(t))
		testdataFleet.root = root
	}
	return testdataFleet.root, testdataFleet.reports
}

// flowColumns says where in a JSON flow each column of flow_totals.sql
// comes from (the oracle: docs/json.md's names).
var flowColumns = []struct {
	col  string
	path []string
}{
	{"src", []string{"src"}},
	{"dst", []string{"dst"}},
	{"dest_qp", []string{"dest_qp"}},
	{"transport", []string{"transport"}},
	{"packets", []string{"packets"}},
	{"wire_bytes", []string{"wire_bytes"}},
	{"payload_bytes", []string{"payload_bytes"}},
	{"first_ns", []string{"first_time"}},
	{"last_ns", []string{"last_time"}},
	{"request_packets", []string{"requests", "packets"}},
	{"missing", []string{"requests", "missing"}},
	{"missing_not_captured", []string{"requests", "missing_not_captured"}},
	{"missing_lost", []string{"requests", "missing_lost"}},
	{"retransmitted", []string{"requests", "retransmitted"}},
	{"retransmit_causes_nak", []string{"requests", "retransmit_causes", "nak"}},
	{"retransmit_causes_rnr", []string{"requests", "retransmit_causes", "rnr"}},
	{"retransmit_causes_timeout", []string{"requests", "retransmit_causes", "timeout"}},
	{"duplicates", []string{"requests", "duplicates"}},
	{"out_of_order", []string{"requests", "out_of_order"}},
	{"response_packets", []string{"responses", "packets"}},
	{"acks", []string{"responses", "acks"}},
	{"naks", []string{"responses", "naks"}},
	{"rnr_naks", []string{"responses", "rnr_naks"}},
	{"ecn_ce", []string{"congestion", "ecn_ce"}},
	{"fecn", []string{"congestion", "fecn"}},
	{"becn", []string{"congestion", "becn"}},
	{"cnps", []string{"congestion", "cnps"}},
	{"icrc_bad", []string{"icrc", "bad"}},
}

// jsonFlowRow is flow's row of flow_totals.sql as the JSON report says.
func jsonFlowRow(t *testing.T, capture string, flow any) map[string]string {
	t.Helper()
	row := map[string]string{"capture": capture}
	for _, c := range flowColumns {
		v := text(get(flow, c.path...))
		if c.col == "first_ns" || c.col == "last_ns" {
			ts, err := time.Parse(time.RFC3339Nano, v)
			require.NoError(t, err)
			v = strconv.FormatInt(ts.UnixNano(), 10)
		}
		row[c.col] = v
	}
	return row
}

// TestFlowTotals: sql/flow_totals.sql, on the exports of every testdata
// capture, has a row per capture and flow, each equal to that capture's
// JSON flow, and the columns flowColumns names.
func TestFlowTotals(t *testing.T) {
	root, reps := fleetOfTestdata(t)
	conn := openFleet(t, root)
	res, err := query(t, conn, readSQL(t, "sql/flow_totals.sql"))
	require.NoError(t, err)
	want := []string{"capture"}
	for _, c := range flowColumns {
		want = append(want, c.col)
	}
	require.ElementsMatch(t, want, res.cols)

	key := func(r map[string]string) string {
		return r["capture"] + " " + r["src"] + " " + r["dst"] + " " + r["dest_qp"] + " " + r["transport"]
	}
	got := map[string]map[string]string{}
	for i := range res.rows {
		r := res.row(i)
		require.NotContains(t, got, key(r), "one row per capture and flow")
		got[key(r)] = r
	}
	n := 0
	for capture, rep := range reps {
		for _, f := range get(rep, "flows").([]any) {
			w := jsonFlowRow(t, capture, f)
			n++
			assert.Equal(t, w, got[key(w)], "flow %s", key(w))
		}
	}
	assert.Equal(t, n, len(res.rows), "rows")
	assert.Len(t, reps, len(testdataCaptures(t)))
}

// TestLostQPs: sql/lost_qps.sql lists exactly the flows whose JSON says
// they lost packets in the network, recovered or not (a missing PSN
// NAKed or resent, or a resend after a NAK or a timeout), among them the
// RC flows of loss_behind_tap and loss_nak_gobackn, which the query of
// docs/parquet.md before issue 22 missed.
func TestLostQPs(t *testing.T) {
	root, reps := fleetOfTestdata(t)
	conn := openFleet(t, root)
	var docQuery string // docs/parquet.md's "which QPs lost packets last night"
	for name, q := range queryFiles(t) {
		if strings.HasPrefix(name, "docs/parquet.md") && strings.Contains(q, "retransmit_causes_timeout > 0") {
			docQuery = q
		}
	}
	require.NotEmpty(t, docQuery, "docs/parquet.md's lost QPs query")
	want := map[string]bool{}
	for capture, rep := range reps {
		for _, f := range get(rep, "flows").([]any) {
			n := func(p ...string) string { return text(get(f, p...)) }
			if n("requests", "missing_lost") != "0" || n("requests", "retransmit_causes", "nak") != "0" || n("requests", "retransmit_causes", "timeout") != "0" {
				want[capture+" "+n("src")+" "+n("dst")+" "+n("dest_qp")] = true
			}
		}
	}
	for name, q := range map[string]string{"sql/lost_qps.sql": readSQL(t, "sql/lost_qps.sql"), "docs/parquet.md": docQuery} {
		res, err := query(t, conn, q)
		require.NoError(t, err, name)
		got := map[string]bool{}
		for i := range res.rows {
			r := res.row(i)
			got[r["capture"]+" "+r["src"]+" "+r["dst"]+" "+r["dest_qp"]] = true
		}
		assert.Equal(t, want, got, name)
		for _, k := range []string{"loss_behind_tap 10.0.0.1 10.0.0.2 22121", "loss_nak_gobackn 10.0.0.1 10.0.0.2 22121"} {
			assert.True(t, got[k], "%s: %s lost packets", name, k)
		}
	}
}
