--
-- remote: a widecol table read and written through postgres_fdw (a loopback
-- server into this database), as a coordinator does with data nodes
-- (doc/CLUSTER.md); every answer against an ordinary table with the same rows
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE EXTENSION IF NOT EXISTS postgres_fdw;
RESET client_min_messages;

DO $d$ BEGIN
    EXECUTE format('CREATE SERVER loopback FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host %L, port %L, dbname %L)',
                   split_part(current_setting('unix_socket_directories'), ',', 1),
                   current_setting('port'), current_database());
END $d$;
CREATE USER MAPPING FOR CURRENT_USER SERVER loopback;

CREATE FOREIGN TABLE inbox (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text)
SERVER wide OPTIONS (families 'm,a', max_versions '0');
CREATE TABLE inbox_h (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text);
-- the coordinator's view of it; columns in the default collation, so that
-- postgres_fdw can ship "rowkey = outer.column" as a parameter
CREATE FOREIGN TABLE r_inbox (rowkey text, family text, qualifier text, ts bigint, value text)
SERVER loopback OPTIONS (table_name 'inbox');

-- <user>-<reversed date>-<message>: one user's mail is one prefix
INSERT INTO r_inbox
SELECT format('%s-%s-%s', 10000 + u, 99999999 - d, m), f, q, d * 10 + m, md5(u || '/' || d || '/' || m || f || q)
  FROM generate_series(1, 40) u, generate_series(20240101, 20240105) d, generate_series(1, 3) m,
       (VALUES ('m', 'subject'), ('m', 'body'), ('a', 'file')) v(f, q)
 WHERE (u + d + m) % 4 <> 0 OR f = 'm';
INSERT INTO inbox_h SELECT * FROM inbox;
SELECT count(*) AS cells, count(DISTINCT rowkey) AS rows FROM inbox;

-- wc_same(Q): the rows of Q through postgres_fdw ({t} = r_inbox) and on the ordinary
-- table ({t} = inbox_h) are the same multiset; returns "N rows, same" or what differs
CREATE FUNCTION wc_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a bigint; b bigint; n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM (%s) x', replace(q, '{t}', 'r_inbox')) INTO n;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x',
                   replace(q, '{t}', 'r_inbox'), replace(q, '{t}', 'inbox_h')) INTO a;
    EXECUTE format('SELECT count(*) FROM ((%s) EXCEPT ALL (%s)) x',
                   replace(q, '{t}', 'inbox_h'), replace(q, '{t}', 'r_inbox')) INTO b;
    IF a = 0 AND b = 0 THEN RETURN n || ' rows, same'; END IF;
    RETURN format('%s rows only through postgres_fdw, %s only in the ordinary table', a, b);
