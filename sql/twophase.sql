--
-- twophase: PREPARE TRANSACTION, COMMIT PREPARED, ROLLBACK PREPARED
--
-- Every transaction writes the same rows to a widecol table and to an ordinary
-- table; both must show the same at every step.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FUNCTION tp_try(sql text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE sql;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE FOREIGN TABLE tp (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f,g');
CREATE FOREIGN TABLE tp_unlogged (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f', logged 'false');
CREATE TABLE tp_heap (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                      ts bigint, value text);
CREATE FOREIGN TABLE tp_wide (rowkey text COLLATE "C", name text OPTIONS (cell 'f:name'),
                              n text OPTIONS (cell 'g:n'))
    SERVER wide OPTIONS (store 'tp');

-- the difference between the widecol table and the ordinary one: no rows when equal
CREATE VIEW tp_diff AS
    (SELECT 'widecol only' AS side, * FROM tp EXCEPT ALL SELECT 'widecol only', * FROM tp_heap)
    UNION ALL
    (SELECT 'heap only', * FROM tp_heap EXCEPT ALL SELECT 'heap only', * FROM tp);

INSERT INTO tp VALUES ('base', 'f', 'name', 1, 'before');
INSERT INTO tp_heap VALUES ('base', 'f', 'name', 1, 'before');

-- prepared: durable, not visible, not even to the session that prepared it
BEGIN;
INSERT INTO tp VALUES ('a', 'f', 'name', 1, 'alpha'), ('a', 'g', 'n', 1, '1');
INSERT INTO tp_heap VALUES ('a', 'f', 'name', 1, 'alpha'), ('a', 'g', 'n', 1, '1');
INSERT INTO tp_unlogged VALUES ('u', 'f', 'q', 1, 'unlogged');
PREPARE TRANSACTION 'tp_commit';
SELECT gid FROM pg_prepared_xacts ORDER BY gid;
SELECT * FROM tp ORDER BY rowkey, family;
SELECT count(*) FROM tp_unlogged;
SELECT * FROM tp_wide ORDER BY rowkey;

BEGIN;
INSERT INTO tp VALUES ('b', 'f', 'name', 1, 'beta');
INSERT INTO tp_heap VALUES ('b', 'f', 'name', 1, 'beta');
DELETE FROM tp WHERE rowkey = 'base';
DELETE FROM tp_heap WHERE rowkey = 'base';
PREPARE TRANSACTION 'tp_rollback';

-- a row a prepared transaction deleted is still locked by it
SET lock_timeout = '100ms';
SELECT tp_try($$UPDATE tp SET value = 'blocked' WHERE rowkey = 'base'$$);
SELECT tp_try($$UPDATE tp_heap SET value = 'blocked' WHERE rowkey = 'base'$$);
SELECT tp_try($$SELECT * FROM tp WHERE rowkey = 'base' FOR UPDATE NOWAIT$$);
RESET lock_timeout;

-- a flush cannot write a prepared transaction's record and says so at once;
-- compaction goes on
SELECT tp_try($$SELECT widecol_flush('tp')$$) ~ '^55000: could not flush foreign table "tp": a prepared transaction holds its log' AS flush_refused;
SELECT widecol_compact('tp');
-- writes go on meanwhile
INSERT INTO tp VALUES ('c', 'f', 'name', 1, 'gamma');
INSERT INTO tp_heap VALUES ('c', 'f', 'name', 1, 'gamma');
SELECT * FROM tp_diff;

COMMIT PREPARED 'tp_commit';
ROLLBACK PREPARED 'tp_rollback';
SELECT * FROM tp ORDER BY rowkey, family;
SELECT * FROM tp_diff;
SELECT * FROM tp_unlogged;
SELECT * FROM tp_wide ORDER BY rowkey;
SELECT widecol_flush('tp');
SELECT widecol_flush('tp_unlogged');
SELECT * FROM tp_diff;

-- a wide table's INSERT, UPDATE and DELETE in a prepared transaction, against
-- an ordinary table with the same rows
CREATE TABLE tp_wide_heap AS SELECT * FROM tp_wide;
BEGIN;
UPDATE tp_wide SET n = '2' WHERE rowkey = 'a';
UPDATE tp_wide_heap SET n = '2' WHERE rowkey = 'a';
INSERT INTO tp_wide VALUES ('d', 'delta', '4');
INSERT INTO tp_wide_heap VALUES ('d', 'delta', '4');
DELETE FROM tp_wide WHERE rowkey = 'c';
DELETE FROM tp_wide_heap WHERE rowkey = 'c';
PREPARE TRANSACTION 'tp_wide';
SELECT * FROM tp_wide ORDER BY rowkey;
COMMIT PREPARED 'tp_wide';
SELECT * FROM tp_wide ORDER BY rowkey;
(SELECT * FROM tp_wide EXCEPT SELECT * FROM tp_wide_heap)
UNION ALL (SELECT * FROM tp_wide_heap EXCEPT SELECT * FROM tp_wide);

-- a subtransaction rolled back before PREPARE leaves nothing
BEGIN;
INSERT INTO tp VALUES ('e', 'f', 'name', 1, 'kept');
SAVEPOINT s;
INSERT INTO tp VALUES ('e', 'f', 'name', 2, 'gone');
ROLLBACK TO SAVEPOINT s;
PREPARE TRANSACTION 'tp_sub';
COMMIT PREPARED 'tp_sub';
SELECT * FROM tp WHERE rowkey = 'e';

-- a table created in a prepared transaction has no store until its first
-- write, so that PREPARE is fine; one that also wrote to it, or dropped a
-- widecol table, is refused (the store directory would have to be removed by
-- COMMIT or ROLLBACK PREPARED, where no code of ours runs)
BEGIN;
CREATE FOREIGN TABLE tp_new (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f');
PREPARE TRANSACTION 'tp_create';
SELECT count(*) FROM pg_class WHERE relname = 'tp_new';
COMMIT PREPARED 'tp_create';
INSERT INTO tp_new VALUES ('n', 'f', 'q', 1, 'new');
SELECT * FROM tp_new;
BEGIN;
CREATE FOREIGN TABLE tp_new2 (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f');
INSERT INTO tp_new2 VALUES ('n', 'f', 'q', 1, 'new');
PREPARE TRANSACTION 'tp_create2';
SELECT count(*) FROM pg_class WHERE relname = 'tp_new2';
BEGIN;
DROP FOREIGN TABLE tp_unlogged;
PREPARE TRANSACTION 'tp_drop';
SELECT count(*) FROM tp_unlogged;

-- nothing prepared is left behind
SELECT gid FROM pg_prepared_xacts;
DROP VIEW tp_diff;
DROP FOREIGN TABLE tp_wide, tp, tp_unlogged, tp_new;
DROP TABLE tp_heap, tp_wide_heap;
DROP FUNCTION tp_try(text);
