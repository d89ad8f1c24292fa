--
-- bulk: a transaction that writes at least widecol_fdw.bulk_write_size to a table
-- commits its cells as sorted files (engine/ingest.h); everything else stays the same
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE bk (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f,g', max_versions '2');
-- the library is loaded now (the validator ran), and with it the setting
SHOW widecol_fdw.bulk_write_size;
CREATE TABLE bk_heap (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                      ts bigint, value text);

-- 30,000 cells of about 160 bytes (4.7 MB): over the default 4MB, one bulk write;
-- rows arrive in rowkey order with each row's qualifiers out of order
INSERT INTO bk_heap
SELECT 'row' || lpad((i / 3)::text, 5, '0'), CASE WHEN i % 4 = 0 THEN 'g' ELSE 'f' END,
       'q' || (7 - i % 3), i % 5, repeat(chr(97 + i % 26), 150)
  FROM generate_series(0, 29999) i;
INSERT INTO bk SELECT * FROM bk_heap;
-- its files are there at once, before any flush: level 0, one per family
SELECT family, level, cells FROM widecol_stats('bk') ORDER BY family;
-- same cells as the ordinary table (max_versions 2 keeps both ts of each cell here)
SELECT count(*) FROM bk;
SELECT count(*) FROM ((SELECT * FROM bk EXCEPT ALL SELECT * FROM bk_heap)
                      UNION ALL (SELECT * FROM bk_heap EXCEPT ALL SELECT * FROM bk)) d;
-- in store order without a sort; a one-family read
EXPLAIN (COSTS OFF) SELECT * FROM bk WHERE rowkey >= 'row05000' ORDER BY rowkey LIMIT 3;
SELECT rowkey, family, qualifier, ts, left(value, 3) FROM bk WHERE rowkey >= 'row05000' ORDER BY rowkey LIMIT 3;
SELECT count(*) FROM bk WHERE family = 'g';

-- a small write goes through the log as before: no new file
INSERT INTO bk VALUES ('row00000', 'f', 'q7', 9, 'small');
SELECT count(*) AS files FROM widecol_stats('bk');

-- from here every write is a bulk write
SET widecol_fdw.bulk_write_size = 0;
-- ROLLBACK: nothing, and no file that a reader sees
BEGIN;
INSERT INTO bk VALUES ('zz', 'f', 'q', 1, 'rolled back');
SELECT count(*) FROM bk WHERE rowkey = 'zz';   -- the session sees its own write
ROLLBACK;
SELECT count(*) FROM bk WHERE rowkey = 'zz';
SELECT count(*) AS files FROM widecol_stats('bk');
-- savepoints: what was rolled back to is not written
BEGIN;
INSERT INTO bk VALUES ('sp', 'f', 'a', 1, 'kept');
SAVEPOINT s;
INSERT INTO bk VALUES ('sp', 'f', 'b', 1, 'dropped');
ROLLBACK TO SAVEPOINT s;
INSERT INTO bk VALUES ('sp', 'g', 'c', 1, 'kept too');
COMMIT;
SELECT * FROM bk WHERE rowkey = 'sp';
-- retention across bulk and log writes: newest 2 versions of a cell
INSERT INTO bk VALUES ('ver', 'f', 'q', 1, 'v1');
RESET widecol_fdw.bulk_write_size;
INSERT INTO bk VALUES ('ver', 'f', 'q', 2, 'v2');
SET widecol_fdw.bulk_write_size = 0;
INSERT INTO bk VALUES ('ver', 'f', 'q', 3, 'v3');
SELECT ts, value FROM bk WHERE rowkey = 'ver';
-- the same cell written again: the later write wins, also when it is a bulk write
INSERT INTO bk VALUES ('ver', 'f', 'q', 3, 'v3 again');
SELECT ts, value FROM bk WHERE rowkey = 'ver';
-- UPDATE and DELETE as bulk writes (their tombstones go into the files)
UPDATE bk SET value = 'updated' WHERE rowkey = 'row00001' AND family = 'f';
DELETE FROM bk WHERE rowkey = 'row00002';
SELECT rowkey, family, qualifier, ts, left(value, 7) FROM bk WHERE rowkey IN ('row00001', 'row00002');
-- a transaction that truncates: the truncate (and what came before it) in a log record, what
-- follows it a bulk write of the same transaction (a reload larger than a WAL record takes)
BEGIN;
TRUNCATE bk;
INSERT INTO bk SELECT 'r' || i, 'f', 'q', 1, 'v' || i FROM generate_series(1, 1000) i;
SELECT count(*) FROM bk;
COMMIT;
SELECT count(*), min(rowkey), max(rowkey) FROM bk;
SELECT family, cells FROM widecol_stats('bk') ORDER BY family;
BEGIN;
TRUNCATE bk;
INSERT INTO bk SELECT 'x' || i, 'f', 'q', 1, 'v' || i FROM generate_series(1, 1000) i;
ROLLBACK;
SELECT count(*), min(rowkey), max(rowkey) FROM bk;
BEGIN;
INSERT INTO bk VALUES ('gone', 'f', 'q', 1, 'before the truncate');
TRUNCATE bk;
INSERT INTO bk VALUES ('t', 'f', 'q', 1, 'after the truncate');
COMMIT;
SELECT * FROM bk;
-- flush and compaction see the bulk writes' files like any other
INSERT INTO bk SELECT 'b' || i, 'g', 'q', 1, 'v' || i FROM generate_series(1, 5) i;
SELECT widecol_flush('bk');
SELECT widecol_compact('bk');
SELECT family, level, cells FROM widecol_stats('bk') ORDER BY family;
SELECT count(*) FROM bk;

-- bad settings
SET widecol_fdw.bulk_write_size = -2;       -- ERROR
SET widecol_fdw.bulk_write_size = 'lots';   -- ERROR
SHOW widecol_fdw.bulk_write_size;

RESET widecol_fdw.bulk_write_size;
DROP FOREIGN TABLE bk;
DROP TABLE bk_heap;
