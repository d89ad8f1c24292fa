--
-- row_cache: a session's cache of rows that point reads found in two or more
-- sorted files (widecol_fdw.row_cache_size), shown by EXPLAIN (ANALYZE, BUFFERS)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

SHOW widecol_fdw.row_cache_size;
SET widecol_fdw.row_cache_size = -1;       -- ERROR: out of range
SET widecol_fdw.row_cache_size = '1MB';    -- taken when the session opens the table

-- the scores of the background documents, as a wide table, and an ordinary twin
CREATE FOREIGN TABLE rc_scores (
    rowkey text COLLATE "C",
    course text OPTIONS (cell 'info:course'),
    score int OPTIONS (cell 'grade:score'),
    grader text OPTIONS (cell 'grade:grader')
) SERVER wide OPTIONS (families 'info,grade', "grade.max_versions" '3');
CREATE TABLE rc_twin (rowkey text COLLATE "C" PRIMARY KEY, course text, score int, grader text);

-- sorted files: the load, then two rounds of updates of the first rows (grade
-- three, info two)
INSERT INTO rc_scores SELECT 'student' || lpad(i::text, 3, '0'), 'course' || (i % 7), i, 'ta1'
  FROM generate_series(1, 200) i;
INSERT INTO rc_twin SELECT * FROM rc_scores;
SELECT widecol_flush('rc_scores');
UPDATE rc_scores SET score = score + 1000, course = course || 'b' WHERE rowkey <= 'student020';
UPDATE rc_twin SET score = score + 1000, course = course || 'b' WHERE rowkey <= 'student020';
SELECT widecol_flush('rc_scores');
UPDATE rc_scores SET grader = 'ta2' WHERE rowkey <= 'student010';
UPDATE rc_twin SET grader = 'ta2' WHERE rowkey <= 'student010';
SELECT widecol_flush('rc_scores');
SELECT family, count(*) AS files FROM widecol_stats('rc_scores') GROUP BY family ORDER BY family;

