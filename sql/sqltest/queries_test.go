package sqltest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sqlBlock is a ```sql block of a Markdown file.
var sqlBlock = regexp.MustCompile("(?s)```sql\n(.*?)```")

// queryFiles are the queries of sql/ (every .sql file but the preludes)
// and the ```sql blocks of docs/*.md, by name.
func queryFiles(t *testing.T) map[string]string {
	t.Helper()
	qs := map[string]string{}
	files, err := filepath.Glob(filepath.Join(repo, "sql", "*.sql"))
	require.NoError(t, err)
	for _, f := range files {
		if b := filepath.Base(f); b == "duckdb.sql" || b == "spark.sql" {
			continue
		}
		qs["sql/"+filepath.Base(f)] = readSQL(t, "sql/"+filepath.Base(f))
	}
	docs, err := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	require.NoError(t, err)
	for _, d := range docs {
		b, err := os.ReadFile(d)
		require.NoError(t, err)
		for i, m := range sqlBlock.FindAllStringSubmatch(string(b), -1) {
			qs["docs/"+filepath.Base(d)+" block "+string(rune('1'+i))] = m[1]
		}
	}
	return qs
}

// TestQueriesRun: every query of sql/ and every ```sql block of docs/
// runs without error on the exports of testdata/ after sql/duckdb.sql,
// and the files of sql/ and blocks of docs/ that read the tables read
// them through the views (no read_parquet of their own: the fleet's
// layout is the prelude's business).
func TestQueriesRun(t *testing.T) {
	root, _ := fleetOfTestdata(t)
	conn := openFleet(t, root)
	qs := queryFiles(t)
	require.Contains(t, qs, "sql/flow_totals.sql")
	for name, q := range qs {
		t.Run(name, func(t *testing.T) {
			assert.NotContains(t, strings.ToLower(q), "read_parquet", "reads the views")
			assert.NotRegexp(t, `(?i)\b0x[0-9a-f]`, stripComments(q), "0x literals: Spark and DuckDB read them differently")
			res, err := query(t, conn, q)
			require.NoError(t, err)
			assert.NotEmpty(t, res.cols)
		})
	}
}

// stripComments is q without its -- comments and string literals.
func stripComments(q string) string {
	q = regexp.MustCompile(`--[^\n]*`).ReplaceAllString(q, "")
	return regexp.MustCompile(`'[^']*'`).ReplaceAllString(q, "''")
}

// sparkView is a view of sql/spark.sql: its name and its select list.
var sparkView = regexp.MustCompile(`(?s)CREATE OR REPLACE TEMPORARY VIEW (\w+) AS\s+SELECT (.*?)\nFROM `)

// TestSparkViewsMatchDuckDB: sql/spark.sql, which cannot run here,
// creates the views of sql/duckdb.sql with the same columns in the same
// order: each select item's name (its alias, or the column) against
// DuckDB's DESCRIBE of the view.
func TestSparkViewsMatchDuckDB(t *testing.T) {
	root, _ := fleetOfTestdata(t)
	conn := openFleet(t, root)
	spark := stripComments(readSQL(t, "sql/spark.sql"))
	views := sparkView.FindAllStringSubmatch(spark, -1)
	var names []string
	for _, v := range views {
		names = append(names, v[1])
	}
	require.Equal(t, []string{"packets", "flows", "connections", "findings", "pause",
		"collectives", "collective_links", "collective_arrivals"}, names)
	for _, v := range views {
		t.Run(v[1], func(t *testing.T) {
			var cols []string
			for _, item := range splitTop(v[2]) {
				f := strings.Fields(item)
				cols = append(cols, strings.Trim(f[len(f)-1], "`")) // "expr AS name" or "name", quoted or not
			}
			res, err := query(t, conn, "DESCRIBE "+v[1])
			require.NoError(t, err)
			var want []string
			for i := range res.rows {
				want = append(want, res.row(i)["column_name"])
			}
			assert.Equal(t, want, cols)
		})
	}
}

// splitTop splits a select list at the commas outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i, c := range s {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(out, strings.TrimSpace(s[start:]))
}
