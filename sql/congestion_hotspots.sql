-- sql/congestion_hotspots.sql: congestion by host pair and capture:
-- ECN CE marks and FECN/BECN on the pair's packets, and the CNPs the
-- pair exchanged (a CNP flows from the receiver that saw the marks back
-- to the sender), both directions together; the pairs with the most
-- marks and CNPs first. PFC pauses are in the pause view.
SELECT capture,
       least(src, dst) AS host_a, greatest(src, dst) AS host_b,
       count(*) AS flows,
       sum(packets) AS packets,
       sum(ecn_ce) AS ecn_ce,
       sum(cnps) AS cnps,
       sum(fecn) AS fecn,
       sum(becn) AS becn,
       sum(ecn_ce) / sum(packets) AS ecn_ce_share
FROM flows
GROUP BY capture, least(src, dst), greatest(src, dst)
HAVING sum(ecn_ce) + sum(cnps) + sum(fecn) + sum(becn) > 0
ORDER BY sum(ecn_ce) + sum(cnps) DESC, capture, host_a, host_b;
