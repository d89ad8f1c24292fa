--
-- wide_direct: UPDATE of a wide table by rowkey, with SET expressions that
-- read nothing of the row, runs inside the scan node and writes the cells it
-- sets without reading the row's (direct modification, src/direct.c).  Every
-- case runs against an ordinary table with the same rows too, and the two
-- must agree (rows and counts).  Concurrency: specs/iso_direct_update.spec.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE du (
    rowkey text COLLATE "C",
    name text OPTIONS (cell 'info:name'),
    score int OPTIONS (cell 'info:score'),
    tags jsonb OPTIONS (cell 'tags:*')
) SERVER wide OPTIONS (families 'info,tags,other');
CREATE TABLE du_heap (rowkey text COLLATE "C", name text, score int, tags jsonb);

-- rows in one table and not the other (none expected), and the row counts
CREATE FUNCTION du_diff(OUT side text, OUT rowkey text, OUT name text, OUT score int, OUT tags jsonb)
RETURNS SETOF record LANGUAGE sql AS $$
    (SELECT 'widecol only', * FROM du EXCEPT ALL SELECT 'widecol only', * FROM du_heap)
    UNION ALL
    (SELECT 'heap only', * FROM du_heap EXCEPT ALL SELECT 'heap only', * FROM du)
$$;
CREATE FUNCTION du_counts(OUT widecol bigint, OUT heap bigint) LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM du), (SELECT count(*) FROM du_heap)
$$;
-- UPDATE <table> SET <set> WHERE <cond> on both tables: the row counts each reports.  The
-- ordinary table's row disappears where widecol's has no cell left (every column NULL).
CREATE FUNCTION du_update(sets text, cond text, OUT widecol bigint, OUT heap bigint) LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'UPDATE du SET ' || sets || ' WHERE ' || cond;
    GET DIAGNOSTICS widecol = ROW_COUNT;
    EXECUTE 'UPDATE du_heap SET ' || sets || ' WHERE ' || cond;
    GET DIAGNOSTICS heap = ROW_COUNT;
    DELETE FROM du_heap WHERE name IS NULL AND score IS NULL AND tags IS NULL;
END $$;

INSERT INTO du SELECT 'r' || lpad(i::text, 2, '0'), 'n' || i, i * 10,
                      CASE WHEN i % 3 = 0 THEN jsonb_build_object('t' || i, 'x') END
  FROM generate_series(1, 12) i;
INSERT INTO du_heap SELECT * FROM du;
SELECT widecol_flush('du');
SELECT * FROM du_counts();

-- the plans: direct for rowkey = / IN / = ANY, constants, parameters, functions
EXPLAIN (COSTS OFF) UPDATE du SET name = 'x' WHERE rowkey = 'r01';
EXPLAIN (COSTS OFF) UPDATE du SET name = 'x', score = 1 WHERE rowkey IN ('r01', 'r02');
EXPLAIN (COSTS OFF) UPDATE du SET score = length(md5('a')) WHERE rowkey = ANY (ARRAY['r01', 'r02']);
EXPLAIN (COSTS OFF) UPDATE du SET tags = '{"a": "b"}' WHERE rowkey = 'r01';
-- and the ordinary path for anything else: a SET that reads the row, another
-- condition, a sub-select, RETURNING, a new rowkey, no condition on the rowkey
EXPLAIN (COSTS OFF) UPDATE du SET score = score + 1 WHERE rowkey = 'r01';
EXPLAIN (COSTS OFF) UPDATE du SET name = 'x' WHERE rowkey = 'r01' AND score > 5;
EXPLAIN (COSTS OFF) UPDATE du SET name = (SELECT 'x') WHERE rowkey = 'r01';
EXPLAIN (COSTS OFF) UPDATE du SET name = 'x' WHERE rowkey = 'r01' RETURNING *;
EXPLAIN (COSTS OFF) UPDATE du SET rowkey = 'r99' WHERE rowkey = 'r01';
EXPLAIN (COSTS OFF) UPDATE du SET name = 'x' WHERE rowkey > 'r10';
EXPLAIN (COSTS OFF) UPDATE du SET name = 'x' FROM du_heap h WHERE du.rowkey = h.rowkey AND h.rowkey = 'r01';

-- what it did
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
  UPDATE du SET name = 'analyzed' WHERE rowkey IN ('r01', 'r02', 'none');
UPDATE du_heap SET name = 'analyzed' WHERE rowkey IN ('r01', 'r02', 'none');
SELECT * FROM du_diff();