-- the row cache's hits in a query's foreign scans
CREATE FUNCTION rc_hits(q text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE l text; n bigint := 0;
BEGIN
    FOR l IN EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
        IF l ~ 'Row Cache:' THEN n := n + substring(l from 'hit=(\d+)')::bigint; END IF;
    END LOOP;
    RETURN n;
END $$;

-- student005 lies in two or three files of each family: read once (a miss),
-- twice (a second miss fills the cache), then found there for both families
SELECT rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student005'$$) AS first;
SELECT rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student005'$$) AS second;
SELECT rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student005'$$) AS third;
SELECT * FROM rc_scores WHERE rowkey = 'student005';
-- student150 lies in one file of each family: never cached
SELECT rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student150'$$) AS one_file_1,
       rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student150'$$) AS one_file_2,
       rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student150'$$) AS one_file_3;
-- ranges and reversed scans read the files
SELECT rc_hits($$SELECT * FROM rc_scores WHERE rowkey BETWEEN 'student005' AND 'student006'$$) AS range_hits;
SELECT rc_hits($$SELECT * FROM rc_scores WHERE rowkey IN ('student005', 'student006')$$) AS in_hits;

-- what is read through the cache is what the ordinary table holds: every row,
-- read three times by rowkey (a parameter of a generic plan, as a prepared
-- statement's), rows of the ordinary table missing from it counted too
SET plan_cache_mode = force_generic_plan;
CREATE FUNCTION rc_differ() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE r rc_twin; w rc_twin; n bigint := 0;
BEGIN
    FOR r IN SELECT * FROM rc_twin ORDER BY rowkey LOOP
        FOR k IN 1..3 LOOP
            w := NULL;
            SELECT rowkey, course, score, grader INTO w FROM rc_scores WHERE rowkey = r.rowkey;
            IF w IS DISTINCT FROM r THEN n := n + 1; END IF;
        END LOOP;
    END LOOP;
    RETURN n + (SELECT count(*) FROM (SELECT rowkey FROM rc_scores EXCEPT SELECT rowkey FROM rc_twin) x);
END $$;
SELECT rc_differ() AS differ;
PREPARE one(text) AS SELECT rowkey, course, score, grader FROM rc_scores WHERE rowkey = $1;
SELECT rc_hits($$EXECUTE one('student012')$$) > 0 AS prepared_hits;

-- a write after the fill is merged on top of the cached files' entries: seen at
-- once; a delete of the row too
UPDATE rc_scores SET score = -1 WHERE rowkey = 'student005';
UPDATE rc_twin SET score = -1 WHERE rowkey = 'student005';
SELECT rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student005'$$) AS hits_after_write;
SELECT * FROM rc_scores WHERE rowkey = 'student005';
DELETE FROM rc_scores WHERE rowkey = 'student007';
DELETE FROM rc_twin WHERE rowkey = 'student007';
SELECT count(*) AS gone FROM rc_scores WHERE rowkey = 'student007';

-- within a transaction: its own uncommitted writes on top, rolled back after
BEGIN;
UPDATE rc_scores SET grader = 'ta9' WHERE rowkey = 'student003';
SELECT rowkey, grader FROM rc_scores WHERE rowkey = 'student003';
ROLLBACK;
SELECT rowkey, grader FROM rc_scores WHERE rowkey = 'student003';

-- a flush makes another set of grade's files (info's unchanged: still found):
-- grade's entry is not found, and cached again at the row's second miss
SELECT widecol_flush('rc_scores');
SELECT rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student005'$$) AS after_flush_1,
       rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student005'$$) AS after_flush_2,
       rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student005'$$) AS after_flush_3;
SELECT rc_differ() AS differ_after_flush;
-- and a compaction leaves one file per family: nothing cached
SELECT widecol_compact('rc_scores');
SELECT rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student005'$$) +
       rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student005'$$) +
       rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student005'$$) AS after_compaction;
SELECT rc_differ() AS differ_after_compaction;

-- older versions (grade.max_versions 3) through a tall table over the same store
CREATE FOREIGN TABLE rc_cells (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value bytea
) SERVER wide OPTIONS (store 'rc_scores');
UPDATE rc_scores SET score = 7 WHERE rowkey = 'student001';
SELECT widecol_flush('rc_scores');
UPDATE rc_scores SET score = 8 WHERE rowkey = 'student001';
UPDATE rc_twin SET score = 8 WHERE rowkey = 'student001';
SELECT widecol_flush('rc_scores');
SELECT qualifier, value FROM rc_cells WHERE rowkey = 'student001' AND family = 'grade' AND qualifier = 'score' ORDER BY ts DESC;
SELECT qualifier, value FROM rc_cells WHERE rowkey = 'student001' AND family = 'grade' AND qualifier = 'score' ORDER BY ts DESC;
SELECT qualifier, value FROM rc_cells WHERE rowkey = 'student001' AND family = 'grade' AND qualifier = 'score' ORDER BY ts DESC;
SELECT rc_hits($$SELECT * FROM rc_cells WHERE rowkey = 'student001'$$) AS tall_hits;

-- what a cached row keeps follows the family's max_versions: raised, the
-- versions the files still hold are read again, not the entry made before
CREATE FOREIGN TABLE rc_v (
    rowkey text COLLATE "C", family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text
) SERVER wide OPTIONS (families 'f', max_versions '1');
INSERT INTO rc_v VALUES ('r', 'f', 'q', 1, 'one');
SELECT widecol_flush('rc_v');
INSERT INTO rc_v VALUES ('r', 'f', 'q', 2, 'two');
SELECT widecol_flush('rc_v');
INSERT INTO rc_v VALUES ('r', 'f', 'q', 3, 'three');
SELECT widecol_flush('rc_v');
SELECT ts, value FROM rc_v WHERE rowkey = 'r';
SELECT ts, value FROM rc_v WHERE rowkey = 'r';
SELECT rc_hits($$SELECT * FROM rc_v WHERE rowkey = 'r'$$) AS one_version_hits;
ALTER FOREIGN TABLE rc_v OPTIONS (SET max_versions '3');
SELECT ts, value FROM rc_v WHERE rowkey = 'r' ORDER BY ts;
DROP FOREIGN TABLE rc_v;

-- with the cache off (a new session: the setting is taken when a table is opened)
\c
SET widecol_fdw.row_cache_size = 0;
SET plan_cache_mode = force_generic_plan;
SELECT widecol_flush('rc_scores');
SELECT rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student001'$$) +
       rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student001'$$) +
       rc_hits($$SELECT * FROM rc_scores WHERE rowkey = 'student001'$$) AS cache_off;
SELECT rc_differ() AS differ_cache_off;
SELECT * FROM rc_scores WHERE rowkey = 'student001';

DROP FOREIGN TABLE rc_cells;
DROP FOREIGN TABLE rc_scores;
DROP TABLE rc_twin;
DROP FUNCTION rc_hits(text);
DROP FUNCTION rc_differ();
