// Package sqltest runs the project's SQL (sql/*.sql and the ```sql
// blocks of docs/*.md) on DuckDB over Parquet exports of testdata/ and of
// generated capture points, and compares the answers with the JSON
// reports of the same captures and the in-process capture points
// analysis.
//
// It is a module of its own (sql/sqltest/go.mod) so that DuckDB, which
// needs cgo and a C++ library, is a dependency of these tests only: the
// roce-dissect module stays pure Go. Run it from this folder with
// `go test ./...` (README's test command does).
package sqltest