-- the same rows and counts as the ordinary table
SELECT * FROM du_update($$name = 'one'$$, $$rowkey = 'r03'$$);
SELECT * FROM du_update($$score = 7, name = upper('seven')$$, $$rowkey IN ('r04', 'r05', 'r04', 'nope')$$);
SELECT * FROM du_update($$score = NULL$$, $$rowkey = ANY (ARRAY['r06', 'r07'])$$);
SELECT * FROM du_update($$tags = '{"k": 1, "m": "two"}'$$, $$rowkey = 'r06'$$);
SELECT * FROM du_update($$tags = NULL$$, $$rowkey = 'r09'$$);
SELECT * FROM du_update($$name = 'ghost'$$, $$rowkey = 'r00'$$);
SELECT * FROM du_update($$name = 'nothing'$$, $$rowkey = ANY (ARRAY[]::text[])$$);
SELECT * FROM du_update($$name = 'null key'$$, $$rowkey = NULL$$);
SELECT * FROM du_diff();
SELECT * FROM du_counts();
-- every column NULL: the row is gone (no mapped cell left), as the ordinary path does
SELECT * FROM du_update($$name = NULL, score = NULL, tags = NULL$$, $$rowkey = 'r08'$$);
SELECT * FROM du WHERE rowkey = 'r08';
SELECT * FROM du_counts();
-- a row that only has a cell no column maps is not there
INSERT INTO du (rowkey, name) VALUES ('r20', 'x');
UPDATE du SET name = NULL WHERE rowkey = 'r20';
SELECT * FROM du_update($$name = 'back'$$, $$rowkey = 'r20'$$);
SELECT * FROM du_diff();

-- a prepared statement, on its generic plan too
PREPARE du_set(text, text) AS UPDATE du SET name = $2 WHERE rowkey = $1;
PREPARE du_heap_set(text, text) AS UPDATE du_heap SET name = $2 WHERE rowkey = $1;
SELECT set_config('plan_cache_mode', 'force_generic_plan', false) IS NOT NULL AS generic;
EXPLAIN (COSTS OFF) EXECUTE du_set('r10', 'p');
EXECUTE du_set('r10', 'prepared');
EXECUTE du_heap_set('r10', 'prepared');
EXECUTE du_set('r10', 'again');
EXECUTE du_heap_set('r10', 'again');
RESET plan_cache_mode;
SELECT * FROM du_diff();

-- through a view of a rowkey range (the range and the rowkeys intersect), or with a prefix
CREATE VIEW du_v AS SELECT * FROM du WHERE rowkey >= 'r05' AND rowkey < 'r10';
CREATE VIEW du_heap_v AS SELECT * FROM du_heap WHERE rowkey >= 'r05' AND rowkey < 'r10';
EXPLAIN (COSTS OFF) UPDATE du_v SET score = 55 WHERE rowkey IN ('r04', 'r05');
UPDATE du_v SET score = 55 WHERE rowkey IN ('r04', 'r05');
UPDATE du_heap_v SET score = 55 WHERE rowkey IN ('r04', 'r05');
EXPLAIN (COSTS OFF) UPDATE du SET score = 56 WHERE rowkey = 'r05' AND starts_with(rowkey, 'r0');
SELECT * FROM du_update($$score = 56$$, $$rowkey IN ('r05', 'r11') AND starts_with(rowkey, 'r0')$$);
-- LIKE keeps the ordinary path (its prefix is only part of the condition)
EXPLAIN (COSTS OFF) UPDATE du SET score = 57 WHERE rowkey = 'r05' AND rowkey LIKE 'r0%5';
SELECT * FROM du_diff();
DROP VIEW du_v;
DROP VIEW du_heap_v;

-- in a transaction: its own rows, its savepoints, its rollback
BEGIN;
INSERT INTO du VALUES ('r30', 'mine', 1, NULL);
INSERT INTO du_heap VALUES ('r30', 'mine', 1, NULL);
SELECT * FROM du_update($$score = 2$$, $$rowkey = 'r30'$$);
SAVEPOINT s;
SELECT * FROM du_update($$score = 3, name = 'inner'$$, $$rowkey IN ('r30', 'r11')$$);
ROLLBACK TO s;
SELECT * FROM du_update($$score = 4$$, $$rowkey = 'r11'$$);
SELECT * FROM du_diff();
COMMIT;
SELECT * FROM du WHERE rowkey IN ('r11', 'r30') ORDER BY rowkey;
BEGIN;
UPDATE du SET name = 'rolled back' WHERE rowkey = 'r12';
ROLLBACK;
SELECT * FROM du_diff();

-- bad input: nothing stored
UPDATE du SET tags = '[1, 2]' WHERE rowkey = 'r12';
UPDATE du SET name = 'a', tags = '"scalar"' WHERE rowkey IN ('r11', 'r12');
UPDATE du SET score = 1 / 0 WHERE rowkey = 'r12';
UPDATE du SET name = 'long', tags = jsonb_build_object(repeat('k', 1048577), 1) WHERE rowkey = 'r12';
SELECT * FROM du_diff();

-- a row whose only cells no column maps (another qualifier of a mapped family, an
-- unmapped family; written through a tall table over the store) is not a row: nothing
-- updated, whichever cell comes first, as for a rowkey with no cells
CREATE FOREIGN TABLE du_cells (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value bytea)
  SERVER wide OPTIONS (store 'du');
