--
-- reverse: ORDER BY rowkey DESC is a reversed scan (HBase's Scan.setReversed):
-- rowkeys descending, each row's cells in the forward order (family, qualifier,
-- ts DESC), no Sort, and a LIMIT stops it after the rows it needs
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE rev (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
    ts bigint, value text
) SERVER wide OPTIONS (families 'x,y', max_versions '0');
-- rowkeys that C order sorts by bytes: prefixes, upper case, multibyte UTF-8
INSERT INTO rev
SELECT 'r' || (i % 40), CASE WHEN i % 3 = 0 THEN 'x' ELSE 'y' END, 'q' || (i % 5), i, 'v' || i
  FROM generate_series(1, 600) i;
SELECT widecol_flush('rev');
INSERT INTO rev VALUES ('r', 'x', '', 1, 'short'), ('R9', 'y', 'a', 2, 'upper'),
    ('r1é', 'x', 'b', 3, 'utf8'), ('r1~', 'y', 'c', 4, 'tilde'), ('r1', 'x', '', 5, 'tie');
SELECT widecol_flush('rev');
-- more in the log and memtable, and deletes over the files
INSERT INTO rev SELECT 'r' || (i % 40), 'x', 'q9', i, 'w' || i FROM generate_series(601, 700) i;
DELETE FROM rev WHERE rowkey = 'r7';
DELETE FROM rev WHERE rowkey = 'r12' AND family = 'y';
DELETE FROM rev WHERE rowkey = 'r13' AND qualifier = 'q2';
CREATE TABLE rev_heap AS SELECT * FROM rev;

-- runs q against rev and rev_heap (%s is the table) and compares the rows in order
CREATE FUNCTION rev_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a text[]; b text[];
BEGIN
    EXECUTE format('SELECT array_agg(t::text) FROM (%s) t', format(q, 'rev')) INTO a;
    EXECUTE format('SELECT array_agg(t::text) FROM (%s) t', format(q, 'rev_heap')) INTO b;
    RETURN CASE WHEN a IS NOT DISTINCT FROM b THEN 'same ' || coalesce(cardinality(a), 0) || ' rows'
                ELSE 'DIFFERENT: ' || coalesce(a::text, 'none') || ' against ' || coalesce(b::text, 'none') END;
END $$;

-- the plans: a reversed scan, no Sort
EXPLAIN (COSTS OFF) SELECT * FROM rev ORDER BY rowkey DESC;
EXPLAIN (COSTS OFF) SELECT * FROM rev ORDER BY rowkey DESC, family, qualifier, ts DESC;
EXPLAIN (COSTS OFF) SELECT * FROM rev ORDER BY rowkey DESC LIMIT 10;
EXPLAIN (COSTS OFF) SELECT * FROM rev WHERE rowkey LIKE 'r1%' AND family = 'y' ORDER BY rowkey DESC;
-- rowkey is never NULL: either NULLS order is the scan's
EXPLAIN (COSTS OFF) SELECT * FROM rev ORDER BY rowkey DESC NULLS LAST;
EXPLAIN (COSTS OFF) SELECT * FROM rev ORDER BY rowkey DESC NULLS FIRST, family NULLS LAST;
EXPLAIN (COSTS OFF) SELECT * FROM rev ORDER BY rowkey NULLS FIRST;
-- an order the scan only starts: an Incremental Sort within each rowkey (with a
-- LIMIT; a whole small table is sorted as fast)
EXPLAIN (COSTS OFF) SELECT * FROM rev ORDER BY rowkey DESC, family DESC LIMIT 5;
EXPLAIN (COSTS OFF) SELECT * FROM rev ORDER BY rowkey DESC, value LIMIT 5;
-- rowkey fixed by the query: the forward scan is already in that order
EXPLAIN (COSTS OFF) SELECT * FROM rev WHERE rowkey = 'r3' ORDER BY rowkey DESC, family;
-- the forward order is still the forward scan
EXPLAIN (COSTS OFF) SELECT * FROM rev ORDER BY rowkey;

