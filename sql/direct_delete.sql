--
-- direct_delete: DELETE ... WHERE rowkey = x [AND family = f] writes one
-- bounded family marker per family instead of a tombstone per version
-- (direct modification, src/direct.c).  Every case runs against an ordinary
-- table with the same rows too, and the two must agree (rows and counts).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FOREIGN TABLE dd (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'a,b,c', max_versions '0');
CREATE TABLE dd_heap (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                      ts bigint, value text);

-- rows in one table and not the other (none expected), and the row counts
CREATE FUNCTION dd_diff(OUT side text, OUT rowkey text, OUT family text, OUT qualifier text,
                        OUT ts bigint, OUT value text) RETURNS SETOF record LANGUAGE sql AS $$
    (SELECT 'widecol only', * FROM dd EXCEPT ALL SELECT 'widecol only', * FROM dd_heap)
    UNION ALL
    (SELECT 'heap only', * FROM dd_heap EXCEPT ALL SELECT 'heap only', * FROM dd)
$$;
CREATE FUNCTION dd_counts(OUT widecol bigint, OUT heap bigint) LANGUAGE sql AS $$
    SELECT (SELECT count(*) FROM dd), (SELECT count(*) FROM dd_heap)
$$;
-- DELETE FROM <table> WHERE cond on both tables: the row counts each reports
CREATE FUNCTION dd_delete(cond text, OUT widecol bigint, OUT heap bigint) LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE 'DELETE FROM dd WHERE ' || cond;
    GET DIAGNOSTICS widecol = ROW_COUNT;
    EXECUTE 'DELETE FROM dd_heap WHERE ' || cond;
    GET DIAGNOSTICS heap = ROW_COUNT;
