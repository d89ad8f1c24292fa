--
-- xact: writes follow the transaction
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;

CREATE FOREIGN TABLE x (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f');

-- rollback: nothing stays
BEGIN;
INSERT INTO x VALUES ('a', 'f', 'q', 1, 'rolled back');
SELECT rowkey, value FROM x;  -- own write, visible before commit
ROLLBACK;
SELECT count(*) FROM x;

-- commit
BEGIN;
INSERT INTO x VALUES ('a', 'f', 'q', 1, 'committed');
COMMIT;
SELECT rowkey, value FROM x;

-- own deletes, updates and truncates are seen before commit, and undone by rollback
BEGIN;
DELETE FROM x WHERE rowkey = 'a';
SELECT count(*) FROM x;
INSERT INTO x VALUES ('b', 'f', 'q', 1, 'new');
UPDATE x SET value = 'changed' WHERE rowkey = 'b';
SELECT rowkey, value FROM x;
TRUNCATE x;
SELECT count(*) FROM x;
INSERT INTO x VALUES ('c', 'f', 'q', 1, 'after truncate');
SELECT rowkey, value FROM x;
ROLLBACK;
SELECT rowkey, value FROM x;

-- savepoints
BEGIN;
INSERT INTO x VALUES ('s', 'f', '1', 1, 'before savepoint');
SAVEPOINT sp1;
INSERT INTO x VALUES ('s', 'f', '2', 1, 'rolled back to sp1');
SELECT qualifier, value FROM x WHERE rowkey = 's';
ROLLBACK TO sp1;
SELECT qualifier, value FROM x WHERE rowkey = 's';
INSERT INTO x VALUES ('s', 'f', '3', 1, 'after rollback to');
SAVEPOINT sp2;
INSERT INTO x VALUES ('s', 'f', '4', 1, 'released');
SAVEPOINT sp3;
DELETE FROM x WHERE rowkey = 's' AND qualifier = '1';
ROLLBACK TO sp3;
RELEASE sp2;
SAVEPOINT sp4;
DELETE FROM x WHERE rowkey = 's' AND qualifier = '3';
RELEASE sp4;
COMMIT;
SELECT qualifier, value FROM x WHERE rowkey = 's';

-- a failing statement leaves nothing of itself, the rest of the transaction stays
BEGIN;
INSERT INTO x VALUES ('e', 'f', '1', 1, 'kept');
SAVEPOINT sp;
INSERT INTO x VALUES ('e', 'f', '2', 1, 'lost'), ('e', 'nofamily', '3', 1, 'bad');  -- ERROR
ROLLBACK TO sp;
COMMIT;
SELECT qualifier, value FROM x WHERE rowkey = 'e';
-- the same in a PL/pgSQL exception block
DO $$
BEGIN
    INSERT INTO x VALUES ('p', 'f', '1', 1, 'kept');
    BEGIN
        INSERT INTO x VALUES ('p', 'f', '2', 1, 'lost');
        INSERT INTO x VALUES ('p', 'f', '3', 1, NULL);
    EXCEPTION WHEN not_null_violation THEN
        RAISE NOTICE 'caught %', SQLSTATE;
    END;
END $$;
SELECT qualifier, value FROM x WHERE rowkey = 'p';

-- a statement does not see its own writes; a cursor keeps its snapshot
INSERT INTO x SELECT rowkey || '2', family, qualifier, ts, value FROM x;
SELECT count(*) FROM x;
BEGIN;
DECLARE c CURSOR FOR SELECT rowkey FROM x WHERE rowkey >= 'z';
INSERT INTO x VALUES ('z1', 'f', 'q', 1, 'later');
FETCH ALL FROM c;
SELECT rowkey FROM x WHERE rowkey >= 'z';
COMMIT;

-- cursors across savepoints: one opened before a savepoint keeps reading after a
-- ROLLBACK TO; one opened inside a rolled back savepoint is closed with it
BEGIN;
INSERT INTO x VALUES ('cur1', 'f', 'q', 1, 'pending');
DECLARE c1 CURSOR FOR SELECT rowkey FROM x WHERE rowkey LIKE 'cur%';
FETCH 1 FROM c1;
SAVEPOINT s;
INSERT INTO x VALUES ('cur2', 'f', 'q', 1, 'rolled back');
DECLARE c2 CURSOR FOR SELECT rowkey FROM x WHERE rowkey LIKE 'cur%';
FETCH 1 FROM c2;
ROLLBACK TO s;
FETCH ALL FROM c1;
FETCH ALL FROM c2;  -- ERROR: gone with the savepoint
ROLLBACK;
-- a cursor WITH HOLD is read to its end at commit, with the pending writes
BEGIN;
INSERT INTO x VALUES ('hold', 'f', 'q', 1, 'held');
DECLARE h CURSOR WITH HOLD FOR SELECT rowkey, value FROM x WHERE rowkey = 'hold';
COMMIT;
FETCH ALL FROM h;
CLOSE h;

-- two sessions: the other one sees the writes at commit, and never after rollback
SELECT dblink_connect('other', 'dbname=' || current_database() || ' port=' || current_setting('port')
                      || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('other', 'BEGIN');
SELECT dblink_exec('other', $$INSERT INTO x VALUES ('other', 'f', 'q', 1, 'from the other session')$$);
SELECT * FROM dblink('other', $$SELECT count(*) FROM x WHERE rowkey = 'other'$$) AS t(n bigint);
SELECT count(*) FROM x WHERE rowkey = 'other';  -- not yet
SELECT dblink_exec('other', 'COMMIT');
SELECT rowkey, value FROM x WHERE rowkey = 'other';  -- now
SELECT dblink_exec('other', 'BEGIN');
SELECT dblink_exec('other', $$DELETE FROM x WHERE rowkey = 'other'$$);
SELECT dblink_exec('other', $$INSERT INTO x VALUES ('other2', 'f', 'q', 1, 'never')$$);
SELECT dblink_exec('other', 'ROLLBACK');
SELECT rowkey, value FROM x WHERE rowkey LIKE 'other%';
-- our writes reach the other session at our commit
BEGIN;
DELETE FROM x WHERE rowkey = 'other';
SELECT * FROM dblink('other', $$SELECT count(*) FROM x WHERE rowkey = 'other'$$) AS t(n bigint);
COMMIT;
SELECT * FROM dblink('other', $$SELECT count(*) FROM x WHERE rowkey = 'other'$$) AS t(n bigint);
-- both write the same table; a flush by one is seen by the other
SELECT dblink_exec('other', $$INSERT INTO x SELECT 'o' || i, 'f', 'q', 1, 'o' FROM generate_series(1, 100) i$$);
INSERT INTO x SELECT 'm' || i, 'f', 'q', 1, 'm' FROM generate_series(1, 100) i;
SELECT * FROM dblink('other', $$SELECT widecol_flush('x')$$) AS t(v text);
SELECT count(*) FROM x WHERE rowkey LIKE 'o%' OR rowkey LIKE 'm%';
SELECT * FROM dblink('other', $$SELECT count(*) FROM x WHERE rowkey LIKE 'o%' OR rowkey LIKE 'm%'$$) AS t(n bigint);

-- widecol_fdw.session_memory = 0: at the end of each transaction the stores it
-- did not use are closed, and opened again (their logs read again) on next use;
-- the other session's writes and ours read the same throughout
SET widecol_fdw.session_memory = 0;
CREATE FOREIGN TABLE x2 (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f');
INSERT INTO x2 SELECT 'y' || i, 'f', 'q', 1, 'y' FROM generate_series(1, 50) i;
SELECT count(*) FROM x WHERE rowkey LIKE 'm%';   -- x2 closed after this one
SELECT count(*) FROM x2;                          -- x closed after this one
SELECT dblink_exec('other', $$INSERT INTO x VALUES ('late', 'f', 'q', 1, 'after the close')$$);
SELECT rowkey, value FROM x WHERE rowkey = 'late';
-- a cursor WITH HOLD keeps its store open
BEGIN;
DECLARE hx CURSOR WITH HOLD FOR SELECT rowkey FROM x2 ORDER BY rowkey;
FETCH 2 FROM hx;
COMMIT;
SELECT count(*) FROM x WHERE rowkey = 'late';
FETCH 2 FROM hx;
CLOSE hx;
BEGIN;
INSERT INTO x2 VALUES ('y0', 'f', 'q', 1, 'y');
SELECT count(*) FROM x;
SELECT count(*) FROM x2;
COMMIT;
SELECT count(*) FROM x2;
RESET widecol_fdw.session_memory;
DROP FOREIGN TABLE x2;

-- Lock escalation (scan.c): row locks take room in the shared lock table, so a transaction
-- that has taken widecol_fdw.max_row_locks of them in a table locks all of its rows at once
-- (a page lock of the table, ExclusiveLock) when no other transaction holds row locks there,
-- and takes no more row locks
CREATE FOREIGN TABLE esc (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f');
INSERT INTO esc SELECT 'r' || lpad(i::text, 5, '0'), 'f', 'q', 1, 'v' FROM generate_series(1, 20000) i;
CREATE VIEW esc_locks AS
    SELECT locktype, mode, count(*) FROM pg_locks
     WHERE relation = 'esc'::regclass AND pid = pg_backend_pid() GROUP BY 1, 2 ORDER BY 1, 2;
SET widecol_fdw.max_row_locks = 10;
BEGIN;
UPDATE esc SET value = 'a' WHERE rowkey < 'r00006';
SELECT * FROM esc_locks;                         -- five row locks, the rows lock shared
-- another session updates another row meanwhile, and is done
SELECT dblink_exec('other', $$UPDATE esc SET value = 'other' WHERE rowkey = 'r20000'$$);
UPDATE esc SET value = 'b' WHERE rowkey < 'r00100';
SELECT * FROM esc_locks;                         -- escalated at the 11th row lock
-- now another session's UPDATE of any row waits for this transaction (lock_timeout here)
SELECT dblink_exec('other', 'SET lock_timeout = 200');
SELECT dblink_exec('other', $$UPDATE esc SET value = 'other' WHERE rowkey = 'r19999'$$, false);
-- plain reads and INSERT do not
SELECT dblink_exec('other', $$INSERT INTO esc VALUES ('s', 'f', 'q', 1, 'other')$$);
SELECT * FROM dblink('other', $$SELECT count(*) FROM esc WHERE value = 'other'$$) AS t(n bigint);
COMMIT;
SELECT dblink_exec('other', $$UPDATE esc SET value = 'other' WHERE rowkey = 'r19999'$$);
-- another transaction holds a row lock: no escalation (it would wait), row locks go on
SELECT dblink_exec('other', 'BEGIN');
SELECT dblink_exec('other', $$UPDATE esc SET value = 'other' WHERE rowkey = 'r20000'$$);
BEGIN;
UPDATE esc SET value = 'c' WHERE rowkey < 'r00031';
SELECT * FROM esc_locks;                         -- thirty row locks, no ExclusiveLock
SELECT dblink_exec('other', 'COMMIT');
UPDATE esc SET value = 'd' WHERE rowkey >= 'r00300' AND rowkey < 'r00600';
SELECT * FROM esc_locks;                         -- escalated once the other committed
COMMIT;
-- the limit counts the transaction's row locks in all tables (the lock table's slots are the
-- connection's): the table taking the lock past it escalates (and a table first locked in
-- past it, at its first row lock)
CREATE FOREIGN TABLE esc2 (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f');
INSERT INTO esc2 SELECT 'r' || lpad(i::text, 5, '0'), 'f', 'q', 1, 'v' FROM generate_series(1, 50) i;
BEGIN;
UPDATE esc SET value = 'f' WHERE rowkey < 'r00009';
UPDATE esc2 SET value = 'f' WHERE rowkey < 'r00009';
SELECT * FROM esc_locks;                         -- eight row locks: under the limit
SELECT locktype, mode, count(*) FROM pg_locks    -- past it over both at the third: escalated
 WHERE relation = 'esc2'::regclass AND pid = pg_backend_pid() GROUP BY 1, 2 ORDER BY 1, 2;
COMMIT;
DROP FOREIGN TABLE esc2;
SELECT dblink_exec('other', 'RESET lock_timeout');
RESET widecol_fdw.max_row_locks;
-- every row of the table in one transaction: with max_row_locks -1, an "out of shared
-- memory" for this test's lock table (max_locks_per_transaction 64)
BEGIN;
UPDATE esc SET value = 'e' WHERE rowkey >= 'r01000';
SELECT locktype, mode, count(*) > 1000 AS above_the_limit FROM pg_locks
 WHERE relation = 'esc'::regclass AND pid = pg_backend_pid() GROUP BY 1, 2 ORDER BY 1, 2;
DELETE FROM esc WHERE rowkey < 'r00500';
COMMIT;
SELECT value, count(*) FROM esc GROUP BY 1 ORDER BY 1;
DROP VIEW esc_locks;
DROP FOREIGN TABLE esc;

-- A locking scan that runs again under a statement that writes (a subquery FOR UPDATE under a
-- DELETE's nested loop) finds each row it locks as the statement found it, not as the
-- statement changed it since.  REPEATABLE READ and another session's commit make each row lock
-- read the row's newest version; when that read took in the statement's own writes, a row the
-- statement had deleted read as a concurrent change (40001), and under READ COMMITTED it was
-- skipped and the LIMIT took the next row (src/store.c, wcfdw_store_visible_batches)
CREATE FOREIGN TABLE rl (rowkey text COLLATE "C", n int OPTIONS (cell 'f:n'))
    SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE rlt (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f');
INSERT INTO rl SELECT 'k' || i, i FROM generate_series(1, 6) i;
INSERT INTO rlt SELECT 'k' || i, 'f', 'q', 1, i::text FROM generate_series(1, 6) i;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
EXPLAIN (COSTS OFF)
DELETE FROM rl WHERE rowkey >= 'a' AND rowkey < 'l'
   AND rowkey IN (SELECT rowkey FROM rl WHERE rowkey >= 'k2' ORDER BY rowkey LIMIT 2 FOR UPDATE);
BEGIN ISOLATION LEVEL REPEATABLE READ;
INSERT INTO rl VALUES ('a', 0);       -- the transaction's writes so far
SELECT dblink_exec('other', $$INSERT INTO rl VALUES ('z', 0)$$);
DELETE FROM rl WHERE rowkey >= 'a' AND rowkey < 'l'
   AND rowkey IN (SELECT rowkey FROM rl WHERE rowkey >= 'k2' ORDER BY rowkey LIMIT 2 FOR UPDATE)
RETURNING rowkey, n;
UPDATE rl SET n = n + 100 WHERE rowkey >= 'a' AND rowkey < 'l'
   AND rowkey IN (SELECT rowkey FROM rl WHERE rowkey >= 'k4' ORDER BY rowkey LIMIT 2 FOR UPDATE)
RETURNING rowkey, n;
SELECT rowkey, n FROM rl ORDER BY rowkey;
COMMIT;
SELECT rowkey, n FROM rl ORDER BY rowkey;
-- a tall table's row is a cell version
EXPLAIN (COSTS OFF)
DELETE FROM rlt WHERE rowkey >= 'a' AND rowkey < 'l'
   AND rowkey IN (SELECT rowkey FROM rlt WHERE rowkey >= 'k2' ORDER BY rowkey LIMIT 2 FOR UPDATE);
BEGIN ISOLATION LEVEL REPEATABLE READ;
INSERT INTO rlt VALUES ('a', 'f', 'q', 1, '0');
SELECT dblink_exec('other', $$INSERT INTO rlt VALUES ('z', 'f', 'q', 1, '0')$$);
DELETE FROM rlt WHERE rowkey >= 'a' AND rowkey < 'l'
   AND rowkey IN (SELECT rowkey FROM rlt WHERE rowkey >= 'k2' ORDER BY rowkey LIMIT 2 FOR UPDATE)
RETURNING rowkey, value;
COMMIT;
SELECT rowkey, value FROM rlt ORDER BY rowkey;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
DROP FOREIGN TABLE rl, rlt;
SELECT dblink_disconnect('other');

-- the writes of many statements share one pending batch (src/store.c): a cursor, and a
-- parameterized scan of a cursor opened again after later statements wrote, see only the
-- statements before them; a savepoint rolled back drops its writes; a statement does not see
-- what a function it calls writes between its rows (the same results as an ordinary table's)
CREATE FOREIGN TABLE sb (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f');
CREATE TABLE sb_keys (k text COLLATE "C");
INSERT INTO sb_keys VALUES ('s1'), ('s2'), ('s3'), ('s4');
CREATE FUNCTION sb_put(k text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO sb VALUES (k || 'f', 'f', 'q', 1, 'by the function');
    RETURN k;
END $$;
BEGIN;
INSERT INTO sb VALUES ('s1', 'f', 'q', 1, 'first');
DECLARE c CURSOR FOR SELECT rowkey, value FROM sb ORDER BY rowkey;
DECLARE n CURSOR FOR SELECT k, (SELECT value FROM sb WHERE rowkey = k) FROM sb_keys ORDER BY k;
FETCH 1 FROM n;
INSERT INTO sb VALUES ('s2', 'f', 'q', 1, 'second'), ('s3', 'f', 'q', 1, 'second');
UPDATE sb SET value = 'updated' WHERE rowkey = 's1';
FETCH ALL FROM c;   -- s1 first
FETCH ALL FROM n;   -- s2, s3, s4 with no value
SELECT rowkey, value FROM sb ORDER BY rowkey;
SAVEPOINT a;
INSERT INTO sb VALUES ('s4', 'f', 'q', 1, 'rolled back');
ROLLBACK TO a;
INSERT INTO sb SELECT sb_put(rowkey), family, qualifier, 2, 'outer' FROM sb;
SELECT rowkey, ts, value FROM sb ORDER BY rowkey, ts;
COMMIT;
SELECT rowkey, ts, value FROM sb ORDER BY rowkey, ts;
-- a released savepoint's writes join the batch before them (src/store.c,
-- wcfdw_pending_fold): a cursor opened inside it keeps its view, later writes included
BEGIN;
INSERT INTO sb VALUES ('s5', 'f', 'q', 1, 'before');
SAVEPOINT p;
INSERT INTO sb VALUES ('s6', 'f', 'q', 1, 'inside');
DECLARE d CURSOR FOR SELECT rowkey, value FROM sb WHERE rowkey IN ('s5', 's6', 's7') ORDER BY rowkey;
FETCH 1 FROM d;
RELEASE p;
INSERT INTO sb VALUES ('s7', 'f', 'q', 1, 'after');
UPDATE sb SET value = 'changed' WHERE rowkey = 's6';
FETCH ALL FROM d;   -- s6 inside, no s7
SELECT rowkey, value FROM sb WHERE rowkey IN ('s5', 's6', 's7') ORDER BY rowkey;
-- a loop of subtransactions, each writing and reading back, one rolled back
DO $$
DECLARE n int; total int := 0;
BEGIN
    FOR i IN 1..300 LOOP
        BEGIN
            INSERT INTO sb VALUES ('loop' || i, 'f', 'q', 1, 'v');
            SELECT count(*) INTO n FROM sb WHERE rowkey LIKE 'loop%';
            total := total + n;
            IF i = 150 THEN RAISE EXCEPTION 'undo %', i; END IF;
        EXCEPTION WHEN raise_exception THEN NULL;
        END;
    END LOOP;
    RAISE NOTICE 'read back % in all', total;
END $$;
SELECT count(*) FROM sb WHERE rowkey LIKE 'loop%';
COMMIT;
SELECT count(*) FROM sb WHERE rowkey LIKE 'loop%';
-- savepoints never released, one per statement (a client's autosave, pgjdbc's
-- autosave=always): the deeper levels write on into the transaction's batch after a mark
-- each (src/store.c); ROLLBACK TO rewinds it to the mark of that savepoint, also after the
-- rolled back levels read their own writes; the same statements on an ordinary table give
-- the same rows
CREATE TABLE sb_heap (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                      ts bigint, value text);
BEGIN;
INSERT INTO sb VALUES ('n0', 'f', 'q', 1, 'outer');
INSERT INTO sb_heap VALUES ('n0', 'f', 'q', 1, 'outer');
CREATE TEMP TABLE sb_reads (t text, i int, n bigint);
\set ECHO none
SELECT CASE WHEN t = 'sb' THEN format('SAVEPOINT a%s', i) END,
       format($q$INSERT INTO %I VALUES ('n%s', 'f', 'q', 1, 'level %s')$q$, t, i, i),
       format($q$UPDATE %I SET value = value || '+' WHERE rowkey = 'n%s'$q$, t, i / 2),
       format($q$INSERT INTO sb_reads SELECT %L, %s, count(*) FROM %I WHERE rowkey LIKE 'n%%'$q$, t, i, t)
FROM generate_series(1, 400) i, (VALUES ('sb'), ('sb_heap')) v(t) ORDER BY i, t \gexec
\set ECHO all
ROLLBACK TO a350;   -- levels 350 to 400: their rows, and their updates of n175 to n200
SELECT count(*), count(*) FILTER (WHERE value LIKE '%+') FROM sb WHERE rowkey LIKE 'n%';
INSERT INTO sb VALUES ('n999', 'f', 'q', 1, 'after the rollback');
INSERT INTO sb_heap VALUES ('n999', 'f', 'q', 1, 'after the rollback');
ROLLBACK TO a100;   -- and the write after it, at level 350
SAVEPOINT b;
DELETE FROM sb WHERE rowkey IN ('n1', 'n98');
DELETE FROM sb_heap WHERE rowkey IN ('n1', 'n98');
SELECT count(*) FROM sb WHERE rowkey LIKE 'n%';
RELEASE a99;        -- b's delete and a99's writes join level 98's
SAVEPOINT c;
UPDATE sb SET value = 'in c' WHERE rowkey = 'n2';
UPDATE sb_heap SET value = 'in c' WHERE rowkey = 'n2';
ROLLBACK TO a98;    -- a99 and b went with RELEASE: back to level 98's mark
SELECT (SELECT count(*) FROM sb WHERE rowkey LIKE 'n%') AS wide,
       (SELECT count(*) FROM sb_heap WHERE rowkey LIKE 'n%') AS ordinary;
COMMIT;
-- what each statement read: the same, before a rollback and after
SELECT count(*), sum(w.n), count(*) FILTER (WHERE w.n <> o.n) AS differing
FROM sb_reads w JOIN sb_reads o USING (i) WHERE w.t = 'sb' AND o.t = 'sb_heap';
SELECT count(*) AS rows_differing FROM (
    (SELECT rowkey, value FROM sb WHERE rowkey LIKE 'n%' EXCEPT ALL SELECT rowkey, value FROM sb_heap)
    UNION ALL
    (SELECT rowkey, value FROM sb_heap EXCEPT ALL SELECT rowkey, value FROM sb WHERE rowkey LIKE 'n%')) d;
SELECT count(*), min(rowkey), max(value) FROM sb WHERE rowkey LIKE 'n%';
-- nested PL/pgSQL blocks: each level writes, reads and calls the next in a block, which every
-- seventh level rolls back after the deeper ones (released into it) returned; then it writes
-- what it read, at the level around the block
CREATE FUNCTION sb_nest(t text, depth int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE n bigint := -1;
BEGIN
    IF depth > 60 THEN RETURN; END IF;
    BEGIN
        EXECUTE format($q$INSERT INTO %I VALUES ('m%s', 'f', 'q', 1, 'level %s')$q$, t, depth, depth);
        EXECUTE format($q$UPDATE %I SET value = value || '+' WHERE rowkey = 'm%s'$q$, t, depth / 3);
        EXECUTE format($q$SELECT count(*) FROM %I WHERE rowkey LIKE 'm%%'$q$, t) INTO n;
        PERFORM sb_nest(t, depth + 1);
        IF depth % 7 = 0 THEN RAISE EXCEPTION 'undo %', depth; END IF;
    EXCEPTION WHEN raise_exception THEN NULL;
    END;
    EXECUTE format($q$INSERT INTO %I SELECT 'ma%s', 'f', 'q', 1, %L || ' ' || count(*) FROM %I
                      WHERE rowkey LIKE 'm%%'$q$, t, depth, n, t);
END $$;
BEGIN;
SELECT sb_nest('sb', 1), sb_nest('sb_heap', 1);
SELECT count(*) AS rows_differing FROM (
    (SELECT rowkey, value FROM sb WHERE rowkey LIKE 'm%' EXCEPT ALL SELECT rowkey, value FROM sb_heap WHERE rowkey LIKE 'm%')
    UNION ALL
    (SELECT rowkey, value FROM sb_heap WHERE rowkey LIKE 'm%' EXCEPT ALL SELECT rowkey, value FROM sb WHERE rowkey LIKE 'm%')) d;
COMMIT;
SELECT rowkey, value FROM sb WHERE rowkey LIKE 'm%' ORDER BY rowkey;
DROP FUNCTION sb_nest(text, int);
DROP TABLE sb_heap;
DROP FUNCTION sb_put(text);
DROP TABLE sb_keys;
DROP FOREIGN TABLE sb;

DROP FOREIGN TABLE x;
