-- sql/top_talkers.sql: the flows that carried the most bytes across all
-- captures, with their throughput (the JSON report's throughput_bps:
-- payload bits per second between the flow's first and last packet). A
-- flow seen by several captures (the two ends of a link) has a row each.
SELECT capture, src, dst, dest_qp, transport, packets, payload_bytes,
       wire_bytes, throughput_bps, first_time, last_time
FROM flows
ORDER BY payload_bytes DESC, packets DESC, capture, src, dst, dest_qp
LIMIT 20;