END $$;
CREATE FUNCTION wc_explain(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE l text;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l ~ 'Store:' THEN l := regexp_replace(l, '(blocks read|cells scanned|seeks)=\d+', '\1=N', 'g'); END IF;
        RETURN NEXT l;
    END LOOP;
END $$;

-- rows r01..r12, each with cells in every family, several versions
INSERT INTO dd SELECT 'r' || lpad(r::text, 2, '0'), f, 'q' || q, v, 'v' || r || f || q || v
  FROM generate_series(1, 12) r, unnest(ARRAY['a', 'b', 'c']) f, generate_series(1, 2) q,
       generate_series(1, 3) v;
INSERT INTO dd_heap SELECT * FROM dd;
SELECT widecol_flush('dd');
SELECT * FROM dd_counts();

-- the plans: direct for rowkey = / IN / = ANY, optionally AND family = const
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE rowkey = 'r01';
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE rowkey = 'r01' AND family = 'b';
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE rowkey IN ('r01', 'r02');
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE family = 'a' AND rowkey = ANY (ARRAY['r01', 'r02']);
-- and the ordinary path for anything else
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE rowkey = 'r01' AND ts > 1;
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE rowkey = 'r01' AND qualifier = 'q1';
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE rowkey = 'r01' AND family IN ('a', 'b');
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE rowkey = 'r01' RETURNING *;
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE rowkey >= 'r01' AND rowkey < 'r02';
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE rowkey = 'r01' OR rowkey = 'r02';
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE family = 'a';
EXPLAIN (COSTS OFF) DELETE FROM dd;
EXPLAIN (COSTS OFF) DELETE FROM dd USING dd_heap h WHERE dd.rowkey = 'r01' AND h.rowkey = dd.rowkey;

-- a whole row: 18 versions in three families, one marker each
SELECT * FROM wc_explain($$DELETE FROM dd WHERE rowkey = 'r01'$$);
DELETE FROM dd_heap WHERE rowkey = 'r01';
SELECT * FROM dd_diff();
-- the row count the client sees
SELECT * FROM dd_delete($$rowkey = 'r02'$$);
-- one family of a row
SELECT * FROM dd_delete($$rowkey = 'r03' AND family = 'b'$$);
SELECT * FROM dd_diff();
SELECT family, count(*) FROM dd WHERE rowkey = 'r03' GROUP BY family ORDER BY family;
-- an IN list, with a rowkey twice and one that is not there
SELECT * FROM dd_delete($$rowkey IN ('r04', 'r05', 'r04', 'nothing')$$);
SELECT * FROM dd_delete($$rowkey = ANY (ARRAY['r06']) AND family = 'c'$$);
-- nothing to delete: a missing row, an undeclared family, a deleted row, NULL
SELECT * FROM dd_delete($$rowkey = 'nothing'$$);
SELECT * FROM dd_delete($$rowkey = 'r07' AND family = 'zz'$$);
SELECT * FROM dd_delete($$rowkey = 'r01'$$);
SELECT * FROM dd_delete($$rowkey = NULL$$);
SELECT * FROM dd_delete($$rowkey = ANY (ARRAY['r07', NULL]) AND family = 'a'$$);
SELECT * FROM dd_diff();
SELECT * FROM dd_counts();

-- a prepared statement, its rowkey a parameter (custom and generic plans)
PREPARE del_row(text) AS DELETE FROM dd WHERE rowkey = $1;
PREPARE del_row_heap(text) AS DELETE FROM dd_heap WHERE rowkey = $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE del_row('r08');
EXECUTE del_row('r08');
EXECUTE del_row_heap('r08');
RESET plan_cache_mode;
EXECUTE del_row('r09');
EXECUTE del_row_heap('r09');
DEALLOCATE del_row;
DEALLOCATE del_row_heap;
SELECT * FROM dd_diff();

-- a write after the delete is visible again, older or newer than what was deleted
INSERT INTO dd VALUES ('r01', 'a', 'q1', 2, 'again'), ('r01', 'b', 'new', 100, 'new');
INSERT INTO dd_heap VALUES ('r01', 'a', 'q1', 2, 'again'), ('r01', 'b', 'new', 100, 'new');
SELECT * FROM dd WHERE rowkey = 'r01';
SELECT * FROM dd_diff();

-- the transaction's own writes, not yet committed, are deleted too
BEGIN;
INSERT INTO dd VALUES ('r10', 'a', 'mine', 7, 'mine'), ('r13', 'b', 'mine', 1, 'new row');
INSERT INTO dd_heap VALUES ('r10', 'a', 'mine', 7, 'mine'), ('r13', 'b', 'mine', 1, 'new row');
SELECT * FROM wc_explain($$DELETE FROM dd WHERE rowkey IN ('r10', 'r13')$$);
DELETE FROM dd_heap WHERE rowkey IN ('r10', 'r13');
SELECT * FROM dd_diff();
-- and what the transaction writes after its delete stays
INSERT INTO dd VALUES ('r10', 'a', 'after', 1, 'after');
INSERT INTO dd_heap VALUES ('r10', 'a', 'after', 1, 'after');
COMMIT;
SELECT * FROM dd WHERE rowkey IN ('r10', 'r13');
SELECT * FROM dd_diff();

-- a delete rolled back, to a savepoint or whole, leaves everything
BEGIN;
SAVEPOINT s1;
DELETE FROM dd WHERE rowkey = 'r11';
SELECT count(*) FROM dd WHERE rowkey = 'r11';
ROLLBACK TO SAVEPOINT s1;
SELECT count(*) FROM dd WHERE rowkey = 'r11';
SELECT * FROM dd_delete($$rowkey = 'r12' AND family = 'a'$$);
COMMIT;
BEGIN;
DELETE FROM dd WHERE rowkey = 'r11';
ROLLBACK;
SELECT * FROM dd_diff();
SELECT * FROM dd_counts();

-- flush and compaction give the same answers
SELECT widecol_flush('dd');
SELECT * FROM dd_diff();
SELECT widecol_compact('dd');
SELECT * FROM dd_diff();
SELECT * FROM dd_counts();

-- 1,000 versions of a row: one marker, not 1,000 tombstones
CREATE FOREIGN TABLE dk (rowkey text, family text, qualifier text, ts bigint, value text)
SERVER wide OPTIONS (families 'a', max_versions '0');
INSERT INTO dk SELECT 'big', 'a', 'q', i, 'v' || i FROM generate_series(1, 1000) i;
INSERT INTO dk VALUES ('other', 'a', 'q', 1, 'stays');
SELECT widecol_flush('dk');
SELECT level, cells FROM widecol_stats('dk') ORDER BY file;
SELECT * FROM wc_explain($$DELETE FROM dk WHERE rowkey = 'big'$$);
SELECT widecol_flush('dk');
-- the second file holds the marker alone
SELECT level, cells FROM widecol_stats('dk') ORDER BY file;
SELECT * FROM dk;
SELECT widecol_compact('dk');
SELECT level, cells FROM widecol_stats('dk') ORDER BY file;
SELECT * FROM dk;
-- the ordinary path for comparison: a tombstone per version
INSERT INTO dk SELECT 'big', 'a', 'q', i, 'v' || i FROM generate_series(1, 1000) i;
SELECT widecol_flush('dk');
DELETE FROM dk WHERE rowkey = 'big' AND value IS NOT NULL;
SELECT widecol_flush('dk');
SELECT level, cells FROM widecol_stats('dk') ORDER BY file;
SELECT * FROM dk;

-- retention: max_versions and ttl families give what the ordinary path gives
-- (dr is deleted directly, dn the ordinary way, the same rows in both)
CREATE FOREIGN TABLE dr (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                         ts bigint, value text)
SERVER wide OPTIONS (families 'v,t', "v.max_versions" '2', "t.ttl" '1 day', "t.max_versions" '0');
CREATE FOREIGN TABLE dn (rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C",
                         ts bigint, value text)
SERVER wide OPTIONS (families 'v,t', "v.max_versions" '2', "t.ttl" '1 day', "t.max_versions" '0');
SELECT (extract(epoch FROM now()) * 1000)::bigint AS now_ms \gset
INSERT INTO dr SELECT r, 'v', 'q', i, 'v' || i FROM unnest(ARRAY['x', 'y']) r, generate_series(1, 5) i;
INSERT INTO dr SELECT r, 't', 'q', :now_ms - i * 3600000 * 12, 't' || i
  FROM unnest(ARRAY['x', 'y']) r, generate_series(1, 4) i;
INSERT INTO dn SELECT * FROM dr;
SELECT rowkey, family, count(*) FROM dr GROUP BY 1, 2 ORDER BY 1, 2;
DELETE FROM dr WHERE rowkey = 'x';
DELETE FROM dn WHERE rowkey = 'x' AND value IS NOT NULL;
DELETE FROM dr WHERE rowkey = 'y' AND family = 'v';
DELETE FROM dn WHERE rowkey = 'y' AND family = 'v' AND value IS NOT NULL;
(SELECT * FROM dr EXCEPT SELECT * FROM dn) UNION ALL (SELECT * FROM dn EXCEPT SELECT * FROM dr);
-- the versions max_versions hid stay hidden after either delete
SELECT widecol_flush('dr'), widecol_flush('dn'), widecol_compact('dr'), widecol_compact('dn');
(SELECT * FROM dr EXCEPT SELECT * FROM dn) UNION ALL (SELECT * FROM dn EXCEPT SELECT * FROM dr);
-- one difference: a new write of a version older than the deleted ones.  An
-- ordinary table shows it; so does a table after the direct delete (the
-- marker hides the row's earlier versions, none holds a max_versions place);
-- after the version-by-version delete the two tombstones still hold the two
-- places of max_versions, and the older write stays hidden (doc/SQL.md)
INSERT INTO dr VALUES ('x', 'v', 'q', 0, 'older');
INSERT INTO dn VALUES ('x', 'v', 'q', 0, 'older');
SELECT 'direct' AS deleted, rowkey, family, qualifier, ts, value FROM dr WHERE rowkey = 'x'
UNION ALL
SELECT 'ordinary path', rowkey, family, qualifier, ts, value FROM dn WHERE rowkey = 'x';

-- a row-level DELETE trigger keeps the ordinary path (it needs each row)
CREATE FUNCTION dd_trig() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE NOTICE 'deleting %/%:%@%', OLD.rowkey, OLD.family, OLD.qualifier, OLD.ts; RETURN OLD; END $$;
CREATE TRIGGER dd_del BEFORE DELETE ON dd FOR EACH ROW EXECUTE FUNCTION dd_trig();
EXPLAIN (COSTS OFF) DELETE FROM dd WHERE rowkey = 'r06' AND family = 'a' AND qualifier = 'q1';
DELETE FROM dd WHERE rowkey = 'r06' AND family = 'a' AND qualifier = 'q1';
DROP TRIGGER dd_del ON dd;
DELETE FROM dd_heap WHERE rowkey = 'r06' AND family = 'a' AND qualifier = 'q1';
SELECT * FROM dd_diff();

-- a wide table keeps the ordinary path
CREATE FOREIGN TABLE dw (rowkey text, x text OPTIONS (cell 'a:q1')) SERVER wide OPTIONS (store 'dd');
EXPLAIN (COSTS OFF) DELETE FROM dw WHERE rowkey = 'r11';

-- random: writes, direct deletes of rows, families and IN lists, deletes rolled
-- back, flushes and compactions, each step its own transaction; always the same
-- rows as the ordinary table, and the same row count at every delete
TRUNCATE dd;
TRUNCATE dd_heap;
CREATE PROCEDURE dd_random(rounds int, INOUT result text) LANGUAGE plpgsql AS $$
DECLARE
    i int; r text; f text; cond text; a bigint; b bigint; bad int := 0; n int := 0;
BEGIN
    PERFORM setseed(0.17);
    FOR i IN 1 .. rounds LOOP
        r := 'k' || floor(random() * 12)::int;
        f := (ARRAY['a', 'b', 'c'])[1 + floor(random() * 3)::int];
        cond := NULL;
        CASE floor(random() * 6)::int
            WHEN 0, 1 THEN
                -- new versions; one of an existing (rowkey, family, qualifier, ts) replaces it
                CREATE TEMP TABLE dd_new AS
                    SELECT r AS rowkey, f AS family, 'q' || floor(random() * 3)::int AS qualifier,
                           t::bigint AS ts, 'v' || i AS value
                      FROM generate_series(1, 1 + floor(random() * 4)::int) t;
                INSERT INTO dd SELECT * FROM dd_new;
                DELETE FROM dd_heap h USING dd_new x WHERE (h.rowkey, h.family, h.qualifier, h.ts) =
                    (x.rowkey, x.family, x.qualifier, x.ts);
                INSERT INTO dd_heap SELECT DISTINCT ON (rowkey, family, qualifier, ts) * FROM dd_new;
                DROP TABLE dd_new;
            WHEN 2 THEN cond := format('rowkey = %L', r);
            WHEN 3 THEN cond := format('rowkey = %L AND family = %L', r, f);
            WHEN 4 THEN cond := format('rowkey IN (%L, %L)', r, 'k' || floor(random() * 12)::int);
            ELSE
                IF random() < 0.5 THEN PERFORM widecol_flush('dd'); ELSE PERFORM widecol_compact('dd'); END IF;
        END CASE;
        IF cond IS NOT NULL THEN
            IF random() < 0.2 THEN
                BEGIN
                    EXECUTE 'DELETE FROM dd WHERE ' || cond;
                    RAISE EXCEPTION 'roll back';
                EXCEPTION WHEN raise_exception THEN NULL;
                END;
            END IF;
            SELECT * INTO a, b FROM dd_delete(cond);
            n := n + 1;
            IF a <> b THEN bad := bad + 1; END IF;
        END IF;
        COMMIT;
    END LOOP;
    result := format('%s deletes, %s counts differ, %s rows differ, %s rows left', n, bad,
                     (SELECT count(*) FROM dd_diff()), (SELECT count(*) FROM dd));
END $$;
CALL dd_random(400, NULL);
SELECT widecol_flush('dd'), widecol_compact('dd');
SELECT * FROM dd_diff();
DROP PROCEDURE dd_random(int, text);

DROP FOREIGN TABLE dw, dr, dn, dk, dd;
DROP TABLE dd_heap;
DROP FUNCTION dd_diff(), dd_counts(), dd_delete(text), wc_explain(text), dd_trig();
