--
-- parallel: Gather over a parallel foreign scan; results compared with an
-- ordinary table holding the same rows
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE pt (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'a,b', max_versions '0');
CREATE TABLE ph (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                 ts bigint, value text);

-- rows in sorted files (many blocks: many chunks), then more in the log
INSERT INTO pt SELECT 'k' || lpad(i::text, 6, '0'), 'a', 'q' || (i % 3), 1, repeat('x', i % 100)
  FROM generate_series(1, 30000) i;
INSERT INTO ph SELECT 'k' || lpad(i::text, 6, '0'), 'a', 'q' || (i % 3), 1, repeat('x', i % 100)
  FROM generate_series(1, 30000) i;
SELECT widecol_flush('pt');
INSERT INTO pt SELECT 'k' || lpad(i::text, 6, '0'), 'b', 'z', 2, 'log ' || i
  FROM generate_series(1, 30000, 7) i;
INSERT INTO ph SELECT 'k' || lpad(i::text, 6, '0'), 'b', 'z', 2, 'log ' || i
  FROM generate_series(1, 30000, 7) i;
-- deletes: whole rows, and one family of others
DELETE FROM pt WHERE rowkey LIKE '%13';
DELETE FROM ph WHERE rowkey LIKE '%13';
DELETE FROM pt WHERE family = 'a' AND rowkey LIKE '%5';
DELETE FROM ph WHERE family = 'a' AND rowkey LIKE '%5';
ANALYZE ph;

SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;  -- the workers scan (when they start)