INSERT INTO du_cells VALUES ('r40', 'info', 'aaa', 1, 'x'), ('r40', 'other', 'q', 1, 'y'),
                            ('r41', 'info', 'zzz', 1, 'x');
SELECT * FROM du_update($$score = 40$$, $$rowkey IN ('r40', 'r41', 'r42')$$);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM du_update($$score = 41$$, $$rowkey IN ('r40', 'r41')$$);
COMMIT;
SELECT rowkey, family, qualifier FROM du_cells WHERE rowkey >= 'r40' ORDER BY 1, 2, 3;
SELECT * FROM du_diff();
DROP FOREIGN TABLE du_cells;

-- a table with a trigger keeps the ordinary path (PostgreSQL fires it per row)
CREATE FUNCTION du_trig() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.name := NEW.name || ' (triggered)';
    RETURN NEW;
END $$;
CREATE TRIGGER du_trig BEFORE UPDATE ON du FOR EACH ROW EXECUTE FUNCTION du_trig();
EXPLAIN (COSTS OFF) UPDATE du SET name = 'x' WHERE rowkey = 'r01';
UPDATE du SET name = 'x' WHERE rowkey = 'r01';
SELECT name FROM du WHERE rowkey = 'r01';
DROP TRIGGER du_trig ON du;

DROP FUNCTION du_trig();
DROP FUNCTION du_update(text, text);
DROP FUNCTION du_counts();
DROP FUNCTION du_diff();
DROP TABLE du_heap;
DROP FOREIGN TABLE du;

-- a row deleted and written again many times (sysbench's oltp_read_write: DELETE
-- and INSERT of one id, UPDATEs of its columns, each transaction committed): a
-- read steps over the row's tombstones and masked versions in a few steps, from
-- the memtable and from the flushed file, and finds what an ordinary table has
CREATE FOREIGN TABLE dr (rowkey int, k int OPTIONS (cell 'f:k'), c text OPTIONS (cell 'f:c'))
  SERVER wide OPTIONS (families 'f', max_versions '1');
CREATE TABLE dr_heap (rowkey int PRIMARY KEY, k int, c text);
INSERT INTO dr SELECT g, g, 'c' || g FROM generate_series(1, 10) g;
INSERT INTO dr_heap SELECT g, g, 'c' || g FROM generate_series(1, 10) g;
CREATE PROCEDURE dr_churn(n int) LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..n LOOP
        UPDATE dr SET k = k + 1 WHERE rowkey = 5;
        UPDATE dr_heap SET k = k + 1 WHERE rowkey = 5;
        DELETE FROM dr WHERE rowkey IN (5, 6);
        DELETE FROM dr_heap WHERE rowkey IN (5, 6);
        INSERT INTO dr VALUES (5, i, 'again ' || i), (6, -i, 'six ' || i);
        INSERT INTO dr_heap VALUES (5, i, 'again ' || i), (6, -i, 'six ' || i);
        UPDATE dr SET c = c || '!' WHERE rowkey = 6;
        UPDATE dr_heap SET c = c || '!' WHERE rowkey = 6;
        COMMIT;
    END LOOP;
END $$;
CALL dr_churn(300);
CREATE FUNCTION dr_scanned(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l ~ 'cells scanned=' THEN
            RETURN substring(l FROM 'cells scanned=(\d+)')::int;
        END IF;
    END LOOP;
    RETURN NULL;
END $$;
SELECT * FROM dr WHERE rowkey BETWEEN 4 AND 7 EXCEPT SELECT * FROM dr_heap;
SELECT * FROM dr_heap WHERE rowkey BETWEEN 4 AND 7 EXCEPT SELECT * FROM dr;
SELECT * FROM dr WHERE rowkey = 6;
-- 300 rounds leave some 3,000 entries of rows 5 and 6; a read takes a few dozen
SELECT dr_scanned('SELECT * FROM dr WHERE rowkey = 5') < 30 AS point_read_steps_little,
       dr_scanned('SELECT * FROM dr WHERE rowkey BETWEEN 4 AND 7') < 60 AS range_steps_little;
SELECT widecol_flush('dr');
SELECT sum(cells) < 30 AS flush_keeps_little FROM widecol_stats('dr');
SELECT dr_scanned('SELECT * FROM dr WHERE rowkey = 5') < 30 AS point_read_steps_little,
       dr_scanned('SELECT * FROM dr WHERE rowkey BETWEEN 4 AND 7') < 60 AS range_steps_little;
SELECT count(*) FROM (SELECT * FROM dr EXCEPT SELECT * FROM dr_heap) d;
SELECT * FROM dr WHERE rowkey = 5;
DROP PROCEDURE dr_churn(int);
DROP FUNCTION dr_scanned(text);
DROP TABLE dr_heap;
DROP FOREIGN TABLE dr;
