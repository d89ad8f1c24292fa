--
-- truncate: TRUNCATE empties the store at commit and gives its files back
-- then (a flush right after the commit removes every sorted file and log
-- below the truncate point); a rolled-back TRUNCATE keeps everything
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE tr (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'a,b');
-- the same rows in an ordinary table
CREATE TABLE tr_heap (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                      ts bigint, value text);

CREATE FUNCTION tr_load() RETURNS void LANGUAGE sql AS $$
    INSERT INTO tr SELECT 'r' || lpad(i::text, 4, '0'), 'a', 'q', 1, repeat('v', 100) FROM generate_series(1, 1000) i;
    INSERT INTO tr SELECT 'r' || lpad(i::text, 4, '0'), 'b', 'q', 1, repeat('w', 100) FROM generate_series(1, 1000, 2) i;
    INSERT INTO tr_heap SELECT 'r' || lpad(i::text, 4, '0'), 'a', 'q', 1, repeat('v', 100) FROM generate_series(1, 1000) i;
    INSERT INTO tr_heap SELECT 'r' || lpad(i::text, 4, '0'), 'b', 'q', 1, repeat('w', 100) FROM generate_series(1, 1000, 2) i;
$$;
-- what the store holds on disk: sorted files, their cells and bytes
CREATE FUNCTION tr_files(OUT files bigint, OUT cells numeric, OUT has_bytes boolean)
LANGUAGE sql AS $$
    SELECT count(*), coalesce(sum(cells), 0), coalesce(sum(bytes_on_disk), 0) > 0 FROM widecol_stats('tr')
$$;
CREATE FUNCTION tr_rows(OUT tbl text, OUT n bigint, OUT fams text) RETURNS SETOF record
LANGUAGE sql AS $$
    SELECT 'widecol', count(*), string_agg(DISTINCT family, ',') FROM tr
    UNION ALL
    SELECT 'heap', count(*), string_agg(DISTINCT family, ',') FROM tr_heap
$$;

SELECT tr_load();
SELECT widecol_flush('tr');
SELECT * FROM tr_files();
SELECT * FROM tr_rows();

-- a rolled-back TRUNCATE keeps the rows and the files
BEGIN;
TRUNCATE tr;
TRUNCATE tr_heap;
SELECT * FROM tr_rows();
ROLLBACK;
SELECT * FROM tr_files();
SELECT * FROM tr_rows();

-- so does a TRUNCATE undone by a rollback to a savepoint
BEGIN;
SAVEPOINT s1;
TRUNCATE tr;
TRUNCATE tr_heap;
ROLLBACK TO SAVEPOINT s1;
INSERT INTO tr VALUES ('zz', 'a', 'q', 2, 'after');
INSERT INTO tr_heap VALUES ('zz', 'a', 'q', 2, 'after');
COMMIT;
SELECT * FROM tr_files();
SELECT * FROM tr_rows();

-- a committed TRUNCATE: the files are gone at commit, no flush needed
BEGIN;
TRUNCATE tr;
TRUNCATE tr_heap;
-- before the commit the files are still there (others may still read them)
SELECT * FROM tr_files();
COMMIT;
SELECT * FROM tr_files();
SELECT * FROM tr_rows();

-- rows written after the TRUNCATE in the same transaction stay
SELECT tr_load();
SELECT widecol_flush('tr');
BEGIN;
TRUNCATE tr;
TRUNCATE tr_heap;
INSERT INTO tr VALUES ('after', 'b', 'q', 3, 'kept');
INSERT INTO tr_heap VALUES ('after', 'b', 'q', 3, 'kept');
COMMIT;
SELECT * FROM tr_files();
SELECT * FROM tr_rows();
SELECT * FROM tr EXCEPT SELECT * FROM tr_heap;
SELECT * FROM tr_heap EXCEPT SELECT * FROM tr;
SELECT rowkey, family, value FROM tr;
-- they reach a sorted file at the next flush, as any write
SELECT widecol_flush('tr');
SELECT * FROM tr_files();

-- a TRUNCATE in a subtransaction that commits counts
SELECT tr_load();
SELECT widecol_flush('tr');
BEGIN;
SAVEPOINT s1;
TRUNCATE tr;
TRUNCATE tr_heap;
RELEASE SAVEPOINT s1;
COMMIT;
SELECT * FROM tr_files();
SELECT * FROM tr_rows();

-- a prepared TRUNCATE gives nothing back at COMMIT PREPARED: the next flush does
SELECT tr_load();
SELECT widecol_flush('tr');
BEGIN;
TRUNCATE tr;
TRUNCATE tr_heap;
PREPARE TRANSACTION 'tr_prep';
COMMIT PREPARED 'tr_prep';
SELECT * FROM tr_files();
SELECT * FROM tr_rows();
SELECT widecol_flush('tr');
SELECT * FROM tr_files();
-- and ROLLBACK PREPARED keeps everything
SELECT tr_load();
SELECT widecol_flush('tr');
BEGIN;
TRUNCATE tr;
TRUNCATE tr_heap;
PREPARE TRANSACTION 'tr_prep';
ROLLBACK PREPARED 'tr_prep';
SELECT * FROM tr_files();
SELECT * FROM tr_rows();

DROP FUNCTION tr_rows();
DROP FUNCTION tr_files();
DROP FUNCTION tr_load();
DROP TABLE tr_heap;
DROP FOREIGN TABLE tr;