END $$;
-- the Remote SQL lines of Q's plan
CREATE FUNCTION wc_remote_sql(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
        IF l ~ 'Remote SQL|Foreign|Relations' THEN RETURN NEXT btrim(l); END IF;
    END LOOP;
END $$;

-- reads: every condition is shipped, and the data node pushes it into the store
SELECT wc_same($$SELECT * FROM {t} WHERE rowkey = '10007-79759895-2'$$);
SELECT wc_same($$SELECT * FROM {t} WHERE rowkey >= '10010' AND rowkey < '10020' AND family = 'm'$$);
SELECT wc_same($$SELECT * FROM {t} WHERE rowkey LIKE '10012-%'$$);
SELECT wc_same($$SELECT * FROM {t} WHERE rowkey ^@ '10013-' AND ts BETWEEN 202401020 AND 202401039$$);
SELECT wc_same($$SELECT rowkey, count(*), sum(ts), max(value) FROM {t} GROUP BY rowkey$$);
SELECT wc_remote_sql($$SELECT * FROM r_inbox WHERE rowkey ^@ '10013-' AND family = 'a'$$);
SELECT wc_remote_sql($$SELECT count(*), sum(ts) FROM r_inbox WHERE rowkey >= '10010'$$);
SELECT wc_remote_sql($$SELECT * FROM r_inbox ORDER BY rowkey LIMIT 5$$);
SELECT (SELECT array_agg(rowkey) FROM (SELECT rowkey FROM r_inbox ORDER BY rowkey COLLATE "C", family, qualifier, ts LIMIT 7) x) =
       (SELECT array_agg(rowkey) FROM (SELECT rowkey FROM inbox_h ORDER BY rowkey COLLATE "C", family, qualifier, ts LIMIT 7) x) AS same_first_rows;

-- what the data node makes of the Remote SQL postgres_fdw sends: a
-- parameter on either side is a point read, ORDER BY rowkey ASC NULLS LAST
-- is the store's order (no Sort)
EXPLAIN (COSTS OFF) SELECT rowkey, qualifier, value FROM inbox WHERE ((SELECT NULL::text)::text) = rowkey;
EXPLAIN (COSTS OFF) SELECT rowkey, family, qualifier, ts, value FROM inbox ORDER BY rowkey ASC NULLS LAST;
EXPLAIN (COSTS OFF) SELECT rowkey, family, qualifier, ts, value FROM inbox WHERE ((rowkey ~~ '10012-%')) AND ((family = 'm')) ORDER BY rowkey ASC NULLS LAST;

-- the estimate of a point read whose key is not a constant: the EXPLAIN that
-- use_remote_estimate sends for a parameterized remote scan, and a generic plan
CREATE FUNCTION wc_rows(q text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    EXECUTE 'EXPLAIN ' || q INTO l;
    RETURN substring(l from 'rows=(\d+)')::float8;
END $$;
ANALYZE inbox;
SELECT wc_rows($$SELECT * FROM inbox WHERE rowkey = ((SELECT NULL::text)::text)$$) =
       wc_rows($$SELECT * FROM inbox WHERE rowkey = '10007-79759895-2'$$) AS param_as_point,
       wc_rows($$SELECT * FROM inbox WHERE rowkey = '10007-79759895-2'$$) < 10 AS point_is_few;
PREPARE get(text) AS SELECT * FROM inbox WHERE $1 = rowkey;
SET plan_cache_mode = force_generic_plan;
SELECT wc_rows($$EXECUTE get('x')$$) = wc_rows($$SELECT * FROM inbox WHERE rowkey = 'x'$$) AS generic_as_point;
RESET plan_cache_mode;
DEALLOCATE get;

-- a join with a local table: with use_remote_estimate, a nested loop of
-- parameterized remote point reads (a loopback connection costs nothing: a
-- low fdw_startup_cost makes this small table's plan that of a large one)
CREATE TABLE wanted (k text);
INSERT INTO wanted VALUES ('10003-79759898-1'), ('10021-79759896-3'), ('nobody'), ('10003-79759898-1');
ANALYZE wanted;
ALTER SERVER loopback OPTIONS (ADD use_remote_estimate 'true', ADD fdw_startup_cost '1');
SELECT wc_remote_sql($$SELECT w.k, i.qualifier, i.value FROM wanted w JOIN r_inbox i ON i.rowkey = w.k$$);
SELECT wc_same($$SELECT w.k, i.qualifier, i.value FROM wanted w JOIN {t} i ON i.rowkey = w.k$$);
ALTER SERVER loopback OPTIONS (DROP use_remote_estimate, DROP fdw_startup_cost);

-- writes: UPDATE and DELETE whose conditions are all shipped run on the data
-- node whole ("Foreign Update", "Foreign Delete")
SELECT wc_remote_sql($$UPDATE r_inbox SET value = 'read' WHERE rowkey ^@ '10005-' AND qualifier = 'subject'$$);
UPDATE r_inbox SET value = 'read' WHERE rowkey ^@ '10005-' AND qualifier = 'subject';
UPDATE inbox_h SET value = 'read' WHERE rowkey ^@ '10005-' AND qualifier = 'subject';
DELETE FROM r_inbox WHERE rowkey >= '10030' AND family = 'a';
DELETE FROM inbox_h WHERE rowkey >= '10030' AND family = 'a';
SELECT wc_same($$SELECT * FROM {t}$$);

-- one that is not (random() is not shipped) would fetch ctid and delete
-- "WHERE ctid = $1": a widecol table has no ctid, so it is an ERROR, and
-- nothing is deleted
\set VERBOSITY terse
SELECT wc_remote_sql($$DELETE FROM r_inbox WHERE rowkey = '10001-79759899-1' AND random() >= 0$$);
DELETE FROM r_inbox WHERE rowkey = '10001-79759899-1' AND random() >= 0;  -- ERROR
UPDATE r_inbox SET value = 'x' WHERE rowkey = '10001-79759899-1' AND random() >= 0;  -- ERROR
SELECT ctid, * FROM inbox LIMIT 1;  -- ERROR
-- planning it is not an error: use_remote_estimate EXPLAINs the ctid scan
-- while it plans an UPDATE that it then sends whole
EXPLAIN (COSTS OFF) SELECT ctid, * FROM inbox;
ALTER SERVER loopback OPTIONS (ADD use_remote_estimate 'true');
UPDATE r_inbox SET value = 'seen' WHERE rowkey ^@ '10006-' AND qualifier = 'subject';
UPDATE inbox_h SET value = 'seen' WHERE rowkey ^@ '10006-' AND qualifier = 'subject';
ALTER SERVER loopback OPTIONS (DROP use_remote_estimate);
SELECT * FROM inbox WHERE ctid = '(0,1)';  -- ERROR
\set VERBOSITY default
SELECT wc_same($$SELECT * FROM {t}$$);

DROP TABLE wanted;
DROP FUNCTION wc_same(text), wc_remote_sql(text), wc_rows(text);
DROP FOREIGN TABLE r_inbox;
DROP USER MAPPING FOR CURRENT_USER SERVER loopback;
DROP SERVER loopback;
DROP FOREIGN TABLE inbox;
DROP TABLE inbox_h;
