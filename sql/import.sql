--
-- import: IMPORT FOREIGN SCHEMA makes tables of the stores copied under a
-- server's directory (directories under the data directory; paths not shown)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

-- the source: a server with a directory, a table with data in two of three families
DO $$ BEGIN
    EXECUTE format('CREATE SERVER imp_src FOREIGN DATA WRAPPER widecol_fdw OPTIONS (directory %L)',
                   current_setting('data_directory') || '/wc_import_src');
    EXECUTE format('CREATE SERVER imp_dst FOREIGN DATA WRAPPER widecol_fdw OPTIONS (directory %L)',
                   current_setting('data_directory') || '/wc_import_dst');
END $$;
CREATE FOREIGN TABLE imp_web (rowkey text COLLATE "C", family text COLLATE "C",
    qualifier text COLLATE "C", ts bigint, value text)
    SERVER imp_src OPTIONS (families 'contents,anchor,people', max_versions '0');
INSERT INTO imp_web SELECT 'com.site' || lpad(i::text, 3, '0'), f, 'q' || (i % 3), t, 'v' || i || f || t
  FROM generate_series(1, 300) i, unnest(ARRAY['contents', 'anchor']) f, generate_series(1, 4) t;
CREATE TABLE imp_heap AS SELECT * FROM imp_web;

