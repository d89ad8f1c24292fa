--
-- pushdown_or: OR of rowkey conditions, LIKE ANY / ^@ ANY of prefixes, and
-- qualifier ranges become key ranges; every result compared with an ordinary
-- table holding the same rows
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

-- salted keys: '<salt>|<id>' with 4 salts, 3 families x 4 qualifiers x 2 versions
CREATE FOREIGN TABLE po (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
    ts bigint, value text
) SERVER wide OPTIONS (families 'a,b,c', max_versions '0');
INSERT INTO po
SELECT (i % 4) || '|' || lpad(i::text, 4, '0'), f, 'q' || q, t, i || f || q || t
  FROM generate_series(1, 400) i, unnest(ARRAY['a', 'b', 'c']) f,
       generate_series(0, 3) q, generate_series(1, 2) t;
INSERT INTO po VALUES ('!', 'a', '', 1, 'low'), (E'\x7f\x7f', 'a', 'z', 1, 'high'),
    ('0|', 'b', 'q', 1, 'short'), ('0|%x', 'a', 'q1x', 1, 'percent');
CREATE TABLE po_heap AS SELECT * FROM po;
SELECT widecol_compact('po');

-- q: a query with %s for the table; the rows of both tables, compared
CREATE FUNCTION po_same(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
    d bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM (' || q || ') x', 'po') INTO n;
    EXECUTE format('SELECT count(*) FROM ((' || q || ' EXCEPT ALL ' || q || ') UNION ALL ('
                   || q || ' EXCEPT ALL ' || q || ')) x', 'po', 'po_heap', 'po_heap', 'po') INTO d;
    RETURN CASE WHEN d = 0 THEN 'same ' || n || ' rows' ELSE 'DIFFERENT: ' || d END;
END $$;
-- the cells the engine scanned for q (on po), and the rows it returned
CREATE FUNCTION po_scanned(q text, OUT cells bigint, OUT rows bigint) LANGUAGE plpgsql AS $$
DECLARE
    plan json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, TIMING OFF, SUMMARY OFF) ' || format(q, 'po') INTO plan;
    cells := (plan -> 0 -> 'Plan' ->> 'Cells Scanned')::bigint;
    rows := (plan -> 0 -> 'Plan' ->> 'Actual Rows')::bigint;
END $$;
SELECT count(*) AS cells FROM po;

-- OR of equalities, ranges and prefixes: sorted, merged key ranges
EXPLAIN (COSTS OFF) SELECT * FROM po WHERE rowkey = '1|0001' OR rowkey = '2|0002';
SELECT po_same($$SELECT * FROM %s WHERE rowkey = '1|0001' OR rowkey = '2|0002'$$);
EXPLAIN (COSTS OFF) SELECT * FROM po
 WHERE rowkey LIKE '3|01%' OR rowkey BETWEEN '0|0100' AND '0|0120' OR rowkey IN ('2|0002', '1|0005');
SELECT po_same($$SELECT * FROM %s
 WHERE rowkey LIKE '3|01%%' OR rowkey BETWEEN '0|0100' AND '0|0120' OR rowkey IN ('2|0002', '1|0005')$$);
-- only about those cells are scanned (a full scan: 9604)
SELECT cells < 2 * rows AS narrow, rows FROM po_scanned($$SELECT * FROM %s
 WHERE rowkey LIKE '3|01%%' OR rowkey BETWEEN '0|0100' AND '0|0120' OR rowkey IN ('2|0002', '1|0005')$$);
-- overlapping and touching arms merge; the order stays the store's (no Sort)
EXPLAIN (COSTS OFF) SELECT DISTINCT rowkey FROM po
 WHERE rowkey < '0|0050' OR rowkey >= '0|0040' AND rowkey < '0|0100' OR rowkey ^@ '0|00' ORDER BY rowkey;
SELECT po_same($$SELECT DISTINCT rowkey FROM %s
 WHERE rowkey < '0|0050' OR rowkey >= '0|0040' AND rowkey < '0|0100' OR rowkey ^@ '0|00'$$);
SELECT count(*) FROM (SELECT rowkey, lag(rowkey) OVER () AS prev FROM po
 WHERE rowkey > '3|0390' OR rowkey < '0|0010' OR rowkey ^@ '2|01') s WHERE prev > rowkey;
-- ORs combined with ANDs: (OR) AND (OR), and AND arms inside an OR
EXPLAIN (COSTS OFF) SELECT * FROM po
 WHERE (rowkey ^@ '1|' OR rowkey ^@ '2|') AND (rowkey < '1|0100' OR rowkey > '2|0300') AND family = 'b';
