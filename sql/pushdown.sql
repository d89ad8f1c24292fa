--
-- pushdown: what reaches the engine, shown by EXPLAIN, and the results
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE pd (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
    ts bigint, value text
) SERVER wide OPTIONS (families 'a,b', max_versions '0');
INSERT INTO pd
SELECT 'row' || lpad(i::text, 3, '0'), f, 'q' || (i % 3), t, i || f || t
  FROM generate_series(1, 200) i, unnest(ARRAY['a', 'b']) f, generate_series(1, 3) t;
INSERT INTO pd VALUES ('row%_x', 'a', 'q%', 1, 'wild'), ('row\', 'a', 'q_', 1, 'backslash');

-- rowkey =
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE rowkey = 'row007';
SELECT * FROM pd WHERE rowkey = 'row007';
-- rowkey IN: sorted, merged, de-duplicated ranges
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE rowkey IN ('row010', 'row002', 'row010', 'nope');
SELECT DISTINCT rowkey FROM pd WHERE rowkey IN ('row010', 'row002', 'row010', 'nope');
-- ranges with exact inclusivity
EXPLAIN (COSTS OFF) SELECT rowkey FROM pd WHERE rowkey > 'row100' AND rowkey <= 'row102';
SELECT DISTINCT rowkey FROM pd WHERE rowkey > 'row100' AND rowkey <= 'row102';
SELECT DISTINCT rowkey FROM pd WHERE rowkey >= 'row100' AND rowkey < 'row102';
SELECT DISTINCT rowkey FROM pd WHERE 'row199' < rowkey;  -- commuted
SELECT count(*) FROM pd WHERE rowkey < 'row001';
SELECT count(*) FROM pd WHERE rowkey > 'row200' AND rowkey < 'row201';
SELECT count(*) FROM pd WHERE rowkey > 'row150' AND rowkey < 'row100';  -- empty range
-- BETWEEN
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE rowkey BETWEEN 'row050' AND 'row051';
SELECT DISTINCT rowkey FROM pd WHERE rowkey BETWEEN 'row050' AND 'row051';
-- IN intersected with a range
SELECT DISTINCT rowkey FROM pd WHERE rowkey IN ('row001', 'row005', 'row009') AND rowkey > 'row003';
-- LIKE 'prefix%' and starts_with: the range [prefix, prefix+1)
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE rowkey LIKE 'row19%';
SELECT DISTINCT rowkey FROM pd WHERE rowkey LIKE 'row19%';
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE starts_with(rowkey, 'row00');
SELECT DISTINCT rowkey FROM pd WHERE starts_with(rowkey, 'row00');
-- ... also as the operator ^@, on rowkey and qualifier
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE rowkey ^@ 'row00';
SELECT DISTINCT rowkey FROM pd WHERE rowkey ^@ 'row00' ORDER BY 1;
SELECT count(*) FROM pd WHERE rowkey ^@ 'row00' AND qualifier ^@ 'q';
SELECT DISTINCT rowkey FROM pd WHERE rowkey LIKE 'row1_0';  -- prefix 'row1', rest rechecked
SELECT DISTINCT rowkey FROM pd WHERE rowkey LIKE 'row\%\_x';  -- escapes: no wildcard at all
SELECT DISTINCT rowkey FROM pd WHERE rowkey LIKE 'row%\_x';
SELECT DISTINCT rowkey FROM pd WHERE rowkey LIKE 'row!%%' ESCAPE '!';
SELECT DISTINCT rowkey FROM pd WHERE rowkey LIKE 'row\\';
SELECT DISTINCT rowkey FROM pd WHERE rowkey LIKE '%007';  -- no prefix: a full scan
-- family = and IN
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE family = 'b' AND rowkey = 'row001';
SELECT family, qualifier, ts FROM pd WHERE family = 'b' AND rowkey = 'row001';
SELECT count(*) FROM pd WHERE family IN ('a', 'zzz');
SELECT count(*) FROM pd WHERE family = 'zzz';
SELECT count(*) FROM pd WHERE family = 'a' AND family = 'b';
-- qualifier =, IN, prefix
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE qualifier IN ('q1', 'q2') AND rowkey LIKE 'row00%';
SELECT rowkey, qualifier FROM pd WHERE qualifier IN ('q1', 'q2') AND rowkey LIKE 'row00%' AND ts = 1 AND family = 'a';
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE qualifier LIKE 'q%';
SELECT count(*) FROM pd WHERE qualifier LIKE 'q%';
SELECT rowkey FROM pd WHERE qualifier LIKE 'q\%';
SELECT rowkey FROM pd WHERE starts_with(qualifier, 'q_');
SELECT count(*) FROM pd WHERE qualifier = 'q1' AND qualifier LIKE 'q2%';
-- ts: =, <, <=, >, >=, BETWEEN, IN (as the range of the values)
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE ts < 2 AND rowkey = 'row001';
SELECT family, ts FROM pd WHERE ts < 2 AND rowkey = 'row001';
SELECT family, ts FROM pd WHERE ts >= 3 AND rowkey = 'row001';
SELECT family, ts FROM pd WHERE ts > 1 AND ts <= 2 AND rowkey = 'row001';
SELECT family, ts FROM pd WHERE ts BETWEEN 2 AND 2 AND rowkey = 'row001';
SELECT family, ts FROM pd WHERE ts IN (1, 3) AND rowkey = 'row001';
SELECT count(*) FROM pd WHERE ts < -9223372036854775808;
SELECT count(*) FROM pd WHERE ts > 9223372036854775807;
SELECT count(*) FROM pd WHERE ts <= 9223372036854775807 AND ts >= -9223372036854775808;
SELECT count(*) FROM pd WHERE ts = 2::int2 AND rowkey = 'row001';
-- NULL comparisons match nothing
SELECT count(*) FROM pd WHERE rowkey = NULL;
SELECT count(*) FROM pd WHERE rowkey IN ('row001', NULL);
SELECT count(*) FROM pd WHERE ts > NULL;
-- not pushed: value, OR, rowkey functions; still right
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE value = '7a1' OR rowkey = 'row008';
SELECT rowkey, family, ts FROM pd WHERE value = '7a1' OR (rowkey = 'row008' AND ts = 3);
SELECT count(*) FROM pd WHERE upper(rowkey) = 'ROW001';

-- collation: the same data under a collation that is not byte order
CREATE FOREIGN TABLE pdi (rowkey text COLLATE "und-x-icu", family text, value text)
    SERVER wide OPTIONS (families 'f');
INSERT INTO pdi VALUES ('a', 'f', '1'), ('B', 'f', '2'), ('c', 'f', '3'), ('D', 'f', '4'), ('é', 'f', '5');
-- byte order is B, D, a, c, é; the collation's order is a, B, c, D, é
SELECT rowkey FROM pdi;
-- = and IN are pushed (any deterministic collation) ...
EXPLAIN (COSTS OFF) SELECT * FROM pdi WHERE rowkey IN ('a', 'D');
SELECT rowkey FROM pdi WHERE rowkey IN ('a', 'D');
-- ... ranges are not: the scan reads everything, PostgreSQL filters
EXPLAIN (COSTS OFF) SELECT * FROM pdi WHERE rowkey > 'a' AND rowkey < 'D';
SELECT rowkey FROM pdi WHERE rowkey > 'a' AND rowkey < 'D' ORDER BY rowkey;
SELECT rowkey FROM pdi WHERE rowkey BETWEEN 'B' AND 'c' ORDER BY rowkey;
-- a C comparison on the same column is byte order again
EXPLAIN (COSTS OFF) SELECT * FROM pdi WHERE rowkey < 'a' COLLATE "C";
SELECT rowkey FROM pdi WHERE rowkey < 'a' COLLATE "C";
-- text_pattern_ops operators compare bytes
EXPLAIN (COSTS OFF) SELECT * FROM pdi WHERE rowkey ~>=~ 'a';
SELECT rowkey FROM pdi WHERE rowkey ~>=~ 'a';
-- LIKE is a byte prefix under any deterministic collation
EXPLAIN (COSTS OFF) SELECT * FROM pdi WHERE rowkey LIKE 'é%';
SELECT rowkey FROM pdi WHERE rowkey LIKE 'é%';
-- a nondeterministic collation: 'a' = 'A', so nothing is pushed
CREATE COLLATION wc_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT rowkey FROM pdi WHERE rowkey = 'b' COLLATE wc_ci;
EXPLAIN (COSTS OFF) SELECT * FROM pdi WHERE rowkey = 'b' COLLATE wc_ci;
SELECT rowkey FROM pdi WHERE rowkey IN ('A' COLLATE wc_ci, 'd');
SELECT rowkey FROM pdi WHERE rowkey > 'b' COLLATE wc_ci ORDER BY rowkey COLLATE "C";

-- prepared statements: values evaluated at execution, also with generic plans
SET plan_cache_mode = force_generic_plan;
PREPARE p_eq(text) AS SELECT DISTINCT rowkey FROM pd WHERE rowkey = $1;
EXPLAIN (COSTS OFF) EXECUTE p_eq('row003');
EXECUTE p_eq('row003');
EXECUTE p_eq('row004');
EXECUTE p_eq(NULL);
PREPARE p_any(text[]) AS SELECT DISTINCT rowkey FROM pd WHERE rowkey = ANY($1);
EXPLAIN (COSTS OFF) EXECUTE p_any('{row001,row002}');
EXECUTE p_any('{row009,row001,row009,NULL}');
EXECUTE p_any('{}');
EXECUTE p_any(NULL);
PREPARE p_range(text, text, bigint) AS
    SELECT rowkey, family, ts FROM pd WHERE rowkey >= $1 AND rowkey < $2 AND ts > $3 AND family = 'a';
EXPLAIN (COSTS OFF) EXECUTE p_range('row001', 'row003', 1);
EXECUTE p_range('row001', 'row003', 1);
EXECUTE p_range('row003', 'row001', 1);
PREPARE p_like(text) AS SELECT DISTINCT rowkey FROM pd WHERE rowkey LIKE $1;
EXECUTE p_like('row10%');
EXECUTE p_like('row1_5');
PREPARE p_fam(text) AS SELECT count(*) FROM pd WHERE family = $1;
EXECUTE p_fam('a');
EXECUTE p_fam('c');
RESET plan_cache_mode;
DEALLOCATE ALL;

-- stable expressions are evaluated at execution too
EXPLAIN (COSTS OFF) SELECT * FROM pd WHERE rowkey = 'row' || lpad((1 + 1)::text, 3, '0') AND ts < extract(year FROM now())::bigint;
SELECT DISTINCT rowkey FROM pd WHERE rowkey = 'row' || lpad((1 + 1)::text, 3, '0') AND ts < extract(year FROM now())::bigint;

DROP FOREIGN TABLE pd, pdi;
DROP COLLATION wc_ci;