-- the rows: the same as the ordinary table's, in the same order
SELECT * FROM rev ORDER BY rowkey DESC, family, qualifier, ts DESC LIMIT 12;
SELECT rev_same('SELECT * FROM %s ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s ORDER BY rowkey DESC NULLS LAST, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s ORDER BY rowkey DESC, family DESC, qualifier, ts');
SELECT rev_same('SELECT * FROM %s ORDER BY rowkey DESC, value');
-- LIMIT, ties on rowkey: the first rows by the whole order, the rowkeys by rowkey alone
SELECT rev_same('SELECT * FROM %s ORDER BY rowkey DESC, family, qualifier, ts DESC LIMIT 25');
SELECT rev_same('SELECT rowkey FROM (SELECT rowkey FROM %s ORDER BY rowkey DESC LIMIT 40) s');
SELECT rev_same('SELECT DISTINCT ON (rowkey) rowkey, family, qualifier, ts FROM %s ORDER BY rowkey DESC, family, qualifier, ts DESC');
-- ranges of every bound, prefixes, IN lists, families, qualifiers, time ranges
SELECT rev_same('SELECT * FROM %s WHERE rowkey BETWEEN ''r2'' AND ''r33'' ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE rowkey > ''r2'' AND rowkey < ''r33'' ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE rowkey >= ''r38'' ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE rowkey <= ''r1'' ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE rowkey < ''r1'' ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE rowkey LIKE ''r1%%'' ORDER BY rowkey DESC, family, qualifier, ts DESC LIMIT 30');
SELECT rev_same('SELECT * FROM %s WHERE starts_with(rowkey, ''r2'') ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE rowkey IN (''r1'', ''r10'', ''r7'', ''r39'', ''nothing'') ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE family = ''x'' ORDER BY rowkey DESC, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE qualifier IN (''q1'', ''q9'') ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE ts BETWEEN 100 AND 200 ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE rowkey > ''r5'' AND rowkey < ''r4'' ORDER BY rowkey DESC');
-- ORs of rowkey conditions (several key ranges, one of them empty) and qualifier
-- ranges and prefixes, read backward
SELECT rev_same('SELECT * FROM %s WHERE rowkey < ''r1'' OR rowkey BETWEEN ''r2'' AND ''r25'' OR rowkey = ''r39'' OR (rowkey > ''r5'' AND rowkey < ''r4'') ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE rowkey LIKE ANY (ARRAY[''r1%%'', ''r3%%'']) ORDER BY rowkey DESC, family, qualifier, ts DESC LIMIT 25');
SELECT rev_same('SELECT * FROM %s WHERE qualifier >= ''q2'' AND qualifier < ''q7'' ORDER BY rowkey DESC, family, qualifier, ts DESC');
SELECT rev_same('SELECT * FROM %s WHERE qualifier ^@ ''q1'' AND (rowkey <= ''r12'' OR rowkey >= ''r30'') ORDER BY rowkey DESC, family, qualifier, ts DESC');
EXPLAIN (COSTS OFF) SELECT * FROM rev WHERE rowkey < 'r1' OR rowkey = 'r39' ORDER BY rowkey DESC LIMIT 5;
SELECT rev_same('SELECT rowkey, count(*) FROM %s GROUP BY rowkey ORDER BY rowkey DESC');
EXPLAIN (COSTS OFF) SELECT rowkey, count(*) FROM rev GROUP BY rowkey ORDER BY rowkey DESC LIMIT 3;

-- a transaction's own writes, not committed yet, in their place
BEGIN;
INSERT INTO rev VALUES ('r99', 'x', 'new', 1, 'pending'), ('r2', 'y', 'new', 1, 'pending');
INSERT INTO rev_heap VALUES ('r99', 'x', 'new', 1, 'pending'), ('r2', 'y', 'new', 1, 'pending');
DELETE FROM rev WHERE rowkey = 'r38';
DELETE FROM rev_heap WHERE rowkey = 'r38';
SELECT * FROM rev ORDER BY rowkey DESC, family, qualifier, ts DESC LIMIT 3;
SELECT rev_same('SELECT * FROM %s ORDER BY rowkey DESC, family, qualifier, ts DESC');
ROLLBACK;

-- the newest point before a time, per outer row: a reversed scan re-seeked with
-- each outer row's value (LATERAL ... ORDER BY rowkey DESC LIMIT 1)
CREATE TABLE rev_probe (k text COLLATE "C");
INSERT INTO rev_probe VALUES ('r3'), ('r25'), ('r'), (''), ('zzz'), ('r10');
EXPLAIN (COSTS OFF)
SELECT p.k, l.rowkey FROM rev_probe p,
       LATERAL (SELECT rowkey FROM rev WHERE rowkey < p.k ORDER BY rowkey DESC LIMIT 1) l;
SELECT p.k, l.rowkey FROM rev_probe p,
       LATERAL (SELECT rowkey FROM rev WHERE rowkey < p.k ORDER BY rowkey DESC LIMIT 1) l ORDER BY p.k;
SELECT rev_same('SELECT p.k, l.* FROM rev_probe p, LATERAL (SELECT * FROM %s WHERE rowkey <= p.k ORDER BY rowkey DESC, family, qualifier, ts DESC LIMIT 2) l ORDER BY p.k');

-- LIMIT stops the scan: ten rows of 20,000 read a few blocks, the whole range many
CREATE FOREIGN TABLE rev_big (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'm');
INSERT INTO rev_big SELECT 'p' || lpad(i::text, 6, '0'), 'm', 'v', 1, repeat('x', 20)
  FROM generate_series(1, 20000) i;
SELECT widecol_flush('rev_big');
CREATE FUNCTION rev_stats(q text) RETURNS TABLE (blocks bigint, cells bigint, reversed bool)
LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    reversed := false;
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l ~ 'Reversed: true' THEN reversed := true; END IF;
        IF l ~ 'Store:' THEN
            blocks := substring(l FROM 'blocks read=(\d+)')::bigint;
            cells := substring(l FROM 'cells scanned=(\d+)')::bigint;
        END IF;
    END LOOP;
    RETURN NEXT;
