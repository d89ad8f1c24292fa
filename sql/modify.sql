--
-- modify: INSERT, INSERT ... SELECT, COPY FROM, DELETE, UPDATE, TRUNCATE, RETURNING
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE m (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f,g', max_versions '3');

-- INSERT with RETURNING
INSERT INTO m VALUES ('r1', 'f', 'a', 10, 'one') RETURNING *;
INSERT INTO m VALUES ('r1', 'f', 'a', 11, 'two'), ('r1', 'g', 'b', 10, 'three') RETURNING rowkey, ts;
-- ts left out or NULL: the current time in milliseconds
SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS before_ms \gset
INSERT INTO m (rowkey, family, qualifier, value) VALUES ('r2', 'f', 'now', 'omitted');
INSERT INTO m VALUES ('r2', 'g', 'now', NULL, 'null ts') RETURNING ts >= :before_ms AS ts_is_now;
SELECT ceil(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS after_ms \gset
SELECT family, value, ts BETWEEN :before_ms AND :after_ms AS ts_is_now FROM m WHERE rowkey = 'r2';

-- INSERT ... SELECT (batched), also from the same table
INSERT INTO m SELECT 'r3', 'f', 'q' || i, i, 'v' || i FROM generate_series(1, 1000) i;
SELECT count(*) FROM m WHERE rowkey = 'r3';
INSERT INTO m SELECT 'copy-' || rowkey, family, qualifier, ts, value FROM m WHERE rowkey = 'r1';
SELECT * FROM m WHERE rowkey LIKE 'copy-%';

-- COPY FROM
COPY m FROM STDIN;
r4	f	c1	1	copied one
r4	f	c1	2	copied two
r4	g	c2	\N	copied, ts now
\.
SELECT family, qualifier, value, ts IS NOT NULL AS has_ts FROM m WHERE rowkey = 'r4';
COPY m (rowkey, family, value) FROM STDIN WITH (FORMAT csv);  -- ERROR: a NULL qualifier
r5,f,"a, b"
\.
ALTER FOREIGN TABLE m ALTER COLUMN qualifier SET DEFAULT '';
COPY m (rowkey, family, value) FROM STDIN WITH (FORMAT csv);
r5,f,"a, b"
\.
ALTER FOREIGN TABLE m ALTER COLUMN qualifier DROP DEFAULT;
SELECT rowkey, family, qualifier = '' AS empty_qualifier, value FROM m WHERE rowkey = 'r5';

-- DELETE exactly the matching versions, with RETURNING
DELETE FROM m WHERE rowkey = 'r1' AND ts = 10 RETURNING *;
SELECT * FROM m WHERE rowkey = 'r1';
DELETE FROM m WHERE rowkey = 'r3' AND ts > 10;
SELECT count(*), max(ts) FROM m WHERE rowkey = 'r3';
DELETE FROM m WHERE rowkey = 'nothing';
-- delete then write again: visible again
DELETE FROM m WHERE rowkey = 'r1';
SELECT count(*) FROM m WHERE rowkey = 'r1';
INSERT INTO m VALUES ('r1', 'f', 'a', 10, 'back');
SELECT * FROM m WHERE rowkey = 'r1';
-- an older version written after a delete of a newer one is visible too
DELETE FROM m WHERE rowkey = 'r1';
INSERT INTO m VALUES ('r1', 'f', 'a', 5, 'older');
SELECT * FROM m WHERE rowkey = 'r1';

-- UPDATE of the value, of the key columns, with RETURNING
UPDATE m SET value = 'updated' WHERE rowkey = 'r1' RETURNING *;
UPDATE m SET ts = ts + 100 WHERE rowkey = 'r1' RETURNING ts, value;
SELECT * FROM m WHERE rowkey = 'r1';
UPDATE m SET rowkey = 'r1-moved', family = 'g' WHERE rowkey = 'r1';
SELECT * FROM m WHERE rowkey LIKE 'r1%';
-- versions shifted down by one: no version is lost (all versions kept) ...
CREATE FOREIGN TABLE m_all (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f', max_versions '0');
INSERT INTO m_all VALUES ('r6', 'f', 'q', 1, 'v1'), ('r6', 'f', 'q', 2, 'v2'), ('r6', 'f', 'q', 3, 'v3');
UPDATE m_all SET ts = ts - 1;
SELECT ts, value FROM m_all;
UPDATE m_all SET ts = ts + 1;
SELECT ts, value FROM m_all;
-- ... but with max_versions 3 the deleted ts 3 still holds one of the 3 places
INSERT INTO m VALUES ('r6', 'f', 'q', 1, 'v1'), ('r6', 'f', 'q', 2, 'v2'), ('r6', 'f', 'q', 3, 'v3');
UPDATE m SET ts = ts - 1 WHERE rowkey = 'r6';
SELECT ts, value FROM m WHERE rowkey = 'r6';
-- UPDATE to NULL ts: now
UPDATE m SET ts = NULL WHERE rowkey = 'r6' AND ts = 3 RETURNING ts > 1000000 AS now;
SELECT count(*) FROM m WHERE rowkey = 'r6';
-- an UPDATE that fails leaves nothing behind
UPDATE m SET family = 'nope' WHERE rowkey = 'r6';  -- ERROR
SELECT count(*) FROM m WHERE rowkey = 'r6';

-- max_versions: the newest 3 versions of a cell are kept
INSERT INTO m SELECT 'r7', 'f', 'q', i, 'v' || i FROM generate_series(1, 10) i;
SELECT ts, value FROM m WHERE rowkey = 'r7';
-- deleting the newest keeps its place: older versions do not come back
DELETE FROM m WHERE rowkey = 'r7' AND ts = 10;
SELECT ts, value FROM m WHERE rowkey = 'r7';
-- ttl: versions older than now - ttl are gone
CREATE FOREIGN TABLE m_ttl (rowkey text, ts bigint, value text) SERVER wide OPTIONS (families 'f', ttl '1 day');
INSERT INTO m_ttl VALUES ('old', 1, 'from 1970'), ('new', NULL, 'from now'),
    ('edge', (extract(epoch FROM now() - interval '23 hours') * 1000)::bigint, 'yesterday');
SELECT rowkey, value FROM m_ttl;

-- TRUNCATE empties the store
SELECT count(*) > 0 FROM m;
TRUNCATE m;
SELECT count(*) FROM m;
INSERT INTO m VALUES ('after', 'f', 'a', 1, 'truncate');
SELECT * FROM m;
-- TRUNCATE of several tables, and in a transaction with writes before and after
BEGIN;
INSERT INTO m VALUES ('before', 'f', 'a', 1, 'x');
TRUNCATE m, m_ttl;
INSERT INTO m VALUES ('later', 'f', 'a', 1, 'y');
SELECT rowkey FROM m;
COMMIT;
SELECT rowkey FROM m;
SELECT count(*) FROM m_ttl;

-- UPDATE/DELETE need the identity columns
CREATE FOREIGN TABLE m_noid (rowkey text, value text) SERVER wide OPTIONS (families 'f');
INSERT INTO m_noid VALUES ('a', 'b');
DELETE FROM m_noid;  -- ERROR
UPDATE m_noid SET value = 'c';  -- ERROR
-- a table without family column writes to its only family; with two it cannot
CREATE FOREIGN TABLE m_nofam (rowkey text, value text) SERVER wide OPTIONS (families 'f,g');
INSERT INTO m_nofam VALUES ('a', 'b');  -- ERROR

-- triggers on the foreign table see the rows
CREATE TABLE m_log (op text, rowkey text, value text);
CREATE FUNCTION m_trig() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO m_log VALUES (TG_OP, OLD.rowkey, OLD.value);
        RETURN OLD;
    END IF;
    INSERT INTO m_log VALUES (TG_OP, NEW.rowkey, NEW.value);
    RETURN NEW;
END $$;
CREATE TRIGGER m_trig AFTER INSERT OR UPDATE OR DELETE ON m FOR EACH ROW EXECUTE FUNCTION m_trig();
INSERT INTO m VALUES ('t', 'f', 'a', 1, 'trig');
UPDATE m SET value = 'trig2' WHERE rowkey = 't';
DELETE FROM m WHERE rowkey = 't';
SELECT * FROM m_log;

-- INSERT ... ON CONFLICT DO NOTHING: a tall table's row is a cell version
-- (rowkey, family, qualifier, ts); one that is there, or given twice, is skipped
CREATE FOREIGN TABLE mc (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f', max_versions '0');
INSERT INTO mc VALUES ('r', 'f', 'q', 1, 'one');
INSERT INTO mc VALUES ('r', 'f', 'q', 1, 'again'), ('r', 'f', 'q', 2, 'two'), ('r', 'f', 'q', 2, 'twice'),
                      ('r', 'f', 'p', 1, 'other qualifier')
    ON CONFLICT DO NOTHING RETURNING *;
DELETE FROM mc WHERE ts = 1 AND qualifier = 'q';
INSERT INTO mc VALUES ('r', 'f', 'q', 1, 'after the delete') ON CONFLICT DO NOTHING;
SELECT * FROM mc ORDER BY qualifier, ts;

-- UPDATE and DELETE ... WHERE CURRENT OF a cursor: the cell version it is on
INSERT INTO mc SELECT 'c' || (i % 2), 'f', 'q' || (i % 3), i, 'v' || i FROM generate_series(1, 8) i;
BEGIN;
DECLARE c CURSOR FOR SELECT rowkey, qualifier, ts, value FROM mc WHERE rowkey LIKE 'c%';
FETCH 2 FROM c;
UPDATE mc SET value = value || ' (current)' WHERE CURRENT OF c RETURNING *;
FETCH 1 FROM c;
DELETE FROM mc WHERE CURRENT OF c RETURNING *;
COMMIT;
SELECT * FROM mc WHERE rowkey LIKE 'c%' ORDER BY rowkey, qualifier, ts DESC;

-- an UPDATE writes as it goes, as the heap does: AFTER triggers (and BEFORE triggers of later
-- rows) read the rows it changed, a trigger's own UPDATE of the row lands on top; versions that
-- swap or shift their ts keep every one (an ordinary twin, mh, gives the same)
CREATE FOREIGN TABLE mv (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value int)
    SERVER wide OPTIONS (families 'f', max_versions '10');
CREATE TABLE mh (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value int);
CREATE FUNCTION mv_show() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE '% % % sees %', TG_TABLE_NAME, TG_WHEN, TG_LEVEL,
    (SELECT string_agg(rowkey || '@' || ts || '=' || value, ',' ORDER BY rowkey, ts) FROM mv);
  RETURN NEW;
END $$;
CREATE TRIGGER mv_after AFTER UPDATE ON mv FOR EACH STATEMENT EXECUTE FUNCTION mv_show();
CREATE TRIGGER mv_before BEFORE UPDATE ON mv FOR EACH ROW EXECUTE FUNCTION mv_show();
INSERT INTO mv VALUES ('k1', 'f', 'q', 1, 1), ('k1', 'f', 'q', 2, 2), ('k1', 'f', 'q', 3, 3), ('k2', 'f', 'q', 1, 10);
INSERT INTO mh SELECT * FROM mv;
UPDATE mv SET value = value + 100 WHERE rowkey = 'k2' OR ts = 1;
DROP TRIGGER mv_before ON mv;
UPDATE mv SET ts = CASE ts WHEN 1 THEN 2 WHEN 2 THEN 1 ELSE ts END WHERE rowkey = 'k1';
UPDATE mh SET value = value + 100 WHERE rowkey = 'k2' OR ts = 1;
UPDATE mh SET ts = CASE ts WHEN 1 THEN 2 WHEN 2 THEN 1 ELSE ts END WHERE rowkey = 'k1';
UPDATE mv SET ts = ts + 1 WHERE rowkey = 'k1';
UPDATE mh SET ts = ts + 1 WHERE rowkey = 'k1';
UPDATE mv SET ts = ts - 2 WHERE rowkey = 'k1';
UPDATE mh SET ts = ts - 2 WHERE rowkey = 'k1';
SELECT * FROM mv ORDER BY rowkey, ts;
SELECT count(*) AS differ FROM ((TABLE mv EXCEPT TABLE mh) UNION ALL (TABLE mh EXCEPT TABLE mv)) d;
DROP TRIGGER mv_after ON mv;
CREATE FUNCTION mv_double() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('UPDATE %I SET value = value * 2 WHERE rowkey = $1 AND ts = $2', TG_TABLE_NAME)
    USING NEW.rowkey, NEW.ts;
  RETURN NULL;
END $$;
CREATE TRIGGER mv_double AFTER UPDATE ON mv FOR EACH ROW WHEN (pg_trigger_depth() < 1) EXECUTE FUNCTION mv_double();
CREATE TRIGGER mh_double AFTER UPDATE ON mh FOR EACH ROW WHEN (pg_trigger_depth() < 1) EXECUTE FUNCTION mv_double();
UPDATE mv SET value = value + 1 WHERE rowkey = 'k2';
UPDATE mh SET value = value + 1 WHERE rowkey = 'k2';
SELECT * FROM mv WHERE rowkey = 'k2';
SELECT count(*) AS differ FROM ((TABLE mv EXCEPT TABLE mh) UNION ALL (TABLE mh EXCEPT TABLE mv)) d;
DROP FOREIGN TABLE mv;
DROP TABLE mh;
DROP FUNCTION mv_show(), mv_double();

DROP FOREIGN TABLE m, m_all, m_ttl, m_noid, m_nofam, mc;
DROP TABLE m_log;
DROP FUNCTION m_trig();
