package sqltest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // the "duckdb" database/sql driver
	"github.com/stretchr/testify/require"

	"github.com/roce-dissect/roce-dissect/internal/cli"
)

// repo is the repository's root (this module lives in sql/sqltest).
var repo = func() string {
	p, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return p
}()

// report is a capture's JSON report, numbers kept as json.Number.
type report = map[string]any

// exportCaptures exports each capture of caps (export folder name → its
// files) into root/NAME with `roce-dissect -o json --export` (and args),
// run in-process, and returns each capture's JSON report: the oracle.
func exportCaptures(t testing.TB, root string, caps map[string][]string, args ...string) map[string]report {
	t.Helper()
	reps := map[string]report{}
	for name, files := range caps {
		var out, errb bytes.Buffer
		argv := append(append([]string{"-o", "json", "--export", filepath.Join(root, name)}, args...), files...)
		code := cli.Run(context.Background(), argv, &out, &errb)
		require.Contains(t, []int{cli.ExitOK, cli.ExitDamaged}, code, "%s: %s", name, errb.String())
		dec := json.NewDecoder(&out)
		dec.UseNumber()
		var r report
		require.NoError(t, dec.Decode(&r), name)
		reps[name] = r
	}
	return reps
}

// testdataCaptures are the captures of testdata/, each its own export
// folder named after the file (without extension).
func testdataCaptures(t testing.TB) map[string][]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repo, "testdata", "*.pcap*"))
	require.NoError(t, err)
	caps := map[string][]string{}
	for _, f := range files {
		if strings.HasSuffix(f, ".json") {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), filepath.Ext(f))
		caps[name] = []string{f}
	}
	require.NotEmpty(t, caps)
	return caps
}

// readSQL is the text of a file of the repository.
func readSQL(t testing.TB, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, rel))
	require.NoError(t, err)
	return string(b)
}

// openFleet opens an in-memory DuckDB with the working directory at root
// (the directory the queries run in) and runs sql/duckdb.sql on one
// connection (its SET is the connection's).
func openFleet(t *testing.T, root string) *sql.Conn {
	t.Helper()
	prelude := readSQL(t, "sql/duckdb.sql")
	t.Chdir(root)
	db, err := sql.Open("duckdb", "")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	conn, err := db.Conn(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	_, err = conn.ExecContext(context.Background(), prelude)
	require.NoError(t, err, "sql/duckdb.sql")
	return conn
}

// result is a query's answer: its column names and its rows, each value
// as text (text: NULL for null).
type result struct {
	cols []string
	rows [][]string
}

// row returns the i-th row by column name.
func (r result) row(i int) map[string]string {
	m := map[string]string{}
	for c, name := range r.cols {
		m[name] = r.rows[i][c]
	}
	return m
}

// query runs q and returns its answer.
func query(t testing.TB, conn *sql.Conn, q string) (result, error) {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), q)
	if err != nil {
		return result{}, err
	}
	defer rows.Close()
	var r result
	if r.cols, err = rows.Columns(); err != nil {
		return r, err
	}
	for rows.Next() {
		vals := make([]any, len(r.cols))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return r, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = text(v)
		}
		r.rows = append(r.rows, row)
	}
	return r, rows.Err()
}

// text is a value as the JSON report would write it: numbers in
// decimal, times in RFC 3339 (UTC), NULL for null.
func text(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano)
	case *big.Int:
		return v.String()
	case json.Number:
		return v.String()
	case []byte:
		return string(v)
	}
	return fmt.Sprint(v)
}

// get is the value at path in a JSON object, nil when absent.
func get(m any, path ...string) any {
	for _, k := range path {
		o, ok := m.(map[string]any)
		if !ok {
			return nil
		}
		m = o[k]
	}
	return m
}
