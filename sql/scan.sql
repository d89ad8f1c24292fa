--
-- scan: bigger stores, files and logs together, cursors, rescans, ANALYZE
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE big (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'a,b', max_versions '2');
INSERT INTO big SELECT 'k' || lpad(i::text, 6, '0'), 'a', 'q', 1, repeat('x', i % 100)
  FROM generate_series(1, 20000) i;
SELECT widecol_flush('big');
-- newer versions in the log, on top of the sorted files
INSERT INTO big SELECT 'k' || lpad(i::text, 6, '0'), 'a', 'q', 2, 'second'
  FROM generate_series(1, 20000, 10) i;
INSERT INTO big SELECT 'k' || lpad(i::text, 6, '0'), 'b', 'z', 5, 'bee'
  FROM generate_series(1, 20000, 1000) i;
SELECT count(*), count(DISTINCT rowkey), sum(length(value)) FROM big;
SELECT family, ts, count(*) FROM big GROUP BY 1, 2 ORDER BY 1, 2;
-- a third version pushes the first one out (max_versions 2)
INSERT INTO big VALUES ('k000001', 'a', 'q', 3, 'third');
SELECT ts, value FROM big WHERE rowkey = 'k000001';

-- the planner's estimate of a full scan is the store's cell count
CREATE FUNCTION wc_estimate(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    EXECUTE 'EXPLAIN ' || q INTO l;
    RETURN substring(l FROM 'rows=(\d+)')::bigint;
END $$;
SELECT wc_estimate('SELECT * FROM big');
SELECT wc_estimate('SELECT * FROM big WHERE rowkey = ''k000001''') < 10 AS point_estimate_small;
-- ANALYZE samples the store
ANALYZE big;
SELECT attname, n_distinct > 0 OR n_distinct < 0 AS has_stats FROM pg_stats
 WHERE tablename = 'big' ORDER BY attname;
SELECT reltuples FROM pg_class WHERE relname = 'big';

-- cursors
BEGIN;
DECLARE c CURSOR FOR SELECT rowkey, ts FROM big WHERE rowkey >= 'k019998';
FETCH 2 FROM c;
FETCH 10 FROM c;
CLOSE c;
DECLARE c2 SCROLL CURSOR FOR SELECT rowkey FROM big WHERE rowkey < 'k000004';
FETCH LAST FROM c2;
FETCH PRIOR FROM c2;
FETCH FIRST FROM c2;
COMMIT;

-- rescans: a correlated subquery on the family (the engine scan is reopened)
SELECT f, (SELECT count(*) FROM big WHERE family = x.f) FROM (VALUES ('a'), ('b'), ('c')) x(f);
-- and on the rowkey (the engine scan is re-seeked)
SELECT n, (SELECT max(ts) FROM big WHERE rowkey = 'k' || lpad(x.n::text, 6, '0'))
  FROM generate_series(1, 5) x(n);
-- a rescan of an uncorrelated subquery
SELECT count(*) FROM generate_series(1, 3) g WHERE g <= (SELECT count(*) FROM big WHERE rowkey = 'k000011');

-- big values (compressed), many qualifiers in one row
CREATE FOREIGN TABLE wide_row (rowkey text, qualifier text, value text) SERVER wide OPTIONS (families 'f');
INSERT INTO wide_row SELECT 'one', 'q' || lpad(i::text, 5, '0'), md5(i::text) FROM generate_series(1, 5000) i;
INSERT INTO wide_row VALUES ('two', 'big', repeat('abcdefgh', 200000));
SELECT widecol_flush('wide_row');
SELECT rowkey, count(*), sum(length(value)) FROM wide_row GROUP BY rowkey ORDER BY rowkey;
SELECT qualifier, value FROM wide_row WHERE rowkey = 'one' AND qualifier IN ('q00001', 'q05000', 'q99999');
SELECT md5(value) = md5(repeat('abcdefgh', 200000)) FROM wide_row WHERE rowkey = 'two';

-- a table with only a rowkey
CREATE FOREIGN TABLE only_keys (rowkey text) SERVER wide OPTIONS (families 'f');
INSERT INTO only_keys VALUES ('x'), ('y');
SELECT rowkey FROM only_keys;
SELECT count(*) FROM only_keys;

DROP FOREIGN TABLE big, wide_row, only_keys;
DROP FUNCTION wc_estimate(text);