SELECT po_same($$SELECT * FROM %s
 WHERE (rowkey ^@ '1|' OR rowkey ^@ '2|') AND (rowkey < '1|0100' OR rowkey > '2|0300') AND family = 'b'$$);
EXPLAIN (COSTS OFF) SELECT * FROM po
 WHERE (rowkey >= '1|0200' AND rowkey < '1|0220' AND ts = 2) OR (rowkey = '3|0003' AND value LIKE '%c%');
SELECT po_same($$SELECT * FROM %s
 WHERE (rowkey >= '1|0200' AND rowkey < '1|0220' AND ts = 2) OR (rowkey = '3|0003' AND value LIKE '%%c%%')$$);
SELECT po_same($$SELECT * FROM %s WHERE rowkey = '0|0004' OR (rowkey > '0|0008' AND (rowkey < '0|0012' OR rowkey = '0|0016'))$$);
-- an arm that does not narrow the rowkey: nothing of the OR is pushed
EXPLAIN (COSTS OFF) SELECT * FROM po WHERE rowkey = '1|0001' OR qualifier = 'q1';
SELECT po_same($$SELECT * FROM %s WHERE rowkey = '1|0001' OR qualifier = 'q1'$$);
-- empty and NULL arms match nothing; the others still do
SELECT po_same($$SELECT * FROM %s WHERE rowkey = NULL OR rowkey ^@ '1|000'$$);
SELECT po_same($$SELECT * FROM %s WHERE (rowkey > '2' AND rowkey < '1') OR rowkey = '0|0004'$$);
SELECT po_same($$SELECT * FROM %s WHERE rowkey = '!' OR rowkey > E'\x7f'$$);
SELECT po_same($$SELECT * FROM %s WHERE rowkey < '0|0001' OR rowkey LIKE '0|\%%'$$);

-- LIKE ANY / ^@ ANY: one prefix per salt, merged in order
EXPLAIN (COSTS OFF) SELECT * FROM po WHERE rowkey LIKE ANY (ARRAY['0|03%', '1|03%', '2|03%', '3|03%']);
SELECT po_same($$SELECT * FROM %s WHERE rowkey LIKE ANY (ARRAY['0|03%%', '1|03%%', '2|03%%', '3|03%%'])$$);
SELECT cells < 2 * rows AS narrow, rows FROM po_scanned(
    $$SELECT * FROM %s WHERE rowkey LIKE ANY (ARRAY['0|03%%', '1|03%%', '2|03%%', '3|03%%'])$$);
EXPLAIN (COSTS OFF) SELECT * FROM po WHERE rowkey ^@ ANY (ARRAY['3|02', '1|02']) ORDER BY rowkey;
SELECT po_same($$SELECT * FROM %s WHERE rowkey ^@ ANY (ARRAY['3|02', '1|02'])$$);
-- nested and repeated prefixes, exact patterns, wildcards, NULL elements
SELECT po_same($$SELECT * FROM %s WHERE rowkey LIKE ANY (ARRAY['1|0%%', '1|00%%', '1|0001', NULL, '2|_00%%', '0|\%%x'])$$);
SELECT po_same($$SELECT * FROM %s WHERE rowkey ^@ ANY (ARRAY['', '0'])$$);
SELECT po_same($$SELECT * FROM %s WHERE rowkey ^@ ANY (ARRAY[]::text[])$$);
SELECT po_same($$SELECT * FROM %s WHERE rowkey LIKE ANY (ARRAY['2|01%%', '3|01%%']) AND rowkey > '2|0150'$$);
-- parameters: LIKE ANY ($1), ORs of $n, generic plans
SET plan_cache_mode = force_generic_plan;
PREPARE po_any(text[]) AS SELECT count(*) FROM po WHERE rowkey LIKE ANY ($1);
EXPLAIN (COSTS OFF) EXECUTE po_any('{1|01%,2|01%}');
EXECUTE po_any('{1|01%,2|01%}');
SELECT count(*) FROM po_heap WHERE rowkey LIKE ANY ('{1|01%,2|01%}');
EXECUTE po_any(NULL);
PREPARE po_or(text, text, text) AS SELECT count(*) FROM po WHERE rowkey = $1 OR rowkey ^@ $2 OR rowkey > $3;
EXPLAIN (COSTS OFF) EXECUTE po_or('0|0004', '1|02', '3|0390');
EXECUTE po_or('0|0004', '1|02', '3|0390');
SELECT count(*) FROM po_heap WHERE rowkey = '0|0004' OR rowkey ^@ '1|02' OR rowkey > '3|0390';
EXECUTE po_or(NULL, '1|02', NULL);
RESET plan_cache_mode;
DEALLOCATE ALL;
-- a join: OR on the inner side with an outer value (a parameterized rescan)
CREATE TABLE po_salts (salt text);
INSERT INTO po_salts VALUES ('0'), ('2');
SELECT po_same($$SELECT s.salt, w.rowkey FROM po_salts s, LATERAL (SELECT rowkey FROM %s w
    WHERE w.rowkey ^@ (s.salt || '|001') OR w.rowkey = s.salt || '|0399') w$$);
