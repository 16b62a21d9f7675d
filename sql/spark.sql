-- sql/spark.sql: the views of sql/duckdb.sql for Spark SQL (3.4 or later),
-- with the same names and columns, so that the queries of sql/ run on
-- either engine:
--   cd ROOT && spark-sql -f /path/to/sql/spark.sql -f /path/to/sql/points_links.sql
-- ROOT holds one export folder per capture (hostA/, hostB/ …); the
-- relative paths below are read from the working directory on a local
-- file system (on HDFS or S3, write ROOT's URI before each '*/').
--
-- NOT RUN HERE: Spark is not installable on this project's machines, so
-- this file was never run. It keeps to what Spark documents: parquet
-- data sources with mergeSchema, input_file_name(), regexp_extract,
-- timestamp_micros, the `div` operator and the two settings below. The
-- tests check only that each view lists the same columns, in the same
-- order, as DuckDB's (sql/sqltest).
--
-- Spark reads no nanosecond timestamps: nanosAsLong reads them as BIGINT
-- nanoseconds, kept as time_ns, first_ns and last_ns (as in DuckDB's
-- views); time, first_time and last_time are those in microseconds.
-- Unsigned columns read as wider signed ones (UINT64 as DECIMAL(20,0)).

SET spark.sql.legacy.parquet.nanosAsLong = true;
SET spark.sql.session.timeZone = UTC;

CREATE OR REPLACE TEMPORARY VIEW packets_parquet
USING parquet OPTIONS (path '*/packets-*.parquet', mergeSchema 'true');
CREATE OR REPLACE TEMPORARY VIEW flows_parquet
USING parquet OPTIONS (path '*/flows.parquet', mergeSchema 'true');
CREATE OR REPLACE TEMPORARY VIEW connections_parquet
USING parquet OPTIONS (path '*/connections.parquet', mergeSchema 'true');
CREATE OR REPLACE TEMPORARY VIEW findings_parquet
USING parquet OPTIONS (path '*/findings.parquet', mergeSchema 'true');
CREATE OR REPLACE TEMPORARY VIEW pause_parquet
USING parquet OPTIONS (path '*/pause.parquet', mergeSchema 'true');
CREATE OR REPLACE TEMPORARY VIEW collectives_parquet
USING parquet OPTIONS (path '*/collectives.parquet', mergeSchema 'true');
CREATE OR REPLACE TEMPORARY VIEW collective_links_parquet
USING parquet OPTIONS (path '*/collective_links.parquet', mergeSchema 'true');
CREATE OR REPLACE TEMPORARY VIEW collective_arrivals_parquet
USING parquet OPTIONS (path '*/collective_arrivals.parquet', mergeSchema 'true');

CREATE OR REPLACE TEMPORARY VIEW packets AS
SELECT regexp_extract(input_file_name(), '([^/]+)/[^/]+$', 1) AS capture,
       file, frame, timestamp_micros(time div 1000) AS time, encap, src, dst,
       vlan, ecn, length, cap_length, dest_qp, opcode, opcode_name, psn,
       ack_req, se, fecn, becn, pkey, payload_len, aeth_type, aeth_msn,
       reth_dma_length, icrc, icrc_port_rewritten, truncated, findings,
       error, encapsulation, mirror_src, mirror_session, tunnel_id,
       tunnel_id_name, priority, icrc_value, ip_id, ttl,
       icrc_original_src_port,
       time AS time_ns
FROM packets_parquet;

CREATE OR REPLACE TEMPORARY VIEW flows AS
SELECT regexp_extract(input_file_name(), '([^/]+)/[^/]+$', 1) AS capture,
       capture AS inputs,
       src, dst, dest_qp, transport, connection, packets, wire_bytes,
       payload_bytes, timestamp_micros(first_time div 1000) AS first_time,
       timestamp_micros(last_time div 1000) AS last_time, request_packets,
       psn_first, psn_last, missing, missing_not_captured, missing_lost,
       gaps, retransmitted, retransmit_causes_nak, retransmit_causes_rnr,
       retransmit_causes_timeout, duplicates, out_of_order,
       response_packets, acks, naks, rnr_naks, read_responses, atomic_acks,
       rtt_samples, rtt_min_ns, rtt_median_ns, rtt_max_ns, messages,
       message_bytes, incomplete_messages, mtu_inferred, mtu_negotiated,
       ecn_ce, fecn, becn, cnps, icrc_ok, icrc_bad, icrc_unverifiable,
       throughput_bps, priority, paused_ns, icrc_port_rewritten,
       tunnel_kind, tunnel_id, tunnel_id_name,
       ops_send, ops_write, ops_write_imm, ops_read_request, ops_read_response,
       ops_atomic, ops_atomic_ack, ops_ack, ops_cnp, ops_other,
       message_size_buckets, active_ns, active_throughput_bps,
       first_time AS first_ns, last_time AS last_ns
FROM flows_parquet;

CREATE OR REPLACE TEMPORARY VIEW connections AS
SELECT regexp_extract(input_file_name(), '([^/]+)/[^/]+$', 1) AS capture,
       capture AS inputs,
       id, state, transport, service_id, requester_ip, requester_qpn,
       requester_send_psn, responder_ip, responder_qpn, responder_send_psn,
       path_mtu, reject_reason, req_frame, rep_frame, dreq_frame,
       local_comm_id, remote_comm_id, req_file, rep_file, dreq_file
FROM connections_parquet;

CREATE OR REPLACE TEMPORARY VIEW findings AS
SELECT regexp_extract(input_file_name(), '([^/]+)/[^/]+$', 1) AS capture,
       capture AS inputs,
       file, frame, timestamp_micros(time div 1000) AS time, kind, severity,
       flow, detail, connection,
       time AS time_ns
FROM findings_parquet;

CREATE OR REPLACE TEMPORARY VIEW pause AS
SELECT regexp_extract(input_file_name(), '([^/]+)/[^/]+$', 1) AS capture,
       capture AS inputs,
       src_mac, kind, priority, frames, xoff_frames, xon_frames, quanta,
       paused_ns, longest_pause_ns, link_speed_bps
FROM pause_parquet;

CREATE OR REPLACE TEMPORARY VIEW collectives AS
SELECT regexp_extract(input_file_name(), '([^/]+)/[^/]+$', 1) AS capture,
       capture AS inputs,
       index, kind, algorithm, protocol, size_bytes,
       timestamp_micros(start div 1000) AS start,
       timestamp_micros(`end` div 1000) AS `end`,
       duration_ns, busy_ns, algbw_bps, busbw_bps,
       straggler_rank, straggler_kind, straggler_late_ns,
       straggler_receiver_rank, straggler_why,
       start AS start_ns, `end` AS end_ns
FROM collectives_parquet;

CREATE OR REPLACE TEMPORARY VIEW collective_links AS
SELECT regexp_extract(input_file_name(), '([^/]+)/[^/]+$', 1) AS capture,
       capture AS inputs,
       index, sender_rank, receiver_rank, bytes, messages, steps
FROM collective_links_parquet;

CREATE OR REPLACE TEMPORARY VIEW collective_arrivals AS
SELECT regexp_extract(input_file_name(), '([^/]+)/[^/]+$', 1) AS capture,
       capture AS inputs,
       index, rank,
       timestamp_micros(first_cts div 1000) AS first_cts,
       timestamp_micros(first_data div 1000) AS first_data,
       late_ns,
       first_cts AS first_cts_ns, first_data AS first_data_ns
FROM collective_arrivals_parquet;
