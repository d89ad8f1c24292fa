--
-- options: the validator, per-family settings, the directory server option
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

-- reports the SQLSTATE and message of a statement that fails
CREATE FUNCTION wc_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- families is required
CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide;  -- ERROR
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide$$);
-- unknown options, with the valid ones in the hint
CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', colour 'blue');  -- ERROR
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', colour 'blue')$$);
CREATE SERVER s2 FOREIGN DATA WRAPPER widecol_fdw OPTIONS (host 'x');  -- ERROR
CREATE FOREIGN TABLE o1 (rowkey text OPTIONS (x 'y')) SERVER wide OPTIONS (families 'f');  -- ERROR
CREATE USER MAPPING FOR CURRENT_USER SERVER wide OPTIONS (user 'x');  -- ERROR
ALTER FOREIGN DATA WRAPPER widecol_fdw OPTIONS (x 'y');  -- ERROR
-- bad values
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families '')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'a,,b')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'a,b,a')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', max_versions '-1')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', max_versions 'many')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', ttl 'soon')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', ttl '-1 day')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', ttl '1 month')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', compression 'brotli')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', "g.ttl" '1 day')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', "f.colour" 'red')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', "f.max_versions" '0x')$$);
CREATE FOREIGN TABLE o1 (rowkey text) SERVER wide OPTIONS (families 'f', "g.ttl" '1 day');  -- ERROR
SELECT wc_try($$CREATE SERVER s2 FOREIGN DATA WRAPPER widecol_fdw OPTIONS (directory 'relative/path')$$);
-- good ones (family names are trimmed)
CREATE FOREIGN TABLE o1 (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families ' a , b,c ', max_versions '2', ttl '700 days', compression 'none',
                         "a.max_versions" '1', "b.ttl" '1 hour', "c.compression" 'lz4', "c.max_versions" '0');
-- ALTER is validated against the whole new option list
ALTER FOREIGN TABLE o1 OPTIONS (DROP families);  -- ERROR
ALTER FOREIGN TABLE o1 OPTIONS (SET families 'b,c');  -- ERROR: a.max_versions needs family a
ALTER FOREIGN TABLE o1 OPTIONS (ADD "b.compression" 'none');

-- retention per family: a keeps 1 version, b keeps 2 (table default) for 1 hour,
-- c keeps all; all of them for 700 days (table default)
SELECT (extract(epoch FROM now()) * 1000)::bigint AS now_ms \gset
INSERT INTO o1 SELECT 'r', f, 'q', :now_ms - 7200000 - t, f || t  -- two hours ago
  FROM unnest(ARRAY['a', 'b', 'c']) f, generate_series(1, 4) t;
INSERT INTO o1 VALUES ('r', 'c', 'old', :now_ms - 701 * 86400000::bigint, 'too old');
SELECT family, value FROM o1;
INSERT INTO o1 SELECT 'r', 'b', 'q', :now_ms - 1000 * s, 'recent' || s
  FROM generate_series(1, 3) s;
SELECT family, value FROM o1 WHERE family = 'b';  -- the newest 2 of the recent ones
-- options changes take effect at once: a keeps 3 now, b has no ttl
ALTER FOREIGN TABLE o1 OPTIONS (SET "a.max_versions" '3', DROP "b.ttl", DROP ttl);
SELECT family, value FROM o1;
SELECT family, count(*) FROM o1 GROUP BY family ORDER BY family;
-- a family removed from the list is invisible; put back, it is there again
ALTER FOREIGN TABLE o1 OPTIONS (DROP "a.max_versions", SET families 'b,c');
SELECT family, count(*) FROM o1 GROUP BY family ORDER BY family;
ALTER FOREIGN TABLE o1 OPTIONS (SET families 'a,b,c');
SELECT family, count(*) FROM o1 GROUP BY family ORDER BY family;

