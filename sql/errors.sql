--
-- errors: bad input is an ERROR with a proper SQLSTATE, and nothing of the
-- statement is stored
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE er (
    rowkey text, family text, qualifier text, ts bigint, value text
) SERVER wide OPTIONS (families 'f,g');

CREATE FUNCTION wc_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- NULLs: 23502 not_null_violation
INSERT INTO er VALUES (NULL, 'f', 'q', 1, 'v');  -- ERROR
SELECT wc_try($$INSERT INTO er VALUES (NULL, 'f', 'q', 1, 'v')$$);
SELECT wc_try($$INSERT INTO er VALUES ('k', NULL, 'q', 1, 'v')$$);
SELECT wc_try($$INSERT INTO er VALUES ('k', 'f', NULL, 1, 'v')$$);
SELECT wc_try($$INSERT INTO er VALUES ('k', 'f', 'q', 1, NULL)$$);
SELECT wc_try($$INSERT INTO er VALUES ('k', 'f', 'q', NULL, 'v')$$);  -- a NULL ts is fine
-- an undeclared family: 22023 invalid_parameter_value, with the families in the hint
INSERT INTO er VALUES ('k', 'h', 'q', 1, 'v');  -- ERROR
SELECT wc_try($$INSERT INTO er VALUES ('k', 'h', 'q', 1, 'v')$$);
SELECT wc_try($$INSERT INTO er VALUES ('k', 'F', 'q', 1, 'v')$$);  -- names are case sensitive
-- an empty rowkey: 22023
INSERT INTO er VALUES ('', 'f', 'q', 1, 'v');  -- ERROR
SELECT wc_try($$INSERT INTO er VALUES ('', 'f', 'q', 1, 'v')$$);
-- sizes: 54000 program_limit_exceeded
INSERT INTO er VALUES (repeat('k', 65537), 'f', 'q', 1, 'v');  -- ERROR
SELECT wc_try($$INSERT INTO er VALUES (repeat('k', 65537), 'f', 'q', 1, 'v')$$);
SELECT wc_try($$INSERT INTO er VALUES (repeat('k', 65536), 'f', 'q', 1, 'v')$$);  -- the limit itself is fine
SELECT wc_try($$INSERT INTO er VALUES ('big', 'f', repeat('q', 1048577), 1, 'v')$$);
SELECT wc_try($$INSERT INTO er VALUES ('big', 'f', repeat('q', 1048576), 1, 'v')$$);
SELECT length(rowkey), length(qualifier) FROM er ORDER BY 1, 2;
DELETE FROM er;

-- one bad row: nothing of the statement is stored (also with COPY, also in batches)
SELECT wc_try($$INSERT INTO er SELECT 'k' || i, CASE WHEN i = 500 THEN 'x' ELSE 'f' END, 'q', i, 'v'
                FROM generate_series(1, 1000) i$$);
SELECT count(*) FROM er;
COPY er FROM STDIN;  -- ERROR
a	f	q	1	v
b	f	q	1	\N
\.
SELECT count(*) FROM er;
INSERT INTO er VALUES ('k', 'f', 'q', 1, 'v');
SELECT wc_try($$UPDATE er SET rowkey = NULL$$);
SELECT wc_try($$UPDATE er SET rowkey = ''$$);
SELECT wc_try($$UPDATE er SET family = 'x'$$);
SELECT * FROM er;

-- a timestamp that is not a finite time: 22008
CREATE FOREIGN TABLE ertz (rowkey text, ts timestamptz, value text) SERVER wide OPTIONS (families 'f');
SELECT wc_try($$INSERT INTO ertz VALUES ('k', '-infinity', 'v')$$);
-- the largest bigint is kept for the engine's tombstones: 22008
CREATE FOREIGN TABLE erms (rowkey text, ts bigint, value text) SERVER wide OPTIONS (families 'f');
SELECT wc_try($$INSERT INTO erms VALUES ('k', 9223372036854775807, 'v')$$);
-- a cell ts out of the range of timestamptz, read through a timestamptz column: 22008
INSERT INTO erms VALUES ('k', 9223372036854775806, 'far future');
ALTER FOREIGN TABLE erms ALTER COLUMN ts TYPE timestamptz;
SELECT * FROM erms;  -- ERROR
ALTER FOREIGN TABLE erms ALTER COLUMN ts TYPE bigint;
SELECT * FROM erms;

