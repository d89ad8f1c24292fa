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

DROP FOREIGN TABLE ertz, erms;
DROP TABLE plain;
DROP FUNCTION wc_try(text);