-- copy: cp -r of the store into the destination's directory under a new name
CREATE FUNCTION imp_copy(src regclass, name text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    from_dir text := format('%s/wc_import_src/%s_%s', current_setting('data_directory'),
                            (SELECT oid FROM pg_database WHERE datname = current_database()), src::oid);
    to_dir text := format('%s/wc_import_dst/%s', current_setting('data_directory'), name);
BEGIN
    -- the program reads its input first: one that ends before the row is written
    -- makes COPY fail with a broken pipe (seen under valgrind's slower backend)
    EXECUTE format('COPY (SELECT 1) TO PROGRAM %L',
                   format('cat >/dev/null && mkdir -p "$(dirname %s)" && rm -rf %s && cp -r %s %s',
                          quote_literal(to_dir), quote_literal(to_dir), quote_literal(from_dir),
                          quote_literal(to_dir)));
END $$;
CREATE FUNCTION imp_exists(name text) RETURNS bool LANGUAGE sql AS $$
    SELECT name IN (SELECT pg_ls_dir(current_setting('data_directory') || '/wc_import_dst'))
$$;
CREATE SCHEMA imported;

-- writes still in the store's log: refused (their transaction IDs are this cluster's)
SELECT imp_copy('imp_web', 'unflushed');
IMPORT FOREIGN SCHEMA anything LIMIT TO (unflushed) FROM SERVER imp_dst INTO imported;  -- ERROR

-- flushed: imported, named after the directory, with the families of its files
SELECT widecol_flush('imp_web');
SELECT imp_copy('imp_web', 'webtable');
IMPORT FOREIGN SCHEMA anything EXCEPT (unflushed) FROM SERVER imp_dst INTO imported;
SELECT c.relname, ft.ftoptions FROM pg_foreign_table ft JOIN pg_class c ON c.oid = ft.ftrelid
 WHERE c.relnamespace = 'imported'::regnamespace ORDER BY 1;
SELECT attname, format_type(atttypid, atttypmod), attcollation::regcollation
  FROM pg_attribute WHERE attrelid = 'imported.webtable'::regclass AND attnum > 0 ORDER BY attnum;
-- the same rows as the source
SELECT count(*) FROM imported.webtable;
SELECT count(*) FROM (
    (SELECT rowkey, family, qualifier, ts, convert_from(value, 'UTF8') FROM imported.webtable
     EXCEPT ALL SELECT * FROM imp_heap)
    UNION ALL
    (SELECT * FROM imp_heap
     EXCEPT ALL SELECT rowkey, family, qualifier, ts, convert_from(value, 'UTF8') FROM imported.webtable)) d;
EXPLAIN (COSTS OFF) SELECT * FROM imported.webtable WHERE rowkey LIKE 'com.site01%' AND family = 'anchor';
SELECT count(*) FROM imported.webtable WHERE rowkey LIKE 'com.site01%' AND family = 'anchor';

-- the imported table is an ordinary widecol table from now on: options, writes, flush
-- (the family without data was not in the files: added back by hand)
ALTER FOREIGN TABLE imported.webtable OPTIONS (SET families 'anchor,contents,people', SET max_versions '3');
SELECT count(*) FROM imported.webtable;
INSERT INTO imported.webtable VALUES ('com.new', 'people', 'p', 1, 'x'::bytea);
SELECT widecol_flush('imported.webtable');
SELECT family, sum(cells) FROM widecol_stats('imported.webtable') GROUP BY 1 ORDER BY 1;
-- the source is untouched
SELECT count(*) FROM imp_web WHERE rowkey = 'com.new';

-- a store already shown by a table is not imported again; LIMIT TO names directories
IMPORT FOREIGN SCHEMA anything LIMIT TO (webtable) FROM SERVER imp_dst INTO imported;
SELECT imp_copy('imp_web', 'second copy');
IMPORT FOREIGN SCHEMA anything LIMIT TO ("second copy") FROM SERVER imp_dst INTO imported;
SELECT count(*) FROM imported."second copy";
-- stores named <database oid>_<oid> (a table of a database of this cluster) are left out
SELECT imp_copy('imp_web', (SELECT oid FROM pg_database WHERE datname = current_database()) || '_1');
IMPORT FOREIGN SCHEMA anything EXCEPT (unflushed) FROM SERVER imp_dst INTO imported;
SELECT count(*) FROM pg_class WHERE relnamespace = 'imported'::regnamespace;
-- an IMPORT rolled back leaves the copied store where it was
SELECT imp_copy('imp_web', 'third');
BEGIN;
IMPORT FOREIGN SCHEMA anything LIMIT TO (third) FROM SERVER imp_dst INTO imported;
SELECT count(*) FROM imported.third;
ROLLBACK;
SELECT imp_exists('third');
-- DROP of an imported table removes its store, as for any table
IMPORT FOREIGN SCHEMA anything LIMIT TO (third) FROM SERVER imp_dst INTO imported;
DROP FOREIGN TABLE imported.third;
SELECT imp_exists('third');

-- errors
IMPORT FOREIGN SCHEMA anything FROM SERVER wide INTO imported;  -- ERROR: no directory
CREATE FOREIGN TABLE bad (rowkey text) SERVER imp_dst OPTIONS (families 'f', store_directory '../x');  -- ERROR
CREATE FOREIGN TABLE bad (rowkey text) SERVER wide OPTIONS (families 'f', store_directory 'x');
SELECT * FROM bad;  -- ERROR: needs the server's directory
DROP FOREIGN TABLE bad;
CREATE ROLE imp_user;
GRANT USAGE ON FOREIGN SERVER imp_dst TO imp_user;
GRANT CREATE ON SCHEMA imported TO imp_user;
SET ROLE imp_user;
IMPORT FOREIGN SCHEMA anything FROM SERVER imp_dst INTO imported;  -- ERROR: superuser
RESET ROLE;

DROP SCHEMA imported CASCADE;
DROP FOREIGN TABLE imp_web;
DROP TABLE imp_heap;
DROP FUNCTION imp_copy(regclass, text), imp_exists(text);
SELECT count(*) FROM pg_ls_dir(current_setting('data_directory') || '/wc_import_dst')
 WHERE pg_ls_dir NOT IN ('unflushed') AND pg_ls_dir NOT LIKE '%\_1';
DO $$ BEGIN
    EXECUTE format('COPY (SELECT 1) TO PROGRAM %L', format('cat >/dev/null && rm -rf %s %s',
        quote_literal(current_setting('data_directory') || '/wc_import_dst'),
        quote_literal(current_setting('data_directory') || '/wc_import_src')));
END $$;
REVOKE ALL ON FOREIGN SERVER imp_dst FROM imp_user;
DROP SERVER imp_src, imp_dst;
DROP ROLE imp_user;
