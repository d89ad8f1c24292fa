--
-- snapshot: what a widecol table shows follows PostgreSQL's snapshots, and
-- writers lock rows (doc/SQL.md, "Transactions").  An ordinary table written
-- in the same statements shows what is right.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;

CREATE FOREIGN TABLE snap (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f', max_versions '1');
CREATE TABLE snap_heap (rowkey text COLLATE "C", value text);
INSERT INTO snap VALUES ('a', 'f', 'q', 1, 'old'), ('c', 'f', 'q', 1, 'gone later');
INSERT INTO snap_heap VALUES ('a', 'old'), ('c', 'gone later');
CREATE VIEW snap_both AS
    SELECT rowkey, w.value AS widecol, h.value AS ordinary
    FROM snap w FULL JOIN snap_heap h USING (rowkey);

-- a REPEATABLE READ transaction whose first statement read another table
SELECT dblink_connect('rr', 'dbname=' || current_database() || ' port=' || current_setting('port')
                      || ' host=' || split_part(current_setting('unix_socket_directories'), ',', 1));
SELECT dblink_exec('rr', 'BEGIN ISOLATION LEVEL REPEATABLE READ');
SELECT * FROM dblink('rr', 'SELECT count(*) FROM pg_database WHERE false') AS t(n bigint);

-- other transactions commit an update, an insert and a delete
UPDATE snap SET value = 'new' WHERE rowkey = 'a';
UPDATE snap_heap SET value = 'new' WHERE rowkey = 'a';
BEGIN;
INSERT INTO snap VALUES ('b', 'f', 'q', 1, 'inserted');
INSERT INTO snap_heap VALUES ('b', 'inserted');
DELETE FROM snap WHERE rowkey = 'c';
DELETE FROM snap_heap WHERE rowkey = 'c';
COMMIT;

-- the old snapshot sees none of it, in both tables, through a flush and a
-- compaction (which keep the versions it reads) ...
SELECT * FROM dblink('rr', 'SELECT * FROM snap_both ORDER BY 1') AS t(rowkey text, widecol text, ordinary text);
SELECT widecol_flush('snap');
SELECT widecol_compact('snap');
SELECT * FROM dblink('rr', 'SELECT * FROM snap_both ORDER BY 1') AS t(rowkey text, widecol text, ordinary text);
-- ... while a new statement sees all of it
SELECT * FROM snap_both ORDER BY 1;
SELECT dblink_exec('rr', 'COMMIT');
SELECT * FROM dblink('rr', 'SELECT * FROM snap_both ORDER BY 1') AS t(rowkey text, widecol text, ordinary text);

-- an exported snapshot, imported by another session (as pg_dump's workers do)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT dblink_exec('rr', 'BEGIN ISOLATION LEVEL REPEATABLE READ');
SELECT dblink_exec('rr', 'SET TRANSACTION SNAPSHOT ' || quote_literal(pg_export_snapshot()));
UPDATE snap SET value = 'after export' WHERE rowkey = 'b';
UPDATE snap_heap SET value = 'after export' WHERE rowkey = 'b';
SELECT * FROM dblink('rr', 'SELECT * FROM snap_both ORDER BY 1') AS t(rowkey text, widecol text, ordinary text);
SELECT dblink_exec('rr', 'COMMIT');
ROLLBACK;

-- a cursor keeps the snapshot it was opened with
BEGIN;
DECLARE c CURSOR FOR SELECT * FROM snap_both ORDER BY 1;
SELECT dblink_exec('rr', 'UPDATE snap SET value = ''newer'' WHERE rowkey = ''a''');
SELECT dblink_exec('rr', 'UPDATE snap_heap SET value = ''newer'' WHERE rowkey = ''a''');
FETCH ALL FROM c;
SELECT * FROM snap_both ORDER BY 1;		-- READ COMMITTED: a new statement, a new snapshot
COMMIT;

-- row locks: another session holds row a (UPDATE), so ours waits ...
SELECT dblink_exec('rr', 'BEGIN');
SELECT dblink_exec('rr', 'UPDATE snap SET value = ''locked'' WHERE rowkey = ''a''');
SELECT locktype, mode, granted FROM pg_locks
    WHERE relation = 'snap'::regclass AND locktype = 'tuple';
SET lock_timeout = '200ms';
UPDATE snap SET value = 'waited' WHERE rowkey = 'a';
DELETE FROM snap WHERE rowkey = 'a';
SELECT rowkey FROM snap WHERE rowkey = 'a' FOR SHARE;
RESET lock_timeout;
SELECT rowkey FROM snap FOR UPDATE NOWAIT;
SELECT rowkey FROM snap ORDER BY rowkey FOR UPDATE SKIP LOCKED;
-- ... but not for another row, nor for a plain read or an insert
UPDATE snap SET value = 'not waited' WHERE rowkey = 'b';
SELECT rowkey, value FROM snap ORDER BY rowkey;
INSERT INTO snap VALUES ('d', 'f', 'q', 1, 'inserted');
-- once it commits, an UPDATE works on its result (READ COMMITTED)
SELECT dblink_exec('rr', 'COMMIT');
UPDATE snap SET value = value || ' then updated' WHERE rowkey = 'a' RETURNING rowkey, value;

-- REPEATABLE READ: a row changed since the snapshot cannot be updated
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT rowkey, value FROM snap WHERE rowkey = 'a';
SELECT dblink_exec('rr', 'UPDATE snap SET value = ''concurrent'' WHERE rowkey = ''a''');
SELECT rowkey, value FROM snap WHERE rowkey = 'a';	-- still the snapshot's
UPDATE snap SET value = 'lost?' WHERE rowkey = 'a';
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT rowkey, value FROM snap WHERE rowkey = 'd';
SELECT dblink_exec('rr', 'DELETE FROM snap WHERE rowkey = ''d''');
DELETE FROM snap WHERE rowkey = 'd';
ROLLBACK;
-- a row nobody else changed can be
BEGIN ISOLATION LEVEL REPEATABLE READ;
UPDATE snap SET value = 'mine' WHERE rowkey = 'b' RETURNING rowkey, value;
COMMIT;
SELECT rowkey, value FROM snap ORDER BY rowkey;

SELECT dblink_disconnect('rr');
DROP VIEW snap_both;
DROP TABLE snap_heap;
DROP FOREIGN TABLE snap;