-- columns are matched by name; rowkey is required; types are checked, when
-- the table is defined or altered
CREATE FOREIGN TABLE o2 (k text, value text) SERVER wide OPTIONS (families 'f');  -- ERROR
CREATE FOREIGN TABLE o2 (rowkey text, family text, extra int) SERVER wide OPTIONS (families 'f');  -- ERROR
CREATE FOREIGN TABLE o2 (rowkey numeric) SERVER wide OPTIONS (families 'f');  -- ERROR
CREATE FOREIGN TABLE o2 (rowkey text, ts int) SERVER wide OPTIONS (families 'f');  -- ERROR
CREATE FOREIGN TABLE o2 (rowkey text, family bytea) SERVER wide OPTIONS (families 'f');  -- ERROR
SELECT wc_try($$CREATE FOREIGN TABLE o2 (rowkey text, value text, extra int) SERVER wide OPTIONS (families 'f')$$);
SELECT wc_try($$CREATE FOREIGN TABLE o2 (rowkey numeric) SERVER wide OPTIONS (families 'f')$$);
CREATE FOREIGN TABLE o2 (rowkey text, value text) SERVER wide OPTIONS (families 'f');
ALTER FOREIGN TABLE o2 ADD COLUMN extra int;  -- ERROR
ALTER FOREIGN TABLE o2 RENAME COLUMN value TO val;  -- ERROR
ALTER FOREIGN TABLE o2 DROP COLUMN rowkey;  -- ERROR
ALTER FOREIGN TABLE o2 ALTER COLUMN value TYPE jsonb;  -- any type is fine for value
ALTER FOREIGN TABLE o2 ADD COLUMN ts timestamptz, ADD COLUMN qualifier bytea;
DROP FOREIGN TABLE o2;
-- rowkey and columns that map no cell yet, as pg_dump's output defines a wide table (CREATE,
-- then ALTER COLUMN ... OPTIONS): a WARNING, and the table is refused at its first use
CREATE FOREIGN TABLE o2 (rowkey text, extra int) SERVER wide OPTIONS (families 'f');
SELECT wc_try($$SELECT * FROM o2$$);
ALTER FOREIGN TABLE o2 RENAME COLUMN extra TO other;  -- ERROR: not a command pg_dump defines columns with
ALTER FOREIGN TABLE o2 ALTER COLUMN extra OPTIONS (cell 'f:extra');
INSERT INTO o2 VALUES ('k', 1) RETURNING *;
DROP FOREIGN TABLE o2;

-- only a superuser may set the directory of stores
SELECT current_setting('data_directory') || '/widecol_regress' AS altdir \gset
CREATE ROLE regress_wc_user;
GRANT USAGE ON FOREIGN DATA WRAPPER widecol_fdw TO regress_wc_user;
SET ROLE regress_wc_user;
SELECT wc_try(format('CREATE SERVER s3 FOREIGN DATA WRAPPER widecol_fdw OPTIONS (directory %L)', :'altdir'));
CREATE SERVER s3 FOREIGN DATA WRAPPER widecol_fdw;  -- fine without it
ALTER SERVER s3 OPTIONS (ADD directory :'altdir');  -- ERROR
DROP SERVER s3;
RESET ROLE;
REVOKE USAGE ON FOREIGN DATA WRAPPER widecol_fdw FROM regress_wc_user;
DROP ROLE regress_wc_user;

-- a superuser may: stores go to <directory>/<dboid>_<reloid>
CREATE SERVER s3 FOREIGN DATA WRAPPER widecol_fdw OPTIONS (directory :'altdir');
CREATE FOREIGN TABLE o3 (rowkey text, value text) SERVER s3 OPTIONS (families 'f');
INSERT INTO o3 VALUES ('k', 'v');
SELECT * FROM o3;
SELECT (SELECT oid FROM pg_database WHERE datname = current_database()) || '_' || 'o3'::regclass::oid AS o3dir \gset
SELECT count(*) FROM pg_ls_dir('widecol_regress') d WHERE d = :'o3dir';
DROP FOREIGN TABLE o3;
SELECT count(*) FROM pg_ls_dir('widecol_regress') d WHERE d = :'o3dir';
DROP SERVER s3;

-- logged: a boolean; true (the default) writes every change into the WAL
SELECT wc_try($$CREATE FOREIGN TABLE o4 (rowkey text) SERVER wide OPTIONS (families 'f', logged 'maybe')$$);
CREATE FOREIGN TABLE o4 (rowkey text, value text) SERVER wide OPTIONS (families 'f', logged 'off');
CREATE FOREIGN TABLE o5 (rowkey text, value text) SERVER wide OPTIONS (families 'f', logged 'true');
SELECT pg_current_wal_insert_lsn() AS before \gset
INSERT INTO o5 SELECT 'k' || i, repeat('x', 1000) FROM generate_series(1, 100) i;
-- 100 kB of values: the commit's log record is in the WAL
SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'before') > 100000 AS in_the_wal;
SELECT pg_current_wal_insert_lsn() AS before \gset
INSERT INTO o4 SELECT 'k' || i, repeat('x', 1000) FROM generate_series(1, 100) i;
SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), :'before') < 50000 AS not_in_the_wal;
SELECT count(*), sum(length(value)) FROM o4;
SELECT count(*), sum(length(value)) FROM o5;
ALTER FOREIGN TABLE o4 OPTIONS (SET logged 'yes');
SELECT wc_try($$ALTER FOREIGN TABLE o4 OPTIONS (SET logged '')$$);
INSERT INTO o4 VALUES ('after', 'alter');
SELECT count(*) FROM o4;
DROP FOREIGN TABLE o4, o5;

DROP FOREIGN TABLE o1;
DROP FUNCTION wc_try(text);
