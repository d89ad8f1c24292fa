--
-- order: rows come in (rowkey, family, qualifier, ts DESC) byte order and the
-- planner knows it
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE ord (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
    ts bigint, value text
) SERVER wide OPTIONS (families 'x,y', max_versions '0');
INSERT INTO ord
SELECT 'r' || (i % 50), CASE WHEN i % 2 = 0 THEN 'x' ELSE 'y' END, 'q' || (i % 7), i, 'v' || i
  FROM generate_series(1, 1000) i;

-- ORDER BY rowkey: no Sort
EXPLAIN (COSTS OFF) SELECT * FROM ord ORDER BY rowkey;
EXPLAIN (COSTS OFF) SELECT * FROM ord ORDER BY rowkey, family, qualifier, ts DESC;
EXPLAIN (COSTS OFF) SELECT * FROM ord WHERE rowkey > 'r3' ORDER BY rowkey, family;
-- the latest version of every cell: DISTINCT ON without a Sort
EXPLAIN (COSTS OFF)
SELECT DISTINCT ON (rowkey, family, qualifier) * FROM ord ORDER BY rowkey, family, qualifier, ts DESC;
SELECT DISTINCT ON (rowkey, family, qualifier) *
  FROM ord WHERE rowkey IN ('r1', 'r10') ORDER BY rowkey, family, qualifier, ts DESC;
-- LIMIT stops early
EXPLAIN (COSTS OFF) SELECT * FROM ord ORDER BY rowkey LIMIT 3;
SELECT * FROM ord ORDER BY rowkey LIMIT 3;
SELECT * FROM ord ORDER BY rowkey, family, qualifier, ts DESC LIMIT 3 OFFSET 20;
CREATE FUNCTION wc_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l ~ 'Store:' THEN l := regexp_replace(l, '\d+', 'N', 'g'); END IF;
        RETURN NEXT l;
    END LOOP;
END $$;
SELECT wc_explain('SELECT * FROM ord LIMIT 5');
-- a rowkey fixed by the query: ordered by family, qualifier, ts DESC
EXPLAIN (COSTS OFF) SELECT * FROM ord WHERE rowkey = 'r7' ORDER BY family, qualifier, ts DESC;
-- rowkey DESC is a reversed scan (reverse.sql)
EXPLAIN (COSTS OFF) SELECT * FROM ord ORDER BY rowkey DESC;
-- orders that are not the store's need a Sort
EXPLAIN (COSTS OFF) SELECT * FROM ord ORDER BY rowkey, family, qualifier, ts;
EXPLAIN (COSTS OFF) SELECT * FROM ord ORDER BY ts;
EXPLAIN (COSTS OFF) SELECT * FROM ord ORDER BY rowkey COLLATE "und-x-icu";
-- and give the same rows as a sorted ordinary table
CREATE TABLE ord_heap AS SELECT * FROM ord;
SELECT count(*) FROM (
    SELECT row_number() OVER () AS n, * FROM (SELECT * FROM ord ORDER BY rowkey, family, qualifier, ts DESC) a
    EXCEPT ALL
    SELECT row_number() OVER () AS n, * FROM (SELECT * FROM ord_heap ORDER BY rowkey, family, qualifier, ts DESC) b
) d;

-- a rowkey under a non-C collation: the store's order is not PostgreSQL's
CREATE FOREIGN TABLE ordi (rowkey text COLLATE "und-x-icu", value text) SERVER wide OPTIONS (families 'f');
INSERT INTO ordi VALUES ('b', '1'), ('B', '2'), ('a', '3'), ('A', '4');
EXPLAIN (COSTS OFF) SELECT * FROM ordi ORDER BY rowkey;
SELECT * FROM ordi ORDER BY rowkey;
SELECT * FROM ordi ORDER BY rowkey COLLATE "C";

-- bytea keys and timestamptz ts are byte ordered
CREATE FOREIGN TABLE ordb (rowkey bytea, family text COLLATE "C", qualifier bytea, ts timestamptz, value text)
    SERVER wide OPTIONS (families 'f');
INSERT INTO ordb VALUES ('\x02', 'f', '\x01', '2024-01-01', 'a'), ('\x01', 'f', '\x02', '2024-01-02', 'b'),
                        ('\x01', 'f', '\x02', '2024-01-03', 'c');
EXPLAIN (COSTS OFF)
SELECT DISTINCT ON (rowkey, family, qualifier) * FROM ordb ORDER BY rowkey, family, qualifier, ts DESC;
SELECT DISTINCT ON (rowkey, family, qualifier) rowkey, qualifier, value FROM ordb ORDER BY rowkey, family, qualifier, ts DESC;

DROP FOREIGN TABLE ord, ordi, ordb;
DROP TABLE ord_heap;
DROP FUNCTION wc_explain(text);
