--
-- functions: widecol_flush, widecol_compact, widecol_stats
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE fn (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'a,b', max_versions '2', "b.compression" 'none');

CREATE FUNCTION wc_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        -- file counts are shown; blocks, cells and seeks depend on the block size
        IF l ~ 'Store:' THEN l := regexp_replace(l, '(blocks read|cells scanned|seeks)=\d+', '\1=N', 'g'); END IF;
        RETURN NEXT l;
    END LOOP;
END $$;

-- nothing on disk yet but the log: no sorted files
SELECT count(*) FROM widecol_stats('fn');
INSERT INTO fn SELECT 'r' || lpad(i::text, 4, '0'), 'a', 'q', 1, repeat('v', 100) FROM generate_series(1, 1000) i;
INSERT INTO fn SELECT 'r' || lpad(i::text, 4, '0'), 'b', 'q', 1, repeat('v', 100) FROM generate_series(1, 1000, 2) i;
SELECT widecol_flush('fn');
-- one file per family, with its key and time range
SELECT family, level, cells, bytes_on_disk > 0 AS on_disk, bytes_raw > 0 AS raw,
       convert_from(min_rowkey, 'UTF8') AS min_rowkey, convert_from(max_rowkey, 'UTF8') AS max_rowkey,
       min_ts, max_ts
  FROM widecol_stats('fn') ORDER BY family, file;
-- lz4 makes repetitive values much smaller; b is not compressed
SELECT (SELECT bytes_on_disk::float8 / bytes_raw FROM widecol_stats('fn') WHERE family = 'a') <
       (SELECT bytes_on_disk::float8 / bytes_raw FROM widecol_stats('fn') WHERE family = 'b') / 2
       AS lz4_smaller;
-- a flush with nothing new writes nothing
SELECT widecol_flush('fn');
SELECT count(*) FROM widecol_stats('fn');

-- more versions and deletes, flushed to a second file per family
INSERT INTO fn SELECT 'r' || lpad(i::text, 4, '0'), 'a', 'q', 2, 'second' FROM generate_series(1, 1000) i;
INSERT INTO fn SELECT 'r' || lpad(i::text, 4, '0'), 'a', 'q', 3, 'third' FROM generate_series(1, 10) i;
DELETE FROM fn WHERE family = 'b' AND rowkey < 'r0100';
SELECT widecol_flush('fn');
SELECT family, level, cells, min_ts, max_ts FROM widecol_stats('fn') ORDER BY family, file;
SELECT family, count(*), min(ts), max(ts) FROM fn GROUP BY family ORDER BY family;
-- a time range newer than a file skips it; a key range outside a file skips it
SELECT wc_explain($$SELECT count(*) FROM fn WHERE family = 'a' AND ts >= 3$$);
SELECT wc_explain($$SELECT count(*) FROM fn WHERE rowkey > 'r2'$$);
SELECT wc_explain($$SELECT count(*) FROM fn WHERE rowkey = 'r0002' AND family = 'b'$$);

-- compaction: one file per family, retention applied, tombstones dropped; a keeps
-- 2000 of its 2010 versions; b keeps its 50 version tombstones (a deleted version
-- still holds its place among the newest max_versions) and drops what they mask
SELECT widecol_compact('fn');
SELECT family, level, cells, min_ts, max_ts FROM widecol_stats('fn') ORDER BY family, file;
SELECT family, count(*), min(ts), max(ts) FROM fn GROUP BY family ORDER BY family;
-- the same answers before and after, for some reads
SELECT ts, value FROM fn WHERE rowkey = 'r0005';
SELECT count(*) FROM fn WHERE rowkey >= 'r0500' AND rowkey < 'r0600';
-- compacting twice changes nothing
SELECT widecol_compact('fn');
SELECT family, level, cells FROM widecol_stats('fn') ORDER BY family, file;

-- after a TRUNCATE and a compaction nothing is left
TRUNCATE fn;
SELECT widecol_flush('fn');
SELECT widecol_compact('fn');
SELECT count(*) FROM fn;
SELECT coalesce(sum(cells), 0) FROM widecol_stats('fn');

-- the functions in a transaction do not see uncommitted writes
BEGIN;
INSERT INTO fn VALUES ('pending', 'a', 'q', 1, 'x');
SELECT widecol_flush('fn');
SELECT coalesce(sum(cells), 0) FROM widecol_stats('fn');
COMMIT;
SELECT widecol_flush('fn');
SELECT sum(cells) FROM widecol_stats('fn');
SELECT rowkey FROM fn;

-- a dropped table's OID, or one that never was: 42P01 (undefined_table)
SELECT 'fn'::regclass::oid AS fn_oid \gset
DROP FOREIGN TABLE fn;
CREATE FUNCTION wc_sqlstate(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END $$;
SELECT wc_sqlstate(format('SELECT widecol_flush(%s)', :fn_oid)) AS flush_dropped,
       wc_sqlstate('SELECT widecol_compact(0)') AS compact_0,
       wc_sqlstate('SELECT * FROM widecol_stats(4294967295::oid::regclass)') AS stats_none;
DROP FUNCTION wc_sqlstate(text);
DROP FUNCTION wc_explain(text);
