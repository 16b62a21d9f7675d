-- sql/points_links.sql: what happened to each flow between two capture
-- points, as the in-process capture points analysis reports it (JSON
-- points.links), from the packets tables of one export per point. One
-- row per flow and pair of captures that both saw it, from the upstream
-- capture to the downstream one (where neither the TTL nor the delays
-- tell which is upstream, from the first capture by name to the other):
--   matched             transmissions seen at both (corrupted ones too)
--   corrupted           good ICRC at from_capture, bad at to_capture
--   missing_downstream  seen at from_capture, never at to_capture: lost
--                       between the points or missed by to_capture's
--                       capture (the analysis' lost + not_captured)
--   upstream            from_capture is before to_capture on the flow's
--                       path: the packets' TTL (hop limit) is higher
--                       there; with the same TTL (no router between, RoCE
--                       v1), the flow's packets take longer from
--                       from_capture to to_capture (on their raw clocks)
--                       than those of the flows the other way between the
--                       same hosts, whose delay counts negative there
--                       (to − from = delay + offset one way, offset −
--                       delay the other); null when neither tells
--   delay_*_ns          one-way delay from_capture → to_capture on one
--                       clock: to's time − from's − clock_offset_ns
--   clock_offset_ns     how far to_capture's clock runs ahead of
--                       from_capture's, estimated as NTP does from the
--                       smallest delay each way over all the flows
--                       between them: (min(to − from) − min(from − to)) / 2;
--                       null without traffic both ways
-- A transmission is the key of the analysis: flow, PSN, opcode, IPv4 ID
-- (or flow label), IB payload length, and the ICRC where both captured
-- it. Copies of one key (a resend with the same bytes) pair from the
-- last: a copy lost on the way is an earlier one, which its resend
-- followed (the analysis pairs them by the flow's delay instead).
-- The analysis reports only pairs next to each other on the path; the
-- rows of those pairs carry its counts.
WITH tx AS (
  SELECT capture, src, dst, dest_qp, psn, opcode,
         coalesce(ip_id, -1) AS ip_id, coalesce(payload_len, -1) AS payload_len,
         icrc_value, icrc, ttl, time_ns,
         row_number() OVER (
           PARTITION BY capture, src, dst, dest_qp, psn, opcode, ip_id, payload_len
           ORDER BY time_ns DESC, frame DESC) AS copy
  FROM packets
  WHERE dest_qp IS NOT NULL AND error IS NULL
),
flow_pairs AS (
  SELECT DISTINCT a.capture AS from_capture, b.capture AS to_capture, a.src, a.dst, a.dest_qp
  FROM (SELECT DISTINCT capture, src, dst, dest_qp FROM tx) AS a
  JOIN (SELECT DISTINCT capture, src, dst, dest_qp FROM tx) AS b
    ON a.src = b.src AND a.dst = b.dst AND a.dest_qp = b.dest_qp AND a.capture <> b.capture
),
sightings AS (
  SELECT a.capture AS from_capture, b.capture AS to_capture,
         a.src, a.dst, a.dest_qp,
         a.ttl AS from_ttl, b.ttl AS to_ttl,
         a.icrc AS from_icrc, b.icrc AS to_icrc,
         a.time_ns AS from_ns, b.time_ns AS to_ns
  FROM tx AS a
  JOIN tx AS b
    ON a.src = b.src AND a.dst = b.dst AND a.dest_qp = b.dest_qp
   AND a.psn = b.psn AND a.opcode = b.opcode AND a.ip_id = b.ip_id
   AND a.payload_len = b.payload_len AND a.copy = b.copy
   AND a.capture <> b.capture
   AND (a.icrc_value IS NULL OR b.icrc_value IS NULL OR a.icrc_value = b.icrc_value)
),
sent AS (
  SELECT capture, src, dst, dest_qp, count(*) AS transmissions
  FROM tx
  GROUP BY capture, src, dst, dest_qp
),
by_flow AS (
  SELECT from_capture, to_capture, src, dst, dest_qp,
         count(*) AS matched,
         sum(CASE WHEN from_icrc = 'ok' AND to_icrc = 'bad' THEN 1 ELSE 0 END) AS corrupted,
         CASE WHEN max(from_ttl) > max(to_ttl) THEN TRUE
              WHEN max(from_ttl) < max(to_ttl) THEN FALSE END AS ttl_upstream,
         min(to_ns - from_ns) AS min_raw_ns,
         avg(to_ns - from_ns) AS avg_raw_ns,
         max(to_ns - from_ns) AS max_raw_ns
  FROM sightings
  GROUP BY from_capture, to_capture, src, dst, dest_qp
),
by_direction AS (
  SELECT from_capture, to_capture, src, dst, avg(avg_raw_ns) AS raw_ns
  FROM by_flow
  GROUP BY from_capture, to_capture, src, dst
),
matched AS (
  SELECT f.*,
         coalesce(f.ttl_upstream,
                  CASE WHEN d.raw_ns > r.raw_ns THEN TRUE
                       WHEN d.raw_ns < r.raw_ns THEN FALSE END) AS upstream
  FROM by_flow AS f
  JOIN by_direction AS d
    ON d.from_capture = f.from_capture AND d.to_capture = f.to_capture
   AND d.src = f.src AND d.dst = f.dst
  LEFT JOIN by_direction AS r
    ON r.from_capture = f.from_capture AND r.to_capture = f.to_capture
   AND r.src = f.dst AND r.dst = f.src
),
clocks AS (
  SELECT f.from_capture, f.to_capture,
         (min(f.min_raw_ns) - min(r.min_raw_ns)) / 2 AS clock_offset_ns
  FROM matched AS f
  JOIN matched AS r
    ON r.from_capture = f.to_capture AND r.to_capture = f.from_capture
  WHERE f.upstream AND r.upstream
  GROUP BY f.from_capture, f.to_capture
)
SELECT p.src, p.dst, p.dest_qp, p.from_capture, p.to_capture,
       s.transmissions,
       coalesce(m.matched, 0) AS matched,
       coalesce(m.corrupted, 0) AS corrupted,
       s.transmissions - coalesce(m.matched, 0) AS missing_downstream,
       m.upstream,
       c.clock_offset_ns,
       m.min_raw_ns - c.clock_offset_ns AS delay_min_ns,
       m.avg_raw_ns - c.clock_offset_ns AS delay_avg_ns,
       m.max_raw_ns - c.clock_offset_ns AS delay_max_ns
FROM flow_pairs AS p
JOIN sent AS s
  ON s.capture = p.from_capture AND s.src = p.src AND s.dst = p.dst AND s.dest_qp = p.dest_qp
LEFT JOIN matched AS m
  ON m.from_capture = p.from_capture AND m.to_capture = p.to_capture
 AND m.src = p.src AND m.dst = p.dst AND m.dest_qp = p.dest_qp
LEFT JOIN clocks AS c
  ON c.from_capture = p.from_capture AND c.to_capture = p.to_capture
WHERE coalesce(m.upstream, p.from_capture < p.to_capture)
ORDER BY p.src, p.dst, p.dest_qp, p.from_capture, p.to_capture;
