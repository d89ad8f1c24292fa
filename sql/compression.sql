--
-- compression: zstd per family (and its level), values round trip through
-- every compression, compaction rewrites files in the family's current setting
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

-- reports the SQLSTATE and message of a statement that fails
CREATE FUNCTION wz_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- bad values: an unknown compression, levels out of range or not numbers
CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', compression 'brotli');  -- ERROR
CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', compression 'zstd', compression_level '20');  -- ERROR
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', compression 'zstd', compression_level '0')$$);
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', compression 'zstd', compression_level '-1')$$);
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', compression 'zstd', compression_level '3.5')$$);
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', compression 'zstd', compression_level 'high')$$);
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', "f.compression" 'zstd:3')$$);
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', "f.compression_level" '99')$$);
-- a level where no zstd family takes it
CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', compression_level '9');  -- ERROR
CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f,g', compression 'zstd', "g.compression" 'lz4', "g.compression_level" '9');  -- ERROR
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', compression 'zstd', "f.compression" 'none', compression_level '5')$$);
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', "f.compression" 'zstd', "f.compression_level" '5', compression_level '5')$$);
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', "h.compression_level" '5')$$);
-- good ones: names in any case, a table-level level, a family's own
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f', compression 'ZSTD')$$);
DROP FOREIGN TABLE z0;
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f,g', compression 'zstd', compression_level ' 19', "g.compression" 'lz4')$$);
DROP FOREIGN TABLE z0;
SELECT wz_try($$CREATE FOREIGN TABLE z0 (rowkey text) SERVER wide OPTIONS (families 'f,g', "g.compression" 'zstd', "g.compression_level" '1')$$);
-- ALTER is validated against the whole new list: a level cannot outlive zstd ...
ALTER FOREIGN TABLE z0 OPTIONS (SET "g.compression" 'lz4');  -- ERROR
-- ... unless dropped in the same statement
ALTER FOREIGN TABLE z0 OPTIONS (SET "g.compression" 'lz4', DROP "g.compression_level");
DROP FOREIGN TABLE z0;

