--
-- analyze: ANALYZE reads a random sample of key ranges of a large store and
-- estimates its rows; a small store is read whole.  Sampling is random, so
-- only ranges are printed.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE an (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
    ts bigint, value int
) SERVER wide OPTIONS (families 'a,b,c', max_versions '1');
-- 40,000 rows x 3 families, qualifiers q0..q4 by row, values 0..99
INSERT INTO an SELECT 'r' || lpad(i::text, 6, '0'), f, 'q' || (i % 5), 1, i % 100
  FROM generate_series(1, 40000) i, unnest(ARRAY['a', 'b', 'c']) f;
SELECT widecol_flush('an');
-- a newer version of every 4th row of a, in the log: the old one is hidden
-- (max_versions 1), so the table still has 120,000 rows, plus dead entries
INSERT INTO an SELECT 'r' || lpad(i::text, 6, '0'), 'a', 'q' || (i % 5), 2, i % 100
  FROM generate_series(1, 40000, 4) i;
SELECT count(*) FROM an;

-- a sample of 3,000 rows (statistics target 10): 100 of some 460 key ranges are read
SET default_statistics_target = 10;
CREATE FUNCTION an_check() RETURNS TABLE (reltuples_ok bool, family_ndistinct real,
    qualifier_ndistinct real, value_ndistinct_ok bool, family_estimate_ok bool,
    range_estimate_ok bool)
LANGUAGE plpgsql AS $$
DECLARE
    l text;
    est_b bigint;
    est_r bigint;
BEGIN
    ANALYZE an;
    EXECUTE 'EXPLAIN SELECT * FROM an WHERE family = ''b''' INTO l;
    est_b := substring(l FROM 'rows=(\d+)')::bigint;
    EXECUTE 'EXPLAIN SELECT * FROM an WHERE value < 10' INTO l;
    est_r := substring(l FROM 'rows=(\d+)')::bigint;
    RETURN QUERY SELECT
        (SELECT c.reltuples BETWEEN 120000 * 0.9 AND 120000 * 1.1 FROM pg_class c WHERE relname = 'an'),
        (SELECT n_distinct FROM pg_stats WHERE tablename = 'an' AND attname = 'family'),
        (SELECT n_distinct FROM pg_stats WHERE tablename = 'an' AND attname = 'qualifier'),
        (SELECT n_distinct BETWEEN 90 AND 100 FROM pg_stats WHERE tablename = 'an' AND attname = 'value'),
        est_b BETWEEN 40000 * 0.8 AND 40000 * 1.2,
        est_r BETWEEN 12000 * 0.7 AND 12000 * 1.3;
END $$;
-- several runs: each a new random sample
SELECT * FROM an_check();
SELECT * FROM an_check();
SELECT * FROM an_check();

-- a wide table over the same store: rows are rowkeys
CREATE FOREIGN TABLE an_wide (rowkey text COLLATE "C", a int OPTIONS (cell 'a:q0'),
    b jsonb OPTIONS (cell 'b:*')) SERVER wide OPTIONS (store 'an');
SELECT count(*) FROM an_wide;
ANALYZE an_wide;
SELECT reltuples BETWEEN 40000 * 0.85 AND 40000 * 1.15 AS wide_reltuples_ok
  FROM pg_class WHERE relname = 'an_wide';

-- a small store is read whole: exact
CREATE FOREIGN TABLE an_small (rowkey text, family text, value text) SERVER wide OPTIONS (families 'f');
INSERT INTO an_small SELECT 'k' || i, 'f', 'v' FROM generate_series(1, 500) i;
SELECT widecol_flush('an_small');
INSERT INTO an_small SELECT 'm' || i, 'f', 'v' FROM generate_series(1, 77) i;
ANALYZE an_small;
SELECT reltuples FROM pg_class WHERE relname = 'an_small';
-- an empty one too
TRUNCATE an_small;
ANALYZE an_small;
SELECT reltuples FROM pg_class WHERE relname = 'an_small';

RESET default_statistics_target;
DROP FUNCTION an_check();
DROP FOREIGN TABLE an_wide, an, an_small;
