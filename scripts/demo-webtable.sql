-- scripts/demo-webtable.sql -- the webtable of the Bigtable paper, in widecol_fdw.
-- Run by scripts/demo.sh; works in any database where widecol_fdw is installed:
--   psql -v ON_ERROR_STOP=1 -f scripts/demo-webtable.sql
-- It drops and re-creates the tables it makes, webtable and sites.

\set ON_ERROR_STOP 1
\set QUIET on
\pset pager off
SET client_min_messages = warning;
DROP FOREIGN TABLE IF EXISTS webtable;
DROP TABLE IF EXISTS sites;
RESET client_min_messages;
\set QUIET off
\set ECHO queries

\echo
\echo '== 1. Set-up: the extension, a server, and a foreign table with three column families'
\echo 'A widecol table is the HBase/Bigtable model: a sorted map (rowkey, family, qualifier, ts) -> value.'
\echo 'Column families are declared up front and stored apart; qualifiers are free-form, one per cell.'
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE FOREIGN TABLE webtable (
    rowkey    text,      -- the reversed URL, so pages of one domain sort together
    family    text,      -- contents | anchor | people
    qualifier text,      -- the column within the family: html, the linking site, ...
    ts        bigint,    -- the version: milliseconds since 1970 (the paper's t3 .. t9 here)
    value     text
) SERVER wide OPTIONS (families 'contents,anchor,people');

\echo
\echo '== 2. Writing cells: one SQL row per cell version, as in Figure 1 of the paper'
INSERT INTO webtable (rowkey, family, qualifier, ts, value) VALUES
    ('com.cnn.www',      'contents', 'html',        3, '<html>CNN, crawled at t3</html>'),
    ('com.cnn.www',      'contents', 'html',        5, '<html>CNN, crawled at t5</html>'),
    ('com.cnn.www',      'contents', 'html',        6, '<html>CNN, crawled at t6</html>'),
    ('com.cnn.www',      'anchor',   'cnnsi.com',   9, 'CNN'),
    ('com.cnn.www',      'anchor',   'my.look.ca',  8, 'CNN.com'),
    ('com.example.www',  'contents', 'html',        5, '<html>Example</html>'),
    ('com.example.www',  'people',   'author',      5, 'John Doe'),
    ('com.cnn.money',    'contents', 'html',        7, '<html>CNN Money</html>'),
    ('com.cnn.money',    'anchor',   'com.cnn.www', 7, 'Markets'),
    ('org.wikipedia.en', 'contents', 'html',        4, '<html>Wikipedia</html>'),
    ('org.wikipedia.en', 'anchor',   'com.cnn.www', 9, 'Wikipedia');

\echo
\echo '== 3. A full scan: cells come back in the store''s order, rowkey, family, qualifier, then newest first'
SELECT * FROM webtable;

\echo
\echo '== 4. A Get: one row by its key (a point read, pushed down to the store)'
SELECT family, qualifier, ts, value FROM webtable WHERE rowkey = 'com.cnn.www';

\echo
\echo '== 5. A prefix scan: every page of cnn.com.  Reversed domains make this one contiguous key range.'
\echo 'This demo database uses the C collation (initdb --locale=C), where text sorts in byte order,'
\echo 'so the prefix becomes a key range in the store.  Under another collation write rowkey COLLATE "C".'
SELECT rowkey, family, qualifier, ts FROM webtable WHERE rowkey LIKE 'com.cnn%';

\echo
\echo '== 6. Time-range reads: the versions of com.cnn.www''s html between t4 and t6,'
\echo 'then a read at exactly t8, which finds nothing (no html was crawled at t8)'
SELECT qualifier, ts, value FROM webtable
 WHERE rowkey = 'com.cnn.www' AND family = 'contents' AND ts BETWEEN 4 AND 6;
SELECT qualifier, ts, value FROM webtable
 WHERE rowkey = 'com.cnn.www' AND family = 'contents' AND ts = 8;

\echo
\echo '== 7. The latest version of every cell (what HBase''s Get returns by default).'
\echo 'Rows already arrive in (rowkey, family, qualifier, ts DESC) order, so DISTINCT ON needs no sort.'
SELECT DISTINCT ON (rowkey, family, qualifier) rowkey, family, qualifier, ts, value
  FROM webtable
 ORDER BY rowkey, family, qualifier, ts DESC;

\echo
\echo '== 8. Time travel: every cell as it was at t5'
SELECT DISTINCT ON (rowkey, family, qualifier) rowkey, family, qualifier, ts, value
  FROM webtable
 WHERE ts <= 5
 ORDER BY rowkey, family, qualifier, ts DESC;

\echo
\echo '== 9. Versions are kept per cell up to max_versions (default 3): a 4th crawl of the CNN page'
\echo 'pushes the oldest one (t3) out; reads never return it again, before or after compaction.'
INSERT INTO webtable VALUES ('com.cnn.www', 'contents', 'html', 10, '<html>CNN, crawled at t10</html>');
SELECT qualifier, ts, value FROM webtable WHERE rowkey = 'com.cnn.www' AND family = 'contents';

\echo
\echo '== 10. Without a timestamp, a write is stamped with the current time in milliseconds'
INSERT INTO webtable (rowkey, family, qualifier, value)
VALUES ('com.example.www', 'anchor', 'com.cnn.www', 'an example link');
SELECT qualifier, ts, to_timestamp(ts / 1000.0) AS written_at, value
  FROM webtable WHERE rowkey = 'com.example.www' AND family = 'anchor';

\echo
\echo '== 11. Writes follow the transaction: a DELETE rolled back leaves the row as it was'
BEGIN;
DELETE FROM webtable WHERE rowkey = 'com.example.www';
SELECT count(*) AS cells_inside_the_transaction FROM webtable WHERE rowkey = 'com.example.www';
ROLLBACK;
SELECT count(*) AS cells_after_rollback FROM webtable WHERE rowkey = 'com.example.www';

\echo
\echo '== 12. A join with an ordinary PostgreSQL table: who links to each site, with what anchor text'
CREATE TABLE sites (rowkey text PRIMARY KEY, name text, owner text);
INSERT INTO sites VALUES ('com.cnn.www', 'CNN', 'Warner Bros. Discovery'),
                         ('com.example.www', 'Example', 'IANA'),
                         ('org.wikipedia.en', 'Wikipedia', 'Wikimedia Foundation');
ANALYZE sites;
ANALYZE webtable;
SELECT s.name, s.owner, w.qualifier AS linked_from, w.value AS anchor_text
  FROM sites s JOIN webtable w ON w.rowkey = s.rowkey
 WHERE w.family = 'anchor'
 ORDER BY s.name, w.qualifier;

\echo
\echo '== 13. EXPLAIN shows what was pushed down into the store: key ranges, families, time ranges'
EXPLAIN (COSTS OFF) SELECT * FROM webtable WHERE rowkey LIKE 'com.cnn%' AND family = 'anchor';
EXPLAIN (COSTS OFF) SELECT * FROM webtable
 WHERE rowkey IN ('com.cnn.www', 'org.wikipedia.en') AND family IN ('contents', 'anchor') AND ts >= 5;
EXPLAIN (COSTS OFF) SELECT DISTINCT ON (rowkey, family, qualifier) *
  FROM webtable ORDER BY rowkey, family, qualifier, ts DESC;
\echo 'In a join, the store can be probed once per outer row (a parameterized scan):'
EXPLAIN (COSTS OFF) SELECT s.name, w.qualifier, w.value
  FROM sites s JOIN webtable w ON w.rowkey = s.rowkey WHERE s.name = 'CNN';
\echo 'EXPLAIN ANALYZE adds what the engine did:'
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT * FROM webtable WHERE rowkey LIKE 'com.cnn%';

\echo
\echo '== 14. A wide table over the same store: one SQL row per page, a column per cell, as Apache'
\echo 'Phoenix and Hive show HBase tables.  A column holds the newest version of its cell; a jsonb'
\echo 'column a whole family.  The tall table above still shows every version.'
CREATE FOREIGN TABLE pages (
    rowkey  text,
    html    text  OPTIONS (cell 'contents:html'),
    author  text  OPTIONS (cell 'people:author'),
    anchors jsonb OPTIONS (cell 'anchor:*')
) SERVER wide OPTIONS (store 'webtable');
SELECT * FROM pages ORDER BY rowkey;
\echo 'An UPDATE writes the cells of the columns it sets (one new version); NULL deletes a cell:'
UPDATE pages SET author = 'Jane Roe' WHERE rowkey = 'com.cnn.www';
UPDATE pages SET author = NULL WHERE rowkey = 'com.example.www';
SELECT rowkey, author FROM pages WHERE rowkey IN ('com.cnn.www', 'com.example.www');
SELECT rowkey, family, qualifier, value FROM webtable WHERE family = 'people';

\echo
\echo '== 15. The store: writes go to a log and an in-memory table; a flush writes sorted files,'
\echo 'one per family; a major compaction merges them into one sorted run per family and drops'
\echo 'what retention hides (the t3 version of the CNN page is gone from the contents file).'
SELECT widecol_flush('webtable');
SELECT file, family, level, cells, bytes_on_disk, bytes_raw,
       convert_from(min_rowkey, 'UTF8') AS min_rowkey, convert_from(max_rowkey, 'UTF8') AS max_rowkey,
       min_ts, max_ts
  FROM widecol_stats('webtable');
SELECT widecol_compact('webtable');
SELECT file, family, level, cells, bytes_on_disk, bytes_raw,
       convert_from(min_rowkey, 'UTF8') AS min_rowkey, convert_from(max_rowkey, 'UTF8') AS max_rowkey,
       min_ts, max_ts
  FROM widecol_stats('webtable');
\echo 'The store of this table lives in the data directory:'
SELECT format('%s/base/%s/widecol_%s', current_setting('data_directory'), d.oid, 'webtable'::regclass::oid) AS store_directory
  FROM pg_database d WHERE d.datname = current_database() \gset
\echo :store_directory
