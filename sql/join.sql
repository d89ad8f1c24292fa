--
-- join: rowkey = outer.column as a parameterized scan (one point read per outer row)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE users (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'info,stats');
INSERT INTO users
SELECT 'user' || lpad(i::text, 5, '0'), f, q, 1, i || ':' || f || ':' || q
  FROM generate_series(1, 5000) i, (VALUES ('info', 'name'), ('info', 'email'), ('stats', 'visits')) v(f, q);
SELECT widecol_flush('users');
ANALYZE users;

CREATE TABLE wanted (id int, k text COLLATE "C");
INSERT INTO wanted VALUES (1, 'user00042'), (2, 'user04242'), (3, 'nobody'), (4, 'user00042');
ANALYZE wanted;

CREATE FUNCTION wc_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l ~ 'Store:' THEN l := regexp_replace(l, '\d+', 'N', 'g'); END IF;
        RETURN NEXT l;
    END LOOP;
END $$;

-- a nested loop with one point read per outer row (no Memoize, to show each read)
SET enable_memoize = off;
EXPLAIN (COSTS OFF)
SELECT w.id, u.qualifier, u.value FROM wanted w JOIN users u ON u.rowkey = w.k;
SELECT w.id, u.qualifier, u.value FROM wanted w JOIN users u ON u.rowkey = w.k ORDER BY w.id, u.qualifier;
SELECT wc_explain('SELECT w.id, u.qualifier, u.value FROM wanted w JOIN users u ON u.rowkey = w.k');
-- with more conditions on the foreign side
EXPLAIN (COSTS OFF)
SELECT w.id, u.value FROM wanted w JOIN users u ON u.rowkey = w.k AND u.family = 'info' AND u.qualifier = 'email';
SELECT w.id, u.value FROM wanted w JOIN users u ON u.rowkey = w.k AND u.family = 'info' AND u.qualifier = 'email'
 ORDER BY w.id;
-- an outer join keeps the missing keys
SELECT w.id, w.k, u.value FROM wanted w LEFT JOIN users u ON u.rowkey = w.k AND u.qualifier = 'visits'
 ORDER BY w.id;
-- IN (subquery) and a LATERAL reference
SELECT count(*) FROM users WHERE rowkey IN (SELECT k FROM wanted);
EXPLAIN (COSTS OFF)
SELECT w.id, l.value FROM wanted w, LATERAL (SELECT value FROM users u WHERE u.rowkey = w.k ORDER BY qualifier LIMIT 1) l;
SELECT w.id, l.value FROM wanted w, LATERAL (SELECT value FROM users u WHERE u.rowkey = w.k ORDER BY qualifier LIMIT 1) l
 ORDER BY w.id;
-- a key of another type is compared after a cast
CREATE TABLE wanted_ids (n int);
INSERT INTO wanted_ids VALUES (7), (8);
SELECT n, value FROM wanted_ids JOIN users ON rowkey = 'user' || lpad(n::text, 5, '0') AND qualifier = 'name'
 ORDER BY n;
-- a join on a column that is not the rowkey is not parameterized, and still right
SELECT count(*) FROM wanted w JOIN users u ON u.value = '42:info:name' AND u.rowkey = w.k;
-- the same join over one full scan gives the same rows
SELECT count(*), sum(length(u.value)) FROM wanted w JOIN users u ON u.rowkey = w.k;
WITH u AS MATERIALIZED (SELECT * FROM users)
SELECT count(*), sum(length(u.value)) FROM wanted w JOIN u ON u.rowkey = w.k;
-- a big outer side: a hash or merge join over one scan is cheaper than 2500 point reads
CREATE TABLE many AS SELECT 'user' || lpad(i::text, 5, '0') COLLATE "C" AS k FROM generate_series(1, 5000, 2) i;
ANALYZE many;
EXPLAIN (COSTS OFF) SELECT count(*) FROM many JOIN users u ON u.rowkey = many.k;
SELECT count(*) FROM many JOIN users u ON u.rowkey = many.k;
RESET enable_memoize;
-- a self join by rowkey
SELECT a.rowkey, a.value, b.value FROM users a JOIN users b ON a.rowkey = b.rowkey
 WHERE a.rowkey = 'user00001' AND a.qualifier = 'name' AND b.qualifier = 'visits';

DROP FOREIGN TABLE users;
DROP TABLE wanted, wanted_ids, many;
DROP FUNCTION wc_explain(text);
