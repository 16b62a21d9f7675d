-- sql/slow_collectives.sql: which NCCL collectives were slow, and which
-- rank was late, over a fleet of per-host exports (each host's capture
-- exported alone). Runs after sql/duckdb.sql or sql/spark.sql.
--
-- Each host sees only its own links, so each export holds a partial view
-- of every collective: the first CTS of its own rank (the receives its
-- host posted), its links' data, no straggler. The rule that joins them:
-- - a collective is the same in every export when it has the same index
--   (each export numbers its collectives in time order from 1, and every
--   rank of a ring or tree takes part in each one, so each host sees
--   each collective: the captures must cover the same span of the job);
-- - its start is the earliest start of any export, its end the latest
--   end, and each rank's arrival its earliest first CTS in any export;
-- - the late rank is the rank whose first CTS came last, late_ns how
--   long after the earliest rank's, and busy_ns from that first CTS to
--   the end (as the JSON's busy_ns);
-- - the collective was slow, held up by that rank's host, when late_ns
--   exceeds busy_ns: the others waited longer for the late rank than
--   the collective then took (the JSON straggler's "host" rule).
-- The times are each host's clock: the rule holds when the hosts' clocks
-- agree to well under late_ns (PTP, or NTP for late ranks of
-- milliseconds); otherwise read the files together as capture points
-- (roce-dissect hostA.pcap hostB.pcap …), which puts them on one clock.
WITH spans AS (
  SELECT index, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
         count(DISTINCT capture) AS exports
  FROM collectives
  GROUP BY index
), ranks AS (
  SELECT index, rank, min(first_cts_ns) AS first_cts_ns
  FROM collective_arrivals
  WHERE first_cts_ns IS NOT NULL
  GROUP BY index, rank
), ordered AS (
  SELECT index, rank, first_cts_ns,
         min(first_cts_ns) OVER (PARTITION BY index) AS earliest_ns,
         row_number() OVER (PARTITION BY index ORDER BY first_cts_ns DESC, rank) AS n,
         count(*) OVER (PARTITION BY index) AS ranks
  FROM ranks
)
SELECT s.index, s.start_ns, s.end_ns - s.start_ns AS duration_ns,
       s.end_ns - o.first_cts_ns AS busy_ns,
       o.rank AS late_rank, o.first_cts_ns - o.earliest_ns AS late_ns,
       o.ranks, s.exports
FROM spans AS s
JOIN ordered AS o ON o.index = s.index AND o.n = 1
WHERE o.first_cts_ns - o.earliest_ns > s.end_ns - o.first_cts_ns
ORDER BY s.index;
