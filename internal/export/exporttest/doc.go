// Package exporttest reads the Parquet tables of internal/export back
// with Apache Arrow's reader (not the library that wrote them), and says
// what docs/parquet.md promises of a packet's row: the oracle of the
// export's tests and of its fuzz target. It is imported by tests only.
package exporttest