END $$;
SELECT rowkey FROM rev_big ORDER BY rowkey DESC LIMIT 3;
SELECT rowkey FROM rev_big WHERE rowkey < 'p015000' ORDER BY rowkey DESC LIMIT 3;
SELECT reversed, blocks <= 5 AS few_blocks, cells <= 20 AS few_cells
  FROM rev_stats('SELECT * FROM rev_big WHERE rowkey < ''p015000'' ORDER BY rowkey DESC LIMIT 10');
-- (a reversed scan also looks at the first cell after each row it reads)
SELECT reversed, blocks > 50 AS many_blocks, cells >= 15000 AS every_cell
  FROM rev_stats('SELECT * FROM rev_big WHERE rowkey < ''p015000'' ORDER BY rowkey DESC');

-- wide tables: one row per rowkey, rowkeys descending
CREATE FOREIGN TABLE revw (
    rowkey text COLLATE "C",
    a int OPTIONS (cell 'f:a'),
    g jsonb OPTIONS (cell 'g:*')
) SERVER wide OPTIONS (families 'f,g');
INSERT INTO revw SELECT 'w' || (i % 37), i, jsonb_build_object('k' || (i % 3), i)
  FROM generate_series(1, 200) i;
SELECT widecol_flush('revw');
INSERT INTO revw SELECT 'w' || i, NULL, '{"late": 1}' FROM generate_series(30, 45) i;
UPDATE revw SET a = NULL WHERE rowkey = 'w31';
DELETE FROM revw WHERE rowkey = 'w5';
CREATE TABLE revw_heap AS SELECT * FROM revw;
CREATE FUNCTION revw_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE a text[]; b text[];
BEGIN
    EXECUTE format('SELECT array_agg(t::text) FROM (%s) t', format(q, 'revw')) INTO a;
    EXECUTE format('SELECT array_agg(t::text) FROM (%s) t', format(q, 'revw_heap')) INTO b;
    RETURN CASE WHEN a IS NOT DISTINCT FROM b THEN 'same ' || coalesce(cardinality(a), 0) || ' rows'
                ELSE 'DIFFERENT: ' || coalesce(a::text, 'none') || ' against ' || coalesce(b::text, 'none') END;
END $$;
EXPLAIN (COSTS OFF) SELECT * FROM revw ORDER BY rowkey DESC LIMIT 5;
EXPLAIN (COSTS OFF) SELECT rowkey, a FROM revw WHERE rowkey > 'w2' ORDER BY rowkey DESC;
SELECT * FROM revw ORDER BY rowkey DESC LIMIT 5;
SELECT revw_same('SELECT * FROM %s ORDER BY rowkey DESC');
SELECT revw_same('SELECT rowkey, a FROM %s WHERE a IS NOT NULL ORDER BY rowkey DESC LIMIT 7');
SELECT revw_same('SELECT * FROM %s WHERE rowkey BETWEEN ''w10'' AND ''w3'' ORDER BY rowkey DESC');
SELECT revw_same('SELECT rowkey, g FROM %s WHERE rowkey LIKE ''w3%%'' ORDER BY rowkey DESC');

-- bytea rowkeys: byte order, reversed
CREATE FOREIGN TABLE revb (rowkey bytea, family text, qualifier bytea, ts bigint, value text)
    SERVER wide OPTIONS (families 'f');
INSERT INTO revb VALUES ('\x00', 'f', '\x01', 1, 'a'), ('\x0000', 'f', '\x01', 1, 'b'),
    ('\xff', 'f', '\x02', 1, 'c'), ('\xfe01', 'f', '\x00', 1, 'd'), ('\x01ff', 'f', '\x00', 1, 'e'),
    ('\xff00', 'f', '\x00', 1, 'f');
EXPLAIN (COSTS OFF) SELECT * FROM revb WHERE rowkey < '\xff' ORDER BY rowkey DESC;
SELECT rowkey, value FROM revb ORDER BY rowkey DESC;
SELECT rowkey, value FROM revb WHERE rowkey < '\xff' ORDER BY rowkey DESC;

-- a non-C collation: the store's order is not PostgreSQL's, so a Sort
CREATE FOREIGN TABLE revi (rowkey text COLLATE "und-x-icu", value text) SERVER wide OPTIONS (families 'f');
INSERT INTO revi VALUES ('b', '1'), ('B', '2'), ('a', '3'), ('A', '4');
EXPLAIN (COSTS OFF) SELECT * FROM revi ORDER BY rowkey DESC;
SELECT * FROM revi ORDER BY rowkey DESC;
SELECT * FROM revi ORDER BY rowkey COLLATE "C" DESC;

DROP FOREIGN TABLE rev, rev_big, revw, revb, revi;
DROP TABLE rev_heap, revw_heap, rev_probe;
DROP FUNCTION rev_same(text), revw_same(text), rev_stats(text);
