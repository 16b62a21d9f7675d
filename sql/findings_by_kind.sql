-- sql/findings_by_kind.sql: the findings of every capture by kind and
-- severity, with the first and last time each was seen and one example
-- frame (the earliest) to open in Wireshark.
SELECT capture, kind, severity, count(*) AS findings,
       min(time) AS first_time, max(time) AS last_time,
       min(frame) AS first_frame
FROM findings
GROUP BY capture, kind, severity
ORDER BY capture, findings DESC, kind, severity;