-- not a widecol table, not a table
SELECT wc_try($$SELECT widecol_flush('pg_class')$$);
CREATE TABLE plain (a int);
SELECT wc_try($$SELECT widecol_compact('plain')$$);
SELECT wc_try($$SELECT * FROM widecol_stats('plain')$$);
-- the functions need ownership (flush, compact) or SELECT (stats)
CREATE ROLE regress_wc_other;
SET ROLE regress_wc_other;
SELECT wc_try($$SELECT widecol_flush('er')$$);
SELECT wc_try($$SELECT count(*) FROM widecol_stats('er')$$);
SELECT wc_try($$SELECT count(*) FROM er$$);
RESET ROLE;
GRANT SELECT ON er TO regress_wc_other;
SET ROLE regress_wc_other;
SELECT wc_try($$SELECT count(*) FROM widecol_stats('er')$$);
SELECT wc_try($$SELECT count(*) FROM er$$);
SELECT wc_try($$INSERT INTO er VALUES ('k', 'f', 'q', 1, 'v')$$);
RESET ROLE;
REVOKE SELECT ON er FROM regress_wc_other;
DROP ROLE regress_wc_other;

-- an interrupted statement: 57014, nothing stored
SET statement_timeout = '200ms';
INSERT INTO er SELECT 'slow' || i, 'f', 'q', 1, 'v' FROM generate_series(1, 3) i, pg_sleep(1);  -- ERROR
RESET statement_timeout;
SELECT count(*) FROM er WHERE rowkey LIKE 'slow%';
-- a scan interrupted while open is released: its table's store can go at once
INSERT INTO er SELECT 'r' || i, 'f', 'q', 1, 'v' FROM generate_series(1, 100) i;
SELECT 'er'::regclass::oid AS er_oid \gset
SET statement_timeout = '100ms';
SELECT count(*) FROM er WHERE pg_sleep(0.01) IS NOT NULL;  -- ERROR
RESET statement_timeout;
DROP FOREIGN TABLE er;
SELECT count(*) FROM pg_ls_dir('base/' || (SELECT oid FROM pg_database WHERE datname = current_database())) d
 WHERE d = 'widecol_' || :er_oid;


-- options, checked by the validator: HV00J missing families, HV00D unknown name or a
-- per-family option of an undeclared family, 22023 bad values; nothing is created
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide$$);
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families 'f', colour 'red')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families 'f', "h.ttl" '1 day')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families 'f', max_versions '-1')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families 'f', max_versions 'many')$$);
-- only spaces: once read as 0 (keep every version); found by engine/fuzz/fuzz_options.c
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families 'f', max_versions '  ')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families 'f', ttl '1 month')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families 'f', ttl '-1 hour')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families 'f', compression 'snappy')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families 'f,f')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families 'f,,g')$$);
SELECT wc_try(format($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families %L)$$, repeat('x', 256)));
SELECT wc_try(format($$CREATE FOREIGN TABLE ero (rowkey text) SERVER wide OPTIONS (families %L)$$,
                     (SELECT string_agg('f' || i, ',') FROM generate_series(1, 65) i)));