-- not pushed under a collation that is not byte order (ranges), still right
CREATE FOREIGN TABLE poi (rowkey text COLLATE "und-x-icu", family text, value text)
    SERVER wide OPTIONS (families 'f');
INSERT INTO poi VALUES ('a', 'f', '1'), ('B', 'f', '2'), ('c', 'f', '3'), ('D', 'f', '4');
EXPLAIN (COSTS OFF) SELECT * FROM poi WHERE rowkey < 'B' OR rowkey = 'D';
SELECT rowkey FROM poi WHERE rowkey < 'B' OR rowkey = 'D' ORDER BY rowkey;
EXPLAIN (COSTS OFF) SELECT * FROM poi WHERE rowkey LIKE ANY (ARRAY['a%', 'D%']) OR rowkey = 'c';
SELECT rowkey FROM poi WHERE rowkey LIKE ANY (ARRAY['a%', 'D%']) OR rowkey = 'c' ORDER BY rowkey;

-- qualifier ranges: the engine seeks to the range within each row
EXPLAIN (COSTS OFF) SELECT * FROM po WHERE qualifier >= 'q1' AND qualifier < 'q3';
SELECT po_same($$SELECT * FROM %s WHERE qualifier >= 'q1' AND qualifier < 'q3'$$);
SELECT po_same($$SELECT * FROM %s WHERE qualifier > 'q1' AND qualifier <= 'q3' AND rowkey ^@ '2|'$$);
SELECT po_same($$SELECT * FROM %s WHERE qualifier > 'q2'$$);
SELECT po_same($$SELECT * FROM %s WHERE qualifier < 'q1'$$);
SELECT po_same($$SELECT * FROM %s WHERE qualifier BETWEEN 'q1' AND 'q1x'$$);
SELECT po_same($$SELECT * FROM %s WHERE qualifier ^@ 'q1'$$);
SELECT po_same($$SELECT * FROM %s WHERE qualifier LIKE 'q1%%' AND qualifier > 'q1'$$);
SELECT po_same($$SELECT * FROM %s WHERE qualifier IN ('q0', 'q2', 'q3') AND qualifier < 'q3'$$);
SELECT po_same($$SELECT * FROM %s WHERE qualifier >= 'q3' AND qualifier < 'q1'$$);
-- a range scans little more than its share of the cells (of 9604)
SELECT cells BETWEEN rows AND 7500 AS narrow, rows FROM po_scanned($$SELECT * FROM %s WHERE qualifier >= 'q1' AND qualifier < 'q3'$$);
SELECT cells BETWEEN rows AND 4000 AS narrow, rows FROM po_scanned($$SELECT * FROM %s WHERE qualifier ^@ 'q3'$$);
-- deleted versions inside the range stay deleted
DELETE FROM po WHERE rowkey = '1|0001' AND family = 'a';
DELETE FROM po_heap WHERE rowkey = '1|0001' AND family = 'a';
SELECT po_same($$SELECT * FROM %s WHERE qualifier > 'q1' AND rowkey < '1|0010'$$);
-- under another collation a qualifier range is not pushed
CREATE FOREIGN TABLE poq (rowkey text, qualifier text COLLATE "und-x-icu", value text)
    SERVER wide OPTIONS (families 'f');
INSERT INTO poq VALUES ('r', 'a', '1'), ('r', 'B', '2'), ('r', 'c', '3');
EXPLAIN (COSTS OFF) SELECT * FROM poq WHERE qualifier > 'a';
SELECT qualifier FROM poq WHERE qualifier > 'a' ORDER BY qualifier;

DROP FUNCTION po_same(text), po_scanned(text);
DROP FOREIGN TABLE po, poi, poq;
DROP TABLE po_heap, po_salts;