CREATE FUNCTION par_plan(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        RETURN NEXT l;
    END LOOP;
END $$;
SELECT par_plan('SELECT count(*) FROM pt');

-- what the parallel scan returns equals the ordinary table
CREATE VIEW pt_digest AS
  SELECT count(*) AS n, sum(length(value)) AS len, sum(ts) AS ts,
         md5(string_agg(rowkey || family || qualifier || ts || value, ',' ORDER BY rowkey, family, qualifier, ts)) AS md5
    FROM pt;
CREATE VIEW ph_digest AS
  SELECT count(*) AS n, sum(length(value)) AS len, sum(ts) AS ts,
         md5(string_agg(rowkey || family || qualifier || ts || value, ',' ORDER BY rowkey, family, qualifier, ts)) AS md5
    FROM ph;
SELECT (SELECT count(*) FROM par_plan('SELECT * FROM pt_digest') l
         WHERE l LIKE '%Parallel Foreign Scan%') AS parallel_scans;
SELECT * FROM pt_digest;
SELECT (SELECT row(d.*) FROM pt_digest d) = (SELECT row(d.*) FROM ph_digest d) AS same;
SELECT family, count(*), sum(length(value)) FROM pt GROUP BY family ORDER BY family;
SELECT family, count(*), sum(length(value)) FROM ph GROUP BY family ORDER BY family;

-- rowkey conditions: each chunk is intersected with the ranges
SELECT par_plan($$SELECT count(*) FROM pt WHERE rowkey >= 'k010000' AND rowkey < 'k020000'$$);
SELECT (SELECT count(*) FROM pt WHERE rowkey >= 'k010000' AND rowkey < 'k020000') =
       (SELECT count(*) FROM ph WHERE rowkey >= 'k010000' AND rowkey < 'k020000') AS same_range;
SELECT (SELECT sum(length(value)) FROM pt WHERE rowkey > 'k00999' AND rowkey <= 'k029990' AND family = 'a') =
       (SELECT sum(length(value)) FROM ph WHERE rowkey > 'k00999' AND rowkey <= 'k029990' AND family = 'a') AS same_range2;
SELECT (SELECT count(*) FROM pt WHERE rowkey LIKE 'k01%' OR rowkey LIKE 'k027%') =
       (SELECT count(*) FROM ph WHERE rowkey LIKE 'k01%' OR rowkey LIKE 'k027%') AS same_or;
SELECT count(*) FROM pt WHERE rowkey > 'k999999';

-- a rescan of the Gather (a correlated subquery) starts the chunks over
SELECT par_plan($$SELECT x, (SELECT count(*) + x FROM pt WHERE family = 'b') FROM generate_series(1, 3) x$$);
SELECT x, (SELECT count(*) + x FROM pt WHERE family = 'b') FROM generate_series(1, 3) x;

-- the transaction's own pending writes: no parallel plan; the results are right
BEGIN;
INSERT INTO pt VALUES ('k000002', 'b', 'new', 9, 'pending');
DELETE FROM pt WHERE rowkey = 'k000003';
SELECT count(*) FILTER (WHERE l LIKE '%Parallel%') AS parallel_nodes
  FROM par_plan('SELECT count(*) FROM pt') l;
SELECT count(*), sum(length(value)) FROM pt;
ROLLBACK;
-- a plan made before the writes (a prepared statement): the leader scans alone
SET parallel_leader_participation = on;
PREPARE pcount AS SELECT count(*), sum(length(value)) FROM pt;
EXECUTE pcount;
BEGIN;
INSERT INTO pt VALUES ('k000002', 'b', 'new', 9, 'pending');
DELETE FROM pt WHERE rowkey = 'k000003';
SELECT count(*) FILTER (WHERE l LIKE '%Parallel Foreign Scan%') AS parallel_nodes
  FROM par_plan('EXECUTE pcount') l;
EXECUTE pcount;
SET LOCAL parallel_leader_participation = off;
EXECUTE pcount;  -- ERROR: only the leader can read the pending writes
ROLLBACK;
SET parallel_leader_participation = off;
DEALLOCATE pcount;

-- REPEATABLE READ: the workers read under the transaction's snapshot
SELECT dblink_connect('other', 'dbname=' || current_database() || ' port=' || current_setting('port')
                      || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*), sum(length(value)) FROM pt;
SELECT dblink_exec('other', $$INSERT INTO pt SELECT 'z' || i, 'a', 'q', 1, 'later' FROM generate_series(1, 500) i$$);
SELECT dblink_exec('other', $$DELETE FROM pt WHERE rowkey < 'k001000'$$);
SELECT * FROM dblink('other', $$SELECT widecol_flush('pt')$$) AS t(v text);
SELECT count(*), sum(length(value)) FROM pt;  -- as before
SELECT (SELECT row(d.*) FROM pt_digest d) = (SELECT row(d.*) FROM ph_digest d) AS same;
COMMIT;
SELECT count(*) FROM pt WHERE rowkey LIKE 'z%';
SELECT count(*) FROM pt WHERE rowkey < 'k001000';
SELECT dblink_disconnect('other');

-- FOR UPDATE, UPDATE, DELETE: no parallel scan
SELECT count(*) FILTER (WHERE l LIKE '%Parallel%') AS parallel_nodes
  FROM par_plan('SELECT * FROM pt WHERE family = ''b'' FOR UPDATE') l;
SELECT count(*) FILTER (WHERE l LIKE '%Parallel%') AS parallel_nodes
  FROM par_plan('DELETE FROM pt WHERE value = ''x''') l;

-- a wide table: rows assembled per chunk
CREATE FOREIGN TABLE pw (rowkey text COLLATE "C", a text OPTIONS (cell 'a:q1'), b text OPTIONS (cell 'b:z'))
  SERVER wide OPTIONS (store 'pt');
SELECT count(*) FILTER (WHERE l LIKE '%Parallel Foreign Scan%') AS parallel_scans
  FROM par_plan('SELECT count(*) FROM pw') l;
SELECT count(*), count(a), count(b), sum(length(a)) FROM pw;
SET max_parallel_workers_per_gather = 0;
SELECT count(*), count(a), count(b), sum(length(a)) FROM pw;

RESET ALL;
DROP FOREIGN TABLE pw;
DROP VIEW pt_digest;
DROP VIEW ph_digest;
DROP FOREIGN TABLE pt;
DROP TABLE ph;
DROP FUNCTION par_plan(text);