-- HTML-like page bodies, deterministic: markup, repeated words, some hex
CREATE FUNCTION wz_page(i int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT '<!DOCTYPE html><html><head><title>Page ' || i || '</title>'
        || '<link rel="stylesheet" href="/static/site.css"></head><body><nav><a href="/">Home</a> '
        || '<a href="/news">News</a> <a href="/about">About</a></nav><main>'
        || string_agg(format('<article id="a%s"><h2>%s</h2><p class="summary">%s</p>'
                             '<a href="/item/%s">read more</a></article>',
                             i * 100 + j, md5((i * 100 + j)::text),
                             repeat(substr(md5(j::text), 1, 8) || ' ', 5 + j % 7),
                             (i * 37 + j) % 1000), E'\n')
        || '</main><footer>Copyright</footer></body></html>'
      FROM generate_series(1, 10 + i % 30) j
$$;

-- a zstd table at level 9 for pages, lz4 for meta, zstd at the table's level for
-- raw (binary values), next to an ordinary table with the same rows
CREATE FOREIGN TABLE zw (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                         ts bigint, value bytea)
    SERVER wide OPTIONS (families 'page,meta,raw', max_versions '0', compression 'zstd',
                         "page.compression_level" '9', "meta.compression" 'lz4');
CREATE TABLE zh (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                 ts bigint, value bytea);
CREATE FUNCTION wz_diff() RETURNS bigint LANGUAGE sql AS $$
    SELECT count(*) FROM ((SELECT * FROM zw EXCEPT ALL SELECT * FROM zh)
                          UNION ALL (SELECT * FROM zh EXCEPT ALL SELECT * FROM zw)) d
$$;
-- small writes (through the log), then a bulk write (straight into zstd files)
INSERT INTO zh
    SELECT 'com.example/' || lpad(i::text, 4, '0'), 'page', 'body', 1000 + i, convert_to(wz_page(i), 'UTF8')
      FROM generate_series(1, 40) i
    UNION ALL
    SELECT 'com.example/' || lpad(i::text, 4, '0'), 'meta', 'len', 1000 + i, convert_to(length(wz_page(i))::text, 'UTF8')
      FROM generate_series(1, 40) i
    UNION ALL
    SELECT 'com.example/' || lpad(i::text, 4, '0'), 'raw', 'bytes', 1000 + i,
           CASE WHEN i % 5 = 0 THEN ''::bytea ELSE decode(repeat(md5(i::text), i % 7), 'hex') || '\x00ff00'::bytea END
      FROM generate_series(1, 40) i;
INSERT INTO zw SELECT * FROM zh;
SELECT wz_diff() AS differing_rows, count(*) AS cells FROM zw;
SELECT widecol_flush('zw');
SELECT wz_diff() AS differing_rows_after_flush;
SET widecol_fdw.bulk_write_size = 0;
INSERT INTO zh
    SELECT 'org.example/' || lpad(i::text, 4, '0'), 'page', 'body', 2000 + i, convert_to(wz_page(i), 'UTF8')
      FROM generate_series(1, 200) i;
INSERT INTO zw SELECT * FROM zh WHERE rowkey LIKE 'org.%';
RESET widecol_fdw.bulk_write_size;
SELECT wz_diff() AS differing_rows_after_bulk_write;
-- a newer version of some pages and deletes, then a major compaction
UPDATE zh SET value = value || '\x0a'::bytea WHERE family = 'page' AND rowkey LIKE '%0' ;
UPDATE zw SET value = value || '\x0a'::bytea WHERE family = 'page' AND rowkey LIKE '%0' ;
DELETE FROM zh WHERE family = 'raw' AND rowkey LIKE '%3';
DELETE FROM zw WHERE family = 'raw' AND rowkey LIKE '%3';
SELECT widecol_compact('zw');
SELECT wz_diff() AS differing_rows_after_compaction;
-- point reads and a prefix scan decompress single blocks
SELECT rowkey, family, length(value) = length(convert_to(wz_page(17), 'UTF8')) AS same_length,
       value = convert_to(wz_page(17), 'UTF8') AS same_bytes
  FROM zw WHERE rowkey = 'org.example/0017' AND family = 'page';
SELECT count(*), sum(length(value)) = (SELECT sum(length(value)) FROM zh WHERE rowkey LIKE 'com.example/002%')
  FROM zw WHERE rowkey LIKE 'com.example/002%';
-- the page family is compressed several times over
SELECT family, count(*) AS files, sum(bytes_raw) > 4 * sum(bytes_on_disk) AS more_than_4x
  FROM widecol_stats('zw') GROUP BY family ORDER BY family;

-- the same pages with lz4, then the family switched to zstd: the next
-- compaction rewrites the files, markedly smaller, and back
CREATE FOREIGN TABLE zr (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                         ts bigint, value bytea)
    SERVER wide OPTIONS (families 'page', max_versions '0');
INSERT INTO zr SELECT * FROM zh WHERE family = 'page';
SELECT widecol_compact('zr');
SELECT sum(bytes_on_disk) AS lz4_bytes FROM widecol_stats('zr') \gset
ALTER FOREIGN TABLE zr OPTIONS (ADD compression 'zstd');
-- nothing rewritten yet: the files keep how they were written
SELECT sum(bytes_on_disk) = :lz4_bytes AS unchanged FROM widecol_stats('zr');
SELECT widecol_compact('zr');
SELECT sum(bytes_on_disk) AS zstd_bytes FROM widecol_stats('zr') \gset
SELECT :zstd_bytes < 0.7 * :lz4_bytes AS zstd_markedly_smaller;
SELECT count(*) FROM ((SELECT * FROM zr EXCEPT ALL SELECT * FROM zh WHERE family = 'page')
                      UNION ALL (SELECT * FROM zh WHERE family = 'page' EXCEPT ALL SELECT * FROM zr)) d;
-- a higher level is smaller still
ALTER FOREIGN TABLE zr OPTIONS (ADD compression_level '19');
SELECT widecol_compact('zr');
SELECT sum(bytes_on_disk) < :zstd_bytes AS level_19_smaller FROM widecol_stats('zr');
ALTER FOREIGN TABLE zr OPTIONS (DROP compression, DROP compression_level);
SELECT widecol_compact('zr');
SELECT sum(bytes_on_disk) = :lz4_bytes AS lz4_again FROM widecol_stats('zr');
SELECT count(*) FROM ((SELECT * FROM zr EXCEPT ALL SELECT * FROM zh WHERE family = 'page')
                      UNION ALL (SELECT * FROM zh WHERE family = 'page' EXCEPT ALL SELECT * FROM zr)) d;

-- a wide table whose family is zstd
CREATE FOREIGN TABLE zwide (rowkey text COLLATE "C", title text OPTIONS (cell 'doc:title'),
                            body text OPTIONS (cell 'doc:body'), tags jsonb OPTIONS (cell 'tag:*'))
    SERVER wide OPTIONS (families 'doc,tag', compression 'zstd', "tag.compression" 'none');
INSERT INTO zwide SELECT 'd' || i, 'Page ' || i, wz_page(i), jsonb_build_object('n', i, 'even', i % 2 = 0)
  FROM generate_series(1, 30) i;
SELECT widecol_flush('zwide');
SELECT rowkey, title, body = wz_page(7) AS body_ok, tags FROM zwide WHERE rowkey = 'd7';
SELECT count(*) FILTER (WHERE body = wz_page(substr(rowkey, 2)::int)) AS bodies_ok FROM zwide;

DROP FOREIGN TABLE zw, zr, zwide;
DROP TABLE zh;
DROP FUNCTION wz_diff();
DROP FUNCTION wz_page(int);
DROP FUNCTION wz_try(text);
