-- scripts/demo-metrics.sql -- queries over the time series that scripts/demo.sh loads into
-- the foreign table metrics: 4 metrics x 50 hosts, one sample a minute from 2024-05-01 00:00 UTC.
-- Row key <metric>/<host>/<hour> (the OpenTSDB design), one column per minute in family m.

\set ON_ERROR_STOP 1
\set QUIET on
\pset pager off
SET TimeZone = 'UTC';
\timing on
\set QUIET off
\set ECHO queries

\echo
\echo '== 16. How many cells (a full scan of the store)'
SELECT count(*) AS cells, count(DISTINCT rowkey) AS rows FROM metrics;

\echo
\echo '== 17. One row: the CPU of host007 from 13:00 to 14:00 (a point read, 60 cells)'
SELECT qualifier AS minute, value FROM metrics
 WHERE rowkey = 'cpu/host007/2024-05-01T13' AND qualifier < '05';

\echo
\echo '== 18. One series for the whole day: hourly CPU of host007 (a prefix scan over 25 rows)'
SELECT split_part(rowkey, '/', 3) AS hour, round(avg(value)::numeric, 1) AS avg_cpu,
       max(value) AS max_cpu, count(*) AS samples
  FROM metrics WHERE rowkey LIKE 'cpu/host007/%'
 GROUP BY 1 ORDER BY 1 LIMIT 6;

\echo
\echo '== 19. A time range over all hosts: the 10 minutes from 12:00, CPU only (prefix + time range)'
SELECT count(*) AS samples, round(avg(value)::numeric, 1) AS avg_cpu, max(value) AS max_cpu
  FROM metrics
 WHERE rowkey LIKE 'cpu/%'
   AND ts >= 1714564800000      -- 2024-05-01 12:00 UTC in ms
   AND ts <  1714565400000;     -- 12:10

\echo
\echo '== 20. The five busiest hosts by their last CPU sample (the latest cell of every cpu row)'
SELECT split_part(rowkey, '/', 2) AS host, value AS last_cpu, to_timestamp(ts / 1000) AS at
  FROM (SELECT DISTINCT ON (split_part(rowkey, '/', 2)) rowkey, ts, value
          FROM metrics WHERE rowkey LIKE 'cpu/%'
         ORDER BY split_part(rowkey, '/', 2), ts DESC) last
 ORDER BY value DESC LIMIT 5;

\echo
\echo '== 21. What the engine did for a time-range read: files skipped by their time range'
SELECT widecol_flush('metrics');
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF)
SELECT count(*) FROM metrics WHERE ts >= 1714604400000;     -- from 23:00

\echo
\echo '== 22. A major compaction, then the store''s files: cells, bytes on disk and before compression'
SELECT widecol_compact('metrics');
SELECT file, family, level, cells, bytes_on_disk, bytes_raw,
       convert_from(min_rowkey, 'UTF8') AS min_rowkey, convert_from(max_rowkey, 'UTF8') AS max_rowkey,
       to_timestamp(min_ts / 1000) AS min_ts, to_timestamp(max_ts / 1000) AS max_ts
  FROM widecol_stats('metrics');

\echo
\echo '== 23. The same cells in an ordinary PostgreSQL table, for comparison'
CREATE TABLE metrics_heap AS SELECT * FROM metrics;
SELECT pg_size_pretty(pg_total_relation_size('metrics_heap')) AS ordinary_table,
       (SELECT pg_size_pretty(sum(bytes_on_disk)) FROM widecol_stats('metrics')) AS widecol_store;
