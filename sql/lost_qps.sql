-- sql/lost_qps.sql: which QPs lost packets in the network, recovered or
-- not, across all captures, in a time window (edit the two timestamps,
-- UTC). A flow lost packets when the capture missed PSNs that the
-- responder NAKed or the requester resent (missing_lost), or when the
-- requester resent after a NAK or a timeout although the capture saw the
-- packet (the loss was behind the capture point). One row per capture
-- and requester flow; naks_back are the responder's NAKs on the flow
-- back (found through the CM connection both flows belong to: 0 for a
-- flow whose connection the capture did not see set up).
SELECT f.capture, f.src, f.dst, f.dest_qp,
       f.missing_lost,
       f.retransmit_causes_nak + f.retransmit_causes_timeout AS recovered_resends,
       f.retransmitted,
       f.missing - f.missing_not_captured AS missing_not_explained_by_capture,
       coalesce(sum(r.naks), 0) AS naks_back,
       f.first_time, f.last_time
FROM flows AS f
LEFT JOIN flows AS r
  ON r.capture = f.capture AND r.src = f.dst AND r.dst = f.src
 AND r.connection = f.connection
WHERE f.first_time < TIMESTAMP '2100-01-01 00:00:00'
  AND f.last_time >= TIMESTAMP '2000-01-01 00:00:00'
  AND (f.missing_lost > 0
       OR f.retransmit_causes_nak > 0
       OR f.retransmit_causes_timeout > 0)
GROUP BY f.capture, f.src, f.dst, f.dest_qp, f.missing_lost,
         f.retransmit_causes_nak, f.retransmit_causes_timeout,
         f.retransmitted, f.missing, f.missing_not_captured,
         f.first_time, f.last_time
ORDER BY f.missing_lost + f.retransmit_causes_nak + f.retransmit_causes_timeout DESC,
         f.capture, f.src, f.dst, f.dest_qp;
