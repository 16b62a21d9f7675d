-- sql/duckdb.sql: the views the queries of sql/ and docs/parquet.md run
-- on, over the Parquet exports of a fleet, for DuckDB (1.1 or later).
--
-- Run it in the directory that holds one export folder per capture
-- (roce-dissect --export ROOT/hostA …, --export ROOT/hostB …):
--   cd ROOT && duckdb -f /path/to/sql/duckdb.sql -f /path/to/sql/flow_totals.sql
-- Every view has a `capture` column: the name of the export folder the
-- row came from (hostA, hostB …). The tables' own `capture` column (the
-- run's input file names, space-separated) is the views' `inputs`.
-- Every timestamp column has a twin of nanoseconds since 1970 as BIGINT
-- (time_ns, first_ns, last_ns): Spark reads no nanosecond timestamps, so
-- the queries compute with these.
--
-- sql/spark.sql creates the same views, with the same columns, for
-- Spark SQL; the queries use only what both engines accept.

SET TimeZone = 'UTC';

CREATE OR REPLACE VIEW packets AS
SELECT regexp_extract(filename, '([^/]+)/[^/]+$', 1) AS capture,
       * EXCLUDE (filename),
       epoch_ns(time) AS time_ns
FROM read_parquet('*/packets-*.parquet', filename = true, union_by_name = true);

CREATE OR REPLACE VIEW flows AS
SELECT regexp_extract(filename, '([^/]+)/[^/]+$', 1) AS capture,
       t.capture AS inputs,
       * EXCLUDE (filename, capture),
       epoch_ns(first_time) AS first_ns,
       epoch_ns(last_time) AS last_ns
FROM read_parquet('*/flows.parquet', filename = true, union_by_name = true) AS t;

CREATE OR REPLACE VIEW connections AS
SELECT regexp_extract(filename, '([^/]+)/[^/]+$', 1) AS capture,
       t.capture AS inputs,
       * EXCLUDE (filename, capture)
FROM read_parquet('*/connections.parquet', filename = true, union_by_name = true) AS t;

CREATE OR REPLACE VIEW findings AS
SELECT regexp_extract(filename, '([^/]+)/[^/]+$', 1) AS capture,
       t.capture AS inputs,
       * EXCLUDE (filename, capture),
       epoch_ns(time) AS time_ns
FROM read_parquet('*/findings.parquet', filename = true, union_by_name = true) AS t;

CREATE OR REPLACE VIEW pause AS
SELECT regexp_extract(filename, '([^/]+)/[^/]+$', 1) AS capture,
       t.capture AS inputs,
       * EXCLUDE (filename, capture)
FROM read_parquet('*/pause.parquet', filename = true, union_by_name = true) AS t;

-- The NCCL collectives each export saw (collectives.parquet), their links
-- and their ranks' arrivals: each host's export holds its own partial
-- view of every collective (sql/slow_collectives.sql joins them).
CREATE OR REPLACE VIEW collectives AS
SELECT regexp_extract(filename, '([^/]+)/[^/]+$', 1) AS capture,
       t.capture AS inputs,
       * EXCLUDE (filename, capture),
       epoch_ns(t.start) AS start_ns,
       epoch_ns(t."end") AS end_ns
FROM read_parquet('*/collectives.parquet', filename = true, union_by_name = true) AS t;

CREATE OR REPLACE VIEW collective_links AS
SELECT regexp_extract(filename, '([^/]+)/[^/]+$', 1) AS capture,
       t.capture AS inputs,
       * EXCLUDE (filename, capture)
FROM read_parquet('*/collective_links.parquet', filename = true, union_by_name = true) AS t;

CREATE OR REPLACE VIEW collective_arrivals AS
SELECT regexp_extract(filename, '([^/]+)/[^/]+$', 1) AS capture,
       t.capture AS inputs,
       * EXCLUDE (filename, capture),
       epoch_ns(t.first_cts) AS first_cts_ns,
       epoch_ns(t.first_data) AS first_data_ns
FROM read_parquet('*/collective_arrivals.parquet', filename = true, union_by_name = true) AS t;