SELECT count(*) FROM pg_class WHERE relname = 'ero';
-- ALTER is validated against the whole resulting list: families cannot be dropped
CREATE FOREIGN TABLE era (rowkey text, family text, value text) SERVER wide OPTIONS (families 'f,g', "g.ttl" '1 day');
SELECT wc_try($$ALTER FOREIGN TABLE era OPTIONS (DROP families)$$);
SELECT wc_try($$ALTER FOREIGN TABLE era OPTIONS (SET families 'f')$$);
SELECT ftoptions FROM pg_foreign_table WHERE ftrelid = 'era'::regclass;
-- a table without a family column writes to its only family: with several, 23502 (no family)
CREATE FOREIGN TABLE ernf (rowkey text, value text) SERVER wide OPTIONS (families 'f,g');
SELECT wc_try($$INSERT INTO ernf VALUES ('k', 'v')$$);
DROP FOREIGN TABLE ernf;
-- columns of types the store cannot key on, or with other names: refused at CREATE
SELECT wc_try($$CREATE FOREIGN TABLE ert (rowkey numeric, value text) SERVER wide OPTIONS (families 'f')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ert (rowkey text, value text, colour text) SERVER wide OPTIONS (families 'f')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ert (rowkey text, family int, value text) SERVER wide OPTIONS (families 'f')$$);
SELECT wc_try($$CREATE FOREIGN TABLE ert (value text) SERVER wide OPTIONS (families 'f')$$);
SELECT count(*) FROM pg_class WHERE relname = 'ert';
-- a huge qualifier in a bytea column too: 54000
CREATE FOREIGN TABLE erb (rowkey bytea, family text, qualifier bytea, value bytea) SERVER wide OPTIONS (families 'f');
SELECT wc_try($$INSERT INTO erb VALUES (decode(repeat('00', 65537), 'hex'), 'f', '\x00', '\x00')$$);
SELECT wc_try($$INSERT INTO erb VALUES ('\x00', 'f', decode(repeat('ab', 1048577), 'hex'), '\x00')$$);
SELECT wc_try($$INSERT INTO erb VALUES ('\x00', 'f', '\x00', NULL)$$);
SELECT count(*) FROM erb;
-- ON CONFLICT with a conflict target (a foreign table has no unique index to
-- match, so DO UPDATE neither): 42P10; a write to key columns the table lacks: 0A000
SELECT wc_try($$INSERT INTO era VALUES ('k', 'f', 'v') ON CONFLICT (rowkey) DO NOTHING$$);
SELECT wc_try($$INSERT INTO era VALUES ('k', 'f', 'v') ON CONFLICT (rowkey) DO UPDATE SET value = 'x'$$);
SELECT wc_try($$UPDATE era SET value = 'w'$$);
SELECT wc_try($$DELETE FROM era$$);
SELECT count(*) FROM era;
-- a write to a dropped table: 42P01, also through a statement prepared before the DROP
CREATE FOREIGN TABLE erd (rowkey text, family text, value text) SERVER wide OPTIONS (families 'f');
PREPARE erd_ins AS INSERT INTO erd VALUES ('k', 'f', 'v');
DROP FOREIGN TABLE erd;
EXECUTE erd_ins;  -- ERROR
SELECT wc_try($$INSERT INTO erd VALUES ('k', 'f', 'v')$$);
DEALLOCATE erd_ins;
-- the directory option: an absolute path (22023), and only a superuser may set it (42501)
SELECT wc_try($$CREATE SERVER erdir FOREIGN DATA WRAPPER widecol_fdw OPTIONS (directory 'relative/path')$$);
CREATE ROLE regress_wc_nosuper;
GRANT USAGE ON FOREIGN DATA WRAPPER widecol_fdw TO regress_wc_nosuper;
SET ROLE regress_wc_nosuper;
SELECT wc_try($$CREATE SERVER erdir FOREIGN DATA WRAPPER widecol_fdw OPTIONS (directory '/tmp/widecol-outside')$$);
RESET ROLE;
SELECT count(*) FROM pg_foreign_server WHERE srvname = 'erdir';
REVOKE USAGE ON FOREIGN DATA WRAPPER widecol_fdw FROM regress_wc_nosuper;
DROP ROLE regress_wc_nosuper;
DROP FOREIGN TABLE era, erb;

-- bytes that are not text in the database encoding, read by a text column (here an integer
-- rowkey's bytes through a text rowkey): PostgreSQL's error, naming the column and the table
CREATE FOREIGN TABLE erik (rowkey int, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f');
INSERT INTO erik VALUES (1, 'f', 'q', 1, 'v');
CREATE FOREIGN TABLE erikt (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (store 'erik');
SELECT * FROM erikt;
DROP FOREIGN TABLE erikt, erik;

DROP FOREIGN TABLE ertz, erms;
DROP TABLE plain;
DROP FUNCTION wc_try(text);
