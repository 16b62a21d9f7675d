-- sql/flow_totals.sql: one row per capture and flow, the figures of that
-- capture's JSON report (flows[]): packets and bytes, loss (missing PSNs,
-- and the resends by cause: a NAK or a timeout is a loss the NIC
-- recovered), responses and congestion. Runs after sql/duckdb.sql or
-- sql/spark.sql.
SELECT capture, src, dst, dest_qp, transport,
       packets, wire_bytes, payload_bytes, first_ns, last_ns,
       request_packets, missing, missing_not_captured, missing_lost,
       retransmitted, retransmit_causes_nak, retransmit_causes_rnr,
       retransmit_causes_timeout, duplicates, out_of_order,
       response_packets, acks, naks, rnr_naks,
       ecn_ce, fecn, becn, cnps, icrc_bad
FROM flows
ORDER BY capture, src, dst, dest_qp;
