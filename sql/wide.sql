--
-- wide: wide tables, one SQL row per rowkey (column option cell)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS widecol_fdw;
CREATE SERVER IF NOT EXISTS wide FOREIGN DATA WRAPPER widecol_fdw;
RESET client_min_messages;

CREATE FUNCTION wide_try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE q;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

-- the scores example: grade: (empty qualifier) and the whole family course
CREATE FOREIGN TABLE scores (
    rowkey text COLLATE "C",
    grade  int   OPTIONS (cell 'grade:'),
    course jsonb OPTIONS (cell 'course:*')
) SERVER wide OPTIONS (families 'grade,course');

INSERT INTO scores VALUES ('Tom', 5, '{"math": 97, "art": 87}'),
                          ('Jim', 4, '{"": 80}');
SELECT * FROM scores ORDER BY rowkey;

-- a tall table over the same store shows the cells, and writes them
CREATE FOREIGN TABLE scores_cells (
    rowkey text COLLATE "C", family text, qualifier text, ts bigint, value bytea
) SERVER wide OPTIONS (store 'scores');
SELECT rowkey, family, qualifier, value FROM scores_cells;
-- an older version of Jim's course: (the wide row keeps the newest) and a new row
INSERT INTO scores_cells VALUES ('Jim', 'course', '', 1, '89'),
                                ('Ann', 'course', 'bio', NULL, 'A+');
SELECT * FROM scores ORDER BY rowkey;
SELECT rowkey, qualifier, ts, convert_from(value, 'UTF8') FROM scores_cells
 WHERE rowkey = 'Jim' AND family = 'course' AND ts = 1;

-- the jsonb rule: a value that is valid JSON is that JSON, anything else a string
INSERT INTO scores_cells VALUES
    ('Eve', 'course', 'a', NULL, '97'),
    ('Eve', 'course', 'b', NULL, 'A+'),
    ('Eve', 'course', 'c', NULL, '{"x": [1, 2]}'),
    ('Eve', 'course', 'd', NULL, '"quoted"'),
    ('Eve', 'course', 'e', NULL, 'true'),
    ('Eve', 'course', 'f', NULL, '\x00ff'),
    ('Eve', 'course', 'g', NULL, ''),
    ('Eve', 'course', 'h', NULL, 'null');
SELECT course FROM scores WHERE rowkey = 'Eve';
-- written back: a string as its text, anything else as its JSON text, null as no cell
INSERT INTO scores VALUES ('Max', NULL, '{"s": "A+", "n": 1.50, "o": {"k": [true]}, "z": null}');
SELECT qualifier, convert_from(value, 'UTF8') FROM scores_cells WHERE rowkey = 'Max';
SELECT course FROM scores WHERE rowkey = 'Max';
-- a grade written by the tall table as text is not an int's binary form
INSERT INTO scores_cells VALUES ('Bad', 'grade', '', NULL, 'x');
SELECT wide_try($$SELECT * FROM scores WHERE rowkey = 'Bad'$$);
DELETE FROM scores_cells WHERE rowkey = 'Bad';

-- UPDATE writes the changed columns; NULL deletes the cell, jsonb replaces the family
UPDATE scores SET grade = NULL WHERE rowkey = 'Tom' RETURNING *;
SELECT family, qualifier FROM scores_cells WHERE rowkey = 'Tom';
UPDATE scores SET course = '{"math": 99}' WHERE rowkey = 'Tom' RETURNING rowkey, course;
UPDATE scores SET grade = grade + 1 WHERE grade IS NOT NULL RETURNING rowkey, grade;
SELECT * FROM scores ORDER BY rowkey;
-- a new rowkey moves the row
UPDATE scores SET rowkey = 'Tim' WHERE rowkey = 'Tom';
SELECT * FROM scores WHERE rowkey IN ('Tom', 'Tim');
-- DELETE removes the mapped cells of the row
DELETE FROM scores WHERE rowkey = 'Jim' RETURNING *;
SELECT count(*) FROM scores_cells WHERE rowkey = 'Jim';
SELECT * FROM scores ORDER BY rowkey;
TRUNCATE scores_cells;
SELECT count(*) FROM scores;

-- users: typed cells, COPY, NULLs, compared with an ordinary table
CREATE FOREIGN TABLE users (
    rowkey  text COLLATE "C",
    name    text        OPTIONS (cell 'info:name'),
    age     int         OPTIONS (cell 'info:age'),
    born    date        OPTIONS (cell 'info:born'),
    score   numeric     OPTIONS (cell 'stats:score'),
    follows jsonb       OPTIONS (cell 'follows:*')
) SERVER wide OPTIONS (families 'info,stats,follows');
CREATE TABLE users_plain (rowkey text COLLATE "C" PRIMARY KEY, name text, age int,
                          born date, score numeric, follows jsonb);
INSERT INTO users_plain
SELECT 'u' || lpad(i::text, 3, '0'),
       CASE WHEN i % 7 <> 0 THEN 'user ' || i END,
       CASE WHEN i % 5 <> 0 OR i % 7 = 0 THEN 20 + i % 50 END,
       CASE WHEN i % 3 = 0 THEN date '2000-01-01' + i END,
       CASE WHEN i % 4 = 0 THEN i / 8.0 END,
       CASE WHEN i % 2 = 0 THEN jsonb_build_object('u' || lpad((i + 1)::text, 3, '0'), 1) END
  FROM generate_series(1, 200) i;
INSERT INTO users_plain VALUES ('x001', NULL, NULL, NULL, NULL, '{"u001": 2}');
INSERT INTO users SELECT * FROM users_plain WHERE rowkey < 'u100';
COPY users FROM stdin;
u100	user 100	\N	\N	12.5	{"u101": "yes"}
\.
INSERT INTO users SELECT * FROM users_plain WHERE rowkey > 'u100';
UPDATE users_plain SET follows = '{"u101": "yes"}' WHERE rowkey = 'u100';
SELECT count(*) FROM users;
SELECT count(*) FROM (SELECT * FROM users EXCEPT SELECT * FROM users_plain) d;
SELECT count(*) FROM (SELECT * FROM users_plain EXCEPT SELECT * FROM users) d;
SELECT * FROM users WHERE rowkey IN ('u005', 'u007', 'u035', 'u140') ORDER BY rowkey;
SELECT count(name), count(age), count(born), count(score), count(follows) FROM users;
SELECT age, count(*) FROM users WHERE age < 25 GROUP BY age ORDER BY age;
-- a row whose only cell is in another family still shows in a query of one column
SELECT rowkey, name FROM users WHERE rowkey = 'x001';
INSERT INTO users (rowkey) VALUES ('nobody');	-- ERROR: no cell

-- pushdown: rowkey conditions, order, only the families needed
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE rowkey = 'u010';
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE rowkey IN ('u010', 'u020');
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE rowkey >= 'u010' AND rowkey < 'u020';
EXPLAIN (COSTS OFF) SELECT * FROM users WHERE rowkey LIKE 'u01%';
EXPLAIN (COSTS OFF) SELECT rowkey, name FROM users ORDER BY rowkey;
EXPLAIN (COSTS OFF) SELECT name FROM users WHERE name = 'user 10';
SELECT rowkey, name FROM users WHERE rowkey LIKE 'u01%' ORDER BY rowkey;
SELECT rowkey FROM users WHERE rowkey >= 'u195' ORDER BY rowkey;
SELECT name FROM users WHERE name = 'user 10';
-- the engine's counters: one family of three, one point read
SELECT widecol_flush('users');
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT name FROM users WHERE name IS NOT NULL AND rowkey = 'u010';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF)
SELECT name, follows FROM users WHERE rowkey = 'u010';
-- a parameterized nested loop: one point read per outer row
CREATE TABLE picks (k text COLLATE "C");
INSERT INTO picks VALUES ('u002'), ('u004'), ('zzz');
ANALYZE picks;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF) SELECT p.k, u.name FROM picks p JOIN users u ON u.rowkey = p.k;
SELECT p.k, u.name FROM picks p JOIN users u ON u.rowkey = p.k ORDER BY p.k;
RESET enable_hashjoin;
RESET enable_mergejoin;
ANALYZE users;

-- cell filters: "column = value" on a single-cell column, of a type whose equal values are
-- equal bytes, is also checked on the cell before the row is made (still in Filter)
EXPLAIN (COSTS OFF) SELECT rowkey FROM users WHERE age = 25;
EXPLAIN (COSTS OFF) SELECT rowkey FROM users WHERE 25 = age AND born = date '2000-01-04' AND name = 'user 3';
EXPLAIN (COSTS OFF) SELECT rowkey FROM users WHERE age = 25 AND rowkey >= 'u100';
-- integers of other types too: the value in the column's type, none if it does not fit
EXPLAIN (COSTS OFF) SELECT rowkey FROM users WHERE age = 25::bigint;
SELECT count(*) FROM users WHERE age = 21::bigint;
SELECT count(*) FROM users WHERE age = 21::smallint;
SELECT count(*) FROM users WHERE age = 4294967317;  -- 2^32 + 21
-- not: numeric (1.0 = 1.00), jsonb, another cross-type operator, a nondeterministic
-- collation, <
EXPLAIN (COSTS OFF) SELECT rowkey FROM users WHERE score = 2.5;
EXPLAIN (COSTS OFF) SELECT rowkey FROM users WHERE follows = '{"u003": 1}';
EXPLAIN (COSTS OFF) SELECT rowkey FROM users WHERE born = timestamp '2000-01-04';
CREATE COLLATION wide_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
EXPLAIN (COSTS OFF) SELECT rowkey FROM users WHERE name = 'USER 3' COLLATE wide_ci;
SELECT rowkey FROM users WHERE name = 'USER 3' COLLATE wide_ci;
EXPLAIN (COSTS OFF) SELECT rowkey FROM users WHERE age < 21;
-- the same rows as the ordinary table, for every value (a parameter per rescan)
SELECT count(*) AS differ FROM generate_series(15, 75) a
 WHERE (SELECT count(*) FROM users WHERE age = a) <> (SELECT count(*) FROM users_plain WHERE age = a);
SELECT count(*) AS differ FROM generate_series(0, 210) i
 WHERE (SELECT array_agg(rowkey ORDER BY rowkey) FROM users WHERE name = 'user ' || i AND born = date '2000-01-01' + i)
       IS DISTINCT FROM
       (SELECT array_agg(rowkey ORDER BY rowkey) FROM users_plain WHERE name = 'user ' || i AND born = date '2000-01-01' + i);
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) SELECT rowkey FROM users WHERE age = 21;
SELECT rowkey, age FROM users WHERE age = 21 ORDER BY rowkey;
-- a reversed scan, and point reads (the row cache's path) filter alike
SELECT array_agg(rowkey) FROM (SELECT rowkey FROM users WHERE age = 21 ORDER BY rowkey DESC) r;
SELECT array_agg(rowkey) FROM (SELECT rowkey FROM users_plain WHERE age = 21 ORDER BY rowkey DESC) r;
SELECT count(*) FROM users u JOIN users_plain p ON u.rowkey = p.rowkey AND u.age = p.age WHERE p.age = 21;
-- a generic plan's parameter; NULL matches nothing
PREPARE by_age(int) AS SELECT count(*) FROM users WHERE age = $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE by_age(21);
EXECUTE by_age(21);
EXECUTE by_age(NULL);
RESET plan_cache_mode;
DEALLOCATE by_age;
-- rows the filter leaves out are not locked
BEGIN;
SELECT rowkey FROM users WHERE age = 21 ORDER BY rowkey FOR UPDATE;
SELECT count(*) AS row_locks FROM pg_locks
 WHERE locktype = 'tuple' AND relation = 'users'::regclass AND pid = pg_backend_pid();
SELECT count(*) FROM users_plain WHERE age = 21;
ROLLBACK;
-- a cell written through a tall table as bytes is the same value
CREATE FOREIGN TABLE users_cells (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value bytea)
    SERVER wide OPTIONS (store 'users');
BEGIN;
INSERT INTO users_cells VALUES ('v001', 'info', 'age', 1, '\x00000015');
SELECT rowkey, age FROM users WHERE age = 21 AND rowkey > 'u9';
ROLLBACK;
DROP FOREIGN TABLE users_cells;
DROP COLLATION wide_ci;

-- row triggers, defaults and stored generated columns, against an ordinary table: what a
-- BEFORE UPDATE trigger changes and the generated columns computed from the SET ones are
-- written too (UPDATE writes only the columns that change)
CREATE FOREIGN TABLE wt (rowkey text COLLATE "C", n int OPTIONS (cell 'f:n'),
    note text OPTIONS (cell 'f:note') DEFAULT 'dflt',
    dbl int OPTIONS (cell 'f:dbl') GENERATED ALWAYS AS (n * 2) STORED) SERVER wide OPTIONS (families 'f');
CREATE TABLE wt_plain (rowkey text COLLATE "C" PRIMARY KEY, n int, note text DEFAULT 'dflt',
    dbl int GENERATED ALWAYS AS (n * 2) STORED);
CREATE FUNCTION wt_bump() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.note = 'skip' THEN RETURN NULL; END IF;
  NEW.n := NEW.n + 100;
  IF NEW.note = 'clear' THEN NEW.note := NULL; END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER wt_bump BEFORE UPDATE ON wt FOR EACH ROW EXECUTE FUNCTION wt_bump();
CREATE TRIGGER wt_bump BEFORE UPDATE ON wt_plain FOR EACH ROW EXECUTE FUNCTION wt_bump();
INSERT INTO wt (rowkey, n) VALUES ('a', 1), ('b', 2), ('c', 3) RETURNING *;
INSERT INTO wt_plain (rowkey, n) VALUES ('a', 1), ('b', 2), ('c', 3);
UPDATE wt SET note = 'x' WHERE rowkey = 'a' RETURNING *;
UPDATE wt_plain SET note = 'x' WHERE rowkey = 'a';
UPDATE wt SET note = 'clear' WHERE rowkey = 'b' RETURNING *;
UPDATE wt_plain SET note = 'clear' WHERE rowkey = 'b';
UPDATE wt SET note = 'skip' WHERE rowkey = 'c' RETURNING *;
UPDATE wt_plain SET note = 'skip' WHERE rowkey = 'c';
DROP TRIGGER wt_bump ON wt;
DROP TRIGGER wt_bump ON wt_plain;
UPDATE wt SET n = 5 WHERE rowkey = 'c' RETURNING *;
UPDATE wt_plain SET n = 5 WHERE rowkey = 'c';
UPDATE wt SET note = DEFAULT WHERE rowkey = 'a';
UPDATE wt_plain SET note = DEFAULT WHERE rowkey = 'a';
SELECT * FROM wt ORDER BY rowkey;
SELECT count(*) AS differ FROM ((TABLE wt EXCEPT TABLE wt_plain) UNION ALL (TABLE wt_plain EXCEPT TABLE wt)) d;
DROP FOREIGN TABLE wt;
DROP TABLE wt_plain;
DROP FUNCTION wt_bump();

-- NOT NULL and CHECK constraints are checked on every row written (PostgreSQL leaves a
-- foreign table's to its wrapper), by INSERT, COPY and UPDATE (not by a direct UPDATE, which
-- such a table does not get), tall tables too: 23502, 23514, nothing stored
CREATE FOREIGN TABLE wc (rowkey text COLLATE "C" NOT NULL, n int OPTIONS (cell 'f:n') CHECK (n > 0),
    note text OPTIONS (cell 'f:note') NOT NULL) SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE tc (rowkey text COLLATE "C", family text, qualifier text, ts bigint,
    value text CHECK (value <> 'bad')) SERVER wide OPTIONS (families 'f');
INSERT INTO wc VALUES ('a', 1, 'x');
SELECT wide_try($$INSERT INTO wc VALUES ('b', 2, 'y'), ('c', -1, 'z')$$);
SELECT wide_try($$INSERT INTO wc (rowkey, n) VALUES ('b', 2)$$);
SELECT wide_try($$COPY wc FROM PROGRAM 'printf "b\t0\ty\n"'$$);
EXPLAIN (COSTS OFF) UPDATE wc SET n = -5 WHERE rowkey = 'a';
SELECT wide_try($$UPDATE wc SET n = -5 WHERE rowkey = 'a'$$);
SELECT wide_try($$UPDATE wc SET note = NULL WHERE rowkey = 'a'$$);
CREATE FOREIGN TABLE wd (rowkey text COLLATE "C" NOT NULL, n int OPTIONS (cell 'f:n')) SERVER wide OPTIONS (families 'f');
EXPLAIN (COSTS OFF) UPDATE wd SET n = 5 WHERE rowkey = 'a';  -- direct: its NOT NULL rowkey is never set
DROP FOREIGN TABLE wd;
SELECT * FROM wc;
SELECT wide_try($$INSERT INTO tc VALUES ('a', 'f', 'q', 1, 'bad')$$);
INSERT INTO tc VALUES ('a', 'f', 'q', 1, 'ok');
SELECT wide_try($$UPDATE tc SET value = 'bad'$$);
SELECT rowkey, value FROM tc;
DROP FOREIGN TABLE wc, tc;

-- UPDATE ... FROM and DELETE ... USING whose join gives a row twice: the row is changed,
-- counted and returned once, as an ordinary table's (its first join row)
CREATE FOREIGN TABLE wj (rowkey text COLLATE "C", n int OPTIONS (cell 'f:n')) SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE tj (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'f');
INSERT INTO wj VALUES ('a', 0), ('b', 0);
INSERT INTO tj VALUES ('a', 'f', 'q', 1, '0'), ('b', 'f', 'q', 1, '0');
SET enable_hashjoin = off;
SET enable_mergejoin = off;
EXPLAIN (COSTS OFF)
UPDATE wj SET n = wj.n + v.x FROM (VALUES ('a', 1), ('a', 2), ('b', 5)) v(k, x) WHERE wj.rowkey = v.k;
UPDATE wj SET n = wj.n + v.x FROM (VALUES ('a', 1), ('a', 2), ('b', 5)) v(k, x) WHERE wj.rowkey = v.k
RETURNING wj.*, v.x;
UPDATE tj SET value = v.x FROM (VALUES ('a', '1'), ('a', '2'), ('b', '5')) v(k, x) WHERE tj.rowkey = v.k
RETURNING tj.rowkey, tj.value;
SELECT * FROM wj ORDER BY rowkey;
SELECT rowkey, value FROM tj ORDER BY rowkey;
DELETE FROM wj USING (VALUES ('a'), ('a')) v(k) WHERE wj.rowkey = v.k RETURNING wj.*;
DELETE FROM tj USING (VALUES ('b'), ('b')) v(k) WHERE tj.rowkey = v.k RETURNING tj.rowkey;
RESET enable_hashjoin;
RESET enable_mergejoin;
DROP FOREIGN TABLE wj, tj;

-- partitions: a partitioned table of wide (or tall) foreign partitions.  CREATE FOREIGN
-- TABLE ... PARTITION OF takes no column options, so the cells are mapped with ALTER COLUMN
-- afterwards (a WARNING until then); rowkey conditions prune and are pushed into each
-- partition, and ORDER BY rowkey appends the range partitions in order without a sort.  A row
-- written into a partition must be within its bounds: PostgreSQL moves a row whose new key
-- belongs to another partition only out of a local partition, so here that UPDATE fails
-- (23514), as a direct INSERT of a key of another partition does
CREATE TABLE wp (rowkey text COLLATE "C" NOT NULL, n int, note text) PARTITION BY RANGE (rowkey);
CREATE FOREIGN TABLE wp1 PARTITION OF wp FOR VALUES FROM ('a') TO ('m') SERVER wide OPTIONS (families 'f');
ALTER FOREIGN TABLE wp1 ALTER COLUMN n OPTIONS (cell 'f:n'), ALTER COLUMN note OPTIONS (cell 'f:note');
CREATE FOREIGN TABLE wp2 PARTITION OF wp FOR VALUES FROM ('m') TO ('z') SERVER wide OPTIONS (families 'f');
ALTER FOREIGN TABLE wp2 ALTER COLUMN n OPTIONS (cell 'f:n'), ALTER COLUMN note OPTIONS (cell 'f:note');
CREATE TABLE wp_plain (rowkey text COLLATE "C" NOT NULL, n int, note text) PARTITION BY RANGE (rowkey);
CREATE TABLE wp_plain1 PARTITION OF wp_plain FOR VALUES FROM ('a') TO ('m');
CREATE TABLE wp_plain2 PARTITION OF wp_plain FOR VALUES FROM ('m') TO ('z');
INSERT INTO wp SELECT chr(97 + i % 25) || i, i, CASE WHEN i % 3 > 0 THEN 'note ' || i END
  FROM generate_series(0, 99) i;
INSERT INTO wp_plain SELECT * FROM wp;
COPY wp FROM stdin;
b1000	1000	copied
q1000	1001	\N
\.
COPY wp_plain FROM stdin;
b1000	1000	copied
q1000	1001	\N
\.
EXPLAIN (COSTS OFF) SELECT * FROM wp WHERE rowkey = 'q16';
SELECT * FROM wp WHERE rowkey = 'q16';
EXPLAIN (COSTS OFF) SELECT rowkey FROM wp WHERE rowkey >= 'k' ORDER BY rowkey LIMIT 5;
SELECT rowkey FROM wp WHERE rowkey >= 'k' ORDER BY rowkey LIMIT 5;
UPDATE wp SET rowkey = 'b' || rowkey, n = n + 1 WHERE rowkey IN ('b1', 'c2') RETURNING tableoid::regclass, *;
UPDATE wp_plain SET rowkey = 'b' || rowkey, n = n + 1 WHERE rowkey IN ('b1', 'c2');
SELECT wide_try($$UPDATE wp SET rowkey = 'y' || rowkey WHERE rowkey = 'e4'$$);
SELECT wide_try($$INSERT INTO wp1 VALUES ('q1001', 1, 'x')$$);
SELECT count(*) FROM wp WHERE rowkey IN ('e4', 'ye4', 'q1001');
UPDATE wp SET note = 'changed' WHERE n % 10 = 0;
UPDATE wp_plain SET note = 'changed' WHERE n % 10 = 0;
DELETE FROM wp WHERE rowkey LIKE 'd%';
DELETE FROM wp_plain WHERE rowkey LIKE 'd%';
SELECT count(*), count(*) FILTER (WHERE tableoid = 'wp2'::regclass) AS in_wp2 FROM wp;
SELECT count(*) AS differ FROM ((TABLE wp EXCEPT TABLE wp_plain) UNION ALL (TABLE wp_plain EXCEPT TABLE wp)) d;
-- row marks through the parent: FOR UPDATE, and the parent as the other table of an UPDATE
-- ... FROM or a DELETE ... USING; each wide partition locks its rows by rowkey (the parent's
-- ctid junk column is carried, without a tuple id, as for the table alone it is an error)
BEGIN;
SELECT rowkey, n FROM wp WHERE rowkey IN ('q16', 'b1000') ORDER BY rowkey FOR UPDATE;
SELECT count(*) AS row_locks FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'tuple';
COMMIT;
CREATE TABLE wp_h (k text COLLATE "C", n int);
INSERT INTO wp_h VALUES ('q16', 0), ('b1000', 0), ('zz', 0);
UPDATE wp_h SET n = wp.n FROM wp WHERE wp.rowkey = wp_h.k;
DELETE FROM wp_h USING wp WHERE wp.rowkey = wp_h.k AND wp.n = 1000;
SELECT * FROM wp_h ORDER BY k;
DROP TABLE wp_h;
SELECT wide_try($$SELECT ctid FROM wp1$$);
-- DELETE ... RETURNING through the parent from two wide partitions, and partitions attached
-- with their columns in another order (rowkey, family, ts at other attnums)
DELETE FROM wp WHERE rowkey IN ('b1000', 'q1000') RETURNING tableoid::regclass, *;
CREATE TABLE wq (rowkey text COLLATE "C" NOT NULL, n int) PARTITION BY RANGE (rowkey);
CREATE FOREIGN TABLE wq1 (rowkey text COLLATE "C" NOT NULL, n int OPTIONS (cell 'f:n')) SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE wq2 (n int OPTIONS (cell 'f:n'), rowkey text COLLATE "C" NOT NULL) SERVER wide OPTIONS (families 'f');
ALTER TABLE wq ATTACH PARTITION wq1 FOR VALUES FROM (MINVALUE) TO ('m');
ALTER TABLE wq ATTACH PARTITION wq2 FOR VALUES FROM ('m') TO (MAXVALUE);
INSERT INTO wq VALUES ('a', 1), ('n', 2);
UPDATE wq SET n = n + 10 RETURNING tableoid::regclass, *;
DELETE FROM wq WHERE n = 12 RETURNING tableoid::regclass, *;
SELECT * FROM wq ORDER BY rowkey;
CREATE TABLE tq (rowkey text COLLATE "C" NOT NULL, family text, qualifier text, ts bigint, value text)
    PARTITION BY RANGE (rowkey);
CREATE FOREIGN TABLE tq1 PARTITION OF tq FOR VALUES FROM (MINVALUE) TO ('m') SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE tq2 (value text, ts bigint, qualifier text, family text, rowkey text COLLATE "C" NOT NULL)
    SERVER wide OPTIONS (families 'f');
ALTER TABLE tq ATTACH PARTITION tq2 FOR VALUES FROM ('m') TO (MAXVALUE);
INSERT INTO tq VALUES ('a', 'f', 'q', 1, 'x'), ('n', 'f', 'q', 1, 'y');
UPDATE tq SET value = value || '!' RETURNING tableoid::regclass, *;
DELETE FROM tq WHERE value = 'y!' RETURNING tableoid::regclass, *;
SELECT * FROM tq ORDER BY rowkey;
DROP TABLE wq, tq;
-- an UPDATE writes as it goes: its AFTER triggers see the rows it changed; rows that swap or
-- shift their rowkeys keep every row (as an ordinary table's do)
CREATE TABLE wv_h (rowkey text COLLATE "C", a int, b text);
CREATE FOREIGN TABLE wv (rowkey text COLLATE "C", a int OPTIONS (cell 'f:a'), b text OPTIONS (cell 'f:b'))
    SERVER wide OPTIONS (families 'f');
CREATE FUNCTION wv_show() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE '% % sees %', TG_TABLE_NAME, TG_LEVEL,
    (SELECT string_agg(rowkey || '=' || a || '/' || coalesce(b, '-'), ',' ORDER BY rowkey) FROM wv);
  RETURN NULL;
END $$;
CREATE TRIGGER wv_row AFTER UPDATE ON wv FOR EACH ROW EXECUTE FUNCTION wv_show();
INSERT INTO wv VALUES ('a', 1, 'x'), ('b', 2, NULL), ('c', 3, 'z');
INSERT INTO wv_h SELECT * FROM wv;
UPDATE wv SET a = a * 10 WHERE rowkey < 'c';
DROP TRIGGER wv_row ON wv;
UPDATE wv SET rowkey = CASE rowkey WHEN 'a' THEN 'b' WHEN 'b' THEN 'a' ELSE rowkey END;
UPDATE wv SET rowkey = chr(ascii(rowkey) + 1);
UPDATE wv_h SET a = a * 10 WHERE rowkey < 'c';
UPDATE wv_h SET rowkey = CASE rowkey WHEN 'a' THEN 'b' WHEN 'b' THEN 'a' ELSE rowkey END;
UPDATE wv_h SET rowkey = chr(ascii(rowkey) + 1);
SELECT * FROM wv ORDER BY rowkey;
SELECT count(*) AS differ FROM ((TABLE wv EXCEPT TABLE wv_h) UNION ALL (TABLE wv_h EXCEPT TABLE wv)) d;
DROP FOREIGN TABLE wv;
DROP TABLE wv_h;
DROP FUNCTION wv_show();
-- a tall partition: the same
CREATE TABLE tp (rowkey text COLLATE "C" NOT NULL, family text COLLATE "C", qualifier text COLLATE "C", ts bigint, value text)
    PARTITION BY RANGE (rowkey);
CREATE FOREIGN TABLE tp1 PARTITION OF tp FOR VALUES FROM ('a') TO ('m') SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE tp2 PARTITION OF tp FOR VALUES FROM ('m') TO ('z') SERVER wide OPTIONS (families 'f');
INSERT INTO tp SELECT chr(97 + i % 25) || i, 'f', 'q' || (i % 3), i, 'v' || i FROM generate_series(0, 99) i;
EXPLAIN (COSTS OFF) SELECT * FROM tp WHERE rowkey = 'b1' AND family = 'f';
SELECT * FROM tp WHERE rowkey = 'b1' AND family = 'f';
SELECT rowkey, qualifier FROM tp WHERE rowkey >= 'x' ORDER BY rowkey, family, qualifier, ts DESC LIMIT 3;
DROP TABLE wp, wp_plain, tp;

-- transactions
BEGIN;
INSERT INTO users (rowkey, name) VALUES ('u999', 'temp');
UPDATE users SET age = NULL WHERE rowkey = 'u001';
SELECT rowkey, name, age FROM users WHERE rowkey IN ('u001', 'u999') ORDER BY rowkey;
ROLLBACK;
SELECT rowkey, name, age FROM users WHERE rowkey IN ('u001', 'u999') ORDER BY rowkey;
BEGIN;
DELETE FROM users WHERE rowkey = 'u002';
SAVEPOINT s;
DELETE FROM users WHERE rowkey = 'u003';
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT rowkey FROM users WHERE rowkey < 'u005' ORDER BY rowkey;
SELECT rowkey, name FROM users WHERE rowkey = 'u004' FOR UPDATE;

-- errors: each with its SQLSTATE, nothing created or stored
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (cell 'nofam:a'))
                  SERVER wide OPTIONS (families 'f')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (cell 'fa'))
                  SERVER wide OPTIONS (families 'f')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (cell ':a'))
                  SERVER wide OPTIONS (families 'f')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (cell 'f:a'), value text)
                  SERVER wide OPTIONS (families 'f')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (cell 'f:a'),
                  b text OPTIONS (cell 'f:a')) SERVER wide OPTIONS (families 'f')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (cell 'f:a'),
                  b jsonb OPTIONS (cell 'f:*')) SERVER wide OPTIONS (families 'f')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a text OPTIONS (cell 'f:*'))
                  SERVER wide OPTIONS (families 'f')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text OPTIONS (cell 'f:k'), a int OPTIONS (cell 'f:a'))
                  SERVER wide OPTIONS (families 'f')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (celll 'f:a'))
                  SERVER wide OPTIONS (families 'f')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (cell 'f:a'))
                  SERVER wide OPTIONS (store 'scores', families 'f')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (cell 'f:a'))
                  SERVER wide OPTIONS (store 'no_such_table')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (cell 'f:a'))
                  SERVER wide OPTIONS (store 'users_plain')$$);
SELECT wide_try($$CREATE FOREIGN TABLE w1 (rowkey text, a int OPTIONS (cell 'grade:'))
                  SERVER wide OPTIONS (store 'scores_cells')$$);
SELECT wide_try($$ALTER FOREIGN TABLE users OPTIONS (SET families 'info,follows')$$);
SELECT wide_try($$ALTER FOREIGN TABLE users ALTER COLUMN age OPTIONS (SET cell 'nofam:x')$$);
SELECT wide_try($$ALTER FOREIGN TABLE users ADD COLUMN extra text$$);
SELECT count(*) FROM pg_class WHERE relname = 'w1';
-- pg_dump's output defines a wide table's cells after CREATE, a column at a time: a WARNING
-- for each state in between, and the table is refused until every column maps a cell
CREATE FOREIGN TABLE w1 (rowkey text, a int, b int) SERVER wide OPTIONS (families 'f');
ALTER FOREIGN TABLE w1 ALTER COLUMN a OPTIONS (cell 'f:a');
SELECT wide_try($$SELECT * FROM w1$$);
SELECT wide_try($$ALTER FOREIGN TABLE w1 ALTER COLUMN b OPTIONS (cell 'nofam:b')$$);
ALTER FOREIGN TABLE w1 ALTER COLUMN b OPTIONS (cell 'f:b');
INSERT INTO w1 VALUES ('k', 1, 2) RETURNING *;
DROP FOREIGN TABLE w1;
SELECT wide_try($$INSERT INTO users VALUES ('u500', 'x', 1, NULL, NULL, '[1, 2]')$$);
SELECT wide_try($$INSERT INTO users VALUES ('u500', 'x', 1, NULL, NULL, '"s"')$$);
SELECT wide_try($$INSERT INTO users VALUES (NULL, 'x')$$);
SELECT wide_try($$INSERT INTO users VALUES ('', 'x')$$);
SELECT wide_try($$UPDATE users SET follows = '3' WHERE rowkey = 'u010'$$);
SELECT wide_try($$INSERT INTO users (rowkey, name) SELECT 'v' || i, 'ok' FROM generate_series(1, 3) i
                  UNION ALL SELECT 'v4', NULL$$);
-- a family's object of no values writes no cell either: the same error, not a row that
-- INSERT counts and no query finds (HBase refuses a Put of no cells)
SELECT wide_try($$INSERT INTO users (rowkey, follows) VALUES ('v5', '{}')$$);
SELECT wide_try($$INSERT INTO users (rowkey, follows) VALUES ('v5', '{"a": null}')$$);
SELECT wide_try($$COPY users (rowkey, follows) FROM PROGRAM 'printf "v5\t{}\n"'$$);
SELECT wide_try($$INSERT INTO users (rowkey, follows) VALUES ('v5', '[]')$$);
SELECT count(*) FROM users WHERE rowkey LIKE 'v%' OR rowkey = 'u500';
SELECT follows FROM users WHERE rowkey = 'u010';

-- the store's own table cannot be dropped while another shows its store
SELECT wide_try($$DROP FOREIGN TABLE scores$$);
DROP FOREIGN TABLE scores_cells;
INSERT INTO scores VALUES ('Kim', 3, NULL);
SELECT * FROM scores;
-- a tall table can be the store's own, the wide one shows it
CREATE FOREIGN TABLE hist (rowkey text COLLATE "C", family text, qualifier text,
                           ts bigint, value text) SERVER wide OPTIONS (families 'v');
INSERT INTO hist VALUES ('a', 'v', 'x', 1, 'old'), ('a', 'v', 'x', 2, 'new'), ('b', 'v', 'y', 1, 'why');
-- a row lock of a tall table: one lock; once a wide table shows the store, its rowkey's too
-- (specs/iso_tall_wide.spec)
CREATE VIEW hist_locks AS SELECT mode, count(*) FROM pg_locks
 WHERE locktype = 'tuple' AND relation = 'hist'::regclass AND pid = pg_backend_pid() GROUP BY 1 ORDER BY 1;
BEGIN;
UPDATE hist SET value = 'newer' WHERE rowkey = 'a' AND ts = 2;
SELECT * FROM hist_locks;
ROLLBACK;
CREATE FOREIGN TABLE hist_wide (rowkey text COLLATE "C", x text OPTIONS (cell 'v:x'),
                                y text OPTIONS (cell 'v:y')) SERVER wide OPTIONS (store 'hist');
BEGIN;
UPDATE hist SET value = 'newer' WHERE rowkey = 'a' AND ts = 2;
SELECT * FROM hist_locks;
ROLLBACK;
DROP VIEW hist_locks;
SELECT * FROM hist_wide ORDER BY rowkey;
BEGIN;
UPDATE hist_wide SET x = 'newer' WHERE rowkey = 'a';
SELECT rowkey, ts > 2 AS now, value FROM hist ORDER BY rowkey, ts;
ROLLBACK;
SELECT * FROM hist_wide ORDER BY rowkey;
DROP FOREIGN TABLE hist CASCADE;

-- changed column and table options (also in a transaction rolled back) show
-- at once in the session that read the table before
CREATE FOREIGN TABLE remap (rowkey text COLLATE "C", c text OPTIONS (cell 'f:x'))
    SERVER wide OPTIONS (families 'f,g');
CREATE FOREIGN TABLE remap_cells (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (store 'remap');
INSERT INTO remap_cells VALUES ('r', 'f', 'x', 1, 'fx'), ('r', 'f', 'y', 1, 'fy'), ('r', 'g', 'x', 1, 'gx');
SELECT * FROM remap;
ALTER FOREIGN TABLE remap ALTER COLUMN c OPTIONS (SET cell 'f:y');
SELECT * FROM remap;
BEGIN;
ALTER FOREIGN TABLE remap ALTER COLUMN c OPTIONS (SET cell 'g:x');
SELECT * FROM remap;
ROLLBACK;
SELECT * FROM remap;
ALTER FOREIGN TABLE remap OPTIONS (SET families 'f');
SELECT wide_try($$ALTER FOREIGN TABLE remap ALTER COLUMN c OPTIONS (SET cell 'g:x')$$);
SELECT wide_try($$SELECT * FROM remap$$);
ALTER FOREIGN TABLE remap ALTER COLUMN c OPTIONS (SET cell 'f:x');
SELECT * FROM remap;
-- a session keeps each table's columns worked out: a new type, a new and a
-- dropped column show at once too
ALTER FOREIGN TABLE remap ALTER COLUMN c TYPE bytea;
SELECT * FROM remap;
ALTER FOREIGN TABLE remap ADD COLUMN y text OPTIONS (cell 'f:y');
SELECT * FROM remap;
ALTER FOREIGN TABLE remap DROP COLUMN c;
SELECT * FROM remap;
DROP FOREIGN TABLE remap CASCADE;

-- a client whose key column has another name (YCSB's JDBC binding: usertable (ycsb_key,
-- field0, ...)): a view renames rowkey; it is updatable, and conditions and ORDER BY on the
-- renamed column go to the engine as on rowkey
CREATE FOREIGN TABLE usertable_wc (
    rowkey varchar COLLATE "C",
    field0 text OPTIONS (cell 'f:field0'),
    field1 text OPTIONS (cell 'f:field1')
) SERVER wide OPTIONS (families 'f', max_versions '1');
CREATE VIEW usertable AS SELECT rowkey AS ycsb_key, field0, field1 FROM usertable_wc;
PREPARE ins(varchar, text, text) AS INSERT INTO usertable (ycsb_key, field0, field1) VALUES ($1, $2, $3);
EXECUTE ins('user1', 'a', 'b');
EXECUTE ins('user2', 'c', 'd');
EXECUTE ins('user3', 'e', 'f');
PREPARE upd(text, varchar) AS UPDATE usertable SET field1 = $1 WHERE ycsb_key = $2;
EXECUTE upd('z', 'user2');
PREPARE rd(varchar) AS SELECT * FROM usertable WHERE ycsb_key = $1;
EXECUTE rd('user2');
PREPARE sc(varchar, int) AS SELECT * FROM usertable WHERE ycsb_key >= $1 ORDER BY ycsb_key LIMIT $2;
EXECUTE sc('user2', 5);
EXPLAIN (COSTS OFF) EXECUTE sc('user2', 5);
EXPLAIN (COSTS OFF) EXECUTE upd('z', 'user2');
PREPARE del(varchar) AS DELETE FROM usertable WHERE ycsb_key = $1;
EXECUTE del('user1');
SELECT * FROM usertable ORDER BY ycsb_key;
SELECT rowkey, field1 FROM usertable_wc ORDER BY rowkey;
DEALLOCATE ALL;
DROP VIEW usertable;
DROP FOREIGN TABLE usertable_wc;

-- INSERT ... ON CONFLICT DO NOTHING: a put if the row is absent, as into an
-- ordinary table with a primary key (ic_plain gets the same statements)
CREATE FOREIGN TABLE ic (rowkey text COLLATE "C", f text OPTIONS (cell 'f:f'), n int OPTIONS (cell 'g:n'))
    SERVER wide OPTIONS (families 'f,g');
CREATE TABLE ic_plain (rowkey text COLLATE "C" PRIMARY KEY, f text, n int);
CREATE FUNCTION ic_run(tab text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    r record;
    k bigint;
BEGIN
    EXECUTE format('INSERT INTO %I VALUES (''a'', ''x'', 1), (''b'', NULL, 2)', tab);
    -- an existing row, a new one, a row given twice, a row only in another family
    FOR r IN EXECUTE format('INSERT INTO %I VALUES (''a'', ''new'', 10), (''c'', ''z'', 3), (''d'', ''d1'', 4), (''d'', ''d2'', 5), (''b'', ''bb'', NULL) ON CONFLICT DO NOTHING RETURNING *', tab) LOOP
        RETURN NEXT format('inserted %s %s %s', r.rowkey, r.f, r.n);
    END LOOP;
    EXECUTE format('DELETE FROM %I WHERE rowkey = ''b''', tab);
    EXECUTE format('INSERT INTO %I (rowkey, f) SELECT k, ''sel'' FROM unnest(ARRAY[''a'', ''b'', ''e'', ''e'']) k ON CONFLICT DO NOTHING', tab);
    GET DIAGNOSTICS k = ROW_COUNT;
    RETURN NEXT format('INSERT ... SELECT: %s', k);
    -- a row written earlier in the transaction, one in a rolled-back subtransaction
    BEGIN
        EXECUTE format('INSERT INTO %I VALUES (''f'', ''f1'', 6) ON CONFLICT DO NOTHING', tab);
        RAISE division_by_zero;
    EXCEPTION WHEN division_by_zero THEN NULL;
    END;
    EXECUTE format('INSERT INTO %I VALUES (''f'', ''f2'', 7) ON CONFLICT DO NOTHING', tab);
    EXECUTE format('INSERT INTO %I VALUES (''f'', ''f3'', 8) ON CONFLICT DO NOTHING', tab);
    GET DIAGNOSTICS k = ROW_COUNT;
    RETURN NEXT format('f again: %s', k);
END $$;
SELECT ic_run('ic');
SELECT ic_run('ic_plain');
SELECT * FROM ic ORDER BY rowkey;
(SELECT * FROM ic EXCEPT SELECT * FROM ic_plain) UNION ALL (SELECT * FROM ic_plain EXCEPT SELECT * FROM ic);
-- through a view, and a partitioned table routing to a wide partition
CREATE VIEW ic_view AS SELECT rowkey AS k, f FROM ic;
INSERT INTO ic_view VALUES ('a', 'v'), ('g', 'v') ON CONFLICT DO NOTHING RETURNING *;
SET client_min_messages = error;  -- the WARNING of a PARTITION OF without the cells yet
CREATE TABLE icp (rowkey text COLLATE "C", f text, n int) PARTITION BY RANGE (rowkey);
CREATE FOREIGN TABLE icp1 PARTITION OF icp FOR VALUES FROM ('a') TO ('m') SERVER wide OPTIONS (families 'f,g');
RESET client_min_messages;
ALTER FOREIGN TABLE icp1 ALTER COLUMN f OPTIONS (cell 'f:f'), ALTER COLUMN n OPTIONS (cell 'g:n');
CREATE TABLE icp2 PARTITION OF icp FOR VALUES FROM ('m') TO ('z');
ALTER TABLE icp2 ADD PRIMARY KEY (rowkey);
INSERT INTO icp VALUES ('b', 'x', 1), ('p', 'y', 2);
INSERT INTO icp VALUES ('b', 'x2', 1), ('c', 'z', 2), ('p', 'y2', 2), ('q', 'y', 3)
    ON CONFLICT DO NOTHING RETURNING tableoid::regclass, *;
DROP TABLE icp;
-- a conflict target: PostgreSQL finds no unique index (a foreign table has none)
SELECT wide_try($$INSERT INTO ic VALUES ('h', 'h', 1) ON CONFLICT (rowkey) DO NOTHING$$);
SELECT count(*) FROM ic;
DROP VIEW ic_view;
DROP FOREIGN TABLE ic;
DROP TABLE ic_plain;
DROP FUNCTION ic_run(text);

-- UPDATE and DELETE ... WHERE CURRENT OF a cursor, as on an ordinary table
-- (co_plain gets the same statements)
CREATE FOREIGN TABLE co (rowkey text COLLATE "C", f text OPTIONS (cell 'f:f'), n int OPTIONS (cell 'f:n'))
    SERVER wide OPTIONS (families 'f');
CREATE TABLE co_plain (rowkey text COLLATE "C" PRIMARY KEY, f text, n int);
CREATE FUNCTION co_run(tab text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    cur refcursor;
    r record;
BEGIN
    EXECUTE format('INSERT INTO %I SELECT ''r'' || i, ''v'' || i, i FROM generate_series(1, 8) i', tab);
    -- a PL/pgSQL loop over a cursor (the cursor is a parameter of the UPDATE)
    OPEN cur FOR EXECUTE format('SELECT rowkey, n FROM %I WHERE n > 1 ORDER BY rowkey', tab);
    LOOP
        FETCH cur INTO r;
        EXIT WHEN NOT FOUND;
        IF r.n % 3 = 0 THEN
            EXECUTE format('DELETE FROM %I WHERE CURRENT OF %I', tab, cur);
        ELSE
            EXECUTE format('UPDATE %I SET n = n * 10 WHERE CURRENT OF %I', tab, cur);
        END IF;
        RETURN NEXT r.rowkey || ' ' || r.n;
    END LOOP;
    CLOSE cur;
END $$;
SELECT co_run('co');
SELECT co_run('co_plain');
SELECT * FROM co ORDER BY rowkey;
(SELECT * FROM co EXCEPT SELECT * FROM co_plain) UNION ALL (SELECT * FROM co_plain EXCEPT SELECT * FROM co);
BEGIN;
DECLARE c CURSOR FOR SELECT rowkey FROM co WHERE n > 20 ORDER BY rowkey;
FETCH 1 FROM c;
EXPLAIN (COSTS OFF) UPDATE co SET f = 'cur' WHERE CURRENT OF c;
UPDATE co SET f = 'cur' WHERE CURRENT OF c RETURNING *;
UPDATE co SET f = f || '+' WHERE CURRENT OF c RETURNING *;   -- the same row again
FETCH 1 FROM c;
DELETE FROM co WHERE CURRENT OF c RETURNING *;
UPDATE co SET f = 'gone' WHERE CURRENT OF c;                   -- deleted: nothing
FETCH ALL FROM c;
SELECT wide_try($$UPDATE co SET f = 'end' WHERE CURRENT OF c$$);  -- 24000: after the last row
COMMIT;
-- a cursor FOR UPDATE (its scan locked the row)
BEGIN;
DECLARE l CURSOR FOR SELECT * FROM co ORDER BY rowkey FOR UPDATE;
FETCH 2 FROM l;
UPDATE co SET n = -n WHERE CURRENT OF l RETURNING *;
COMMIT;
-- not a plain scan of the table: 24000; no such cursor: 34000
BEGIN;
DECLARE a CURSOR FOR SELECT count(*) FROM co;
FETCH 1 FROM a;
SELECT wide_try($$UPDATE co SET f = 'x' WHERE CURRENT OF a$$);
DECLARE p CURSOR FOR SELECT * FROM co_plain;
FETCH 1 FROM p;
SELECT wide_try($$UPDATE co SET f = 'x' WHERE CURRENT OF p$$);
SELECT wide_try($$DELETE FROM co WHERE CURRENT OF nosuch$$);
ROLLBACK;
SELECT * FROM co ORDER BY rowkey;
DROP FOREIGN TABLE co;
DROP TABLE co_plain;
DROP FUNCTION co_run(text);

-- fixed-size integers and bool are decoded without their receive function:
-- the same values, and cells of another size refused as the function would
CREATE FOREIGN TABLE fixed (
    rowkey text COLLATE "C",
    s smallint OPTIONS (cell 'f:s'), i int OPTIONS (cell 'f:i'), b bigint OPTIONS (cell 'f:b'),
    o oid OPTIONS (cell 'f:o'), t boolean OPTIONS (cell 'f:t')
) SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE fixed_cells (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value bytea)
    SERVER wide OPTIONS (store 'fixed');
INSERT INTO fixed VALUES ('max', 32767, 2147483647, 9223372036854775807, 4294967295, true),
                         ('min', -32768, -2147483648, -9223372036854775808, 0, false),
                         ('one', -1, -1, -1, 1, NULL);
SELECT * FROM fixed ORDER BY rowkey;
SELECT rowkey, qualifier, value FROM fixed_cells ORDER BY rowkey, qualifier;
SELECT s + 1, i::bigint + 1, b::numeric - 1, o, NOT t FROM fixed WHERE rowkey = 'min';
INSERT INTO fixed_cells VALUES ('odd', 'f', 't', 1, '\x02');  -- any byte but 0 is true
SELECT * FROM fixed WHERE rowkey = 'odd';
INSERT INTO fixed_cells VALUES ('bad', 'f', 's', 1, '\x000001'), ('bad', 'f', 'i', 1, '\x0001'),
    ('bad', 'f', 'b', 1, '\x000000000001'), ('bad', 'f', 'o', 1, '\x0000000001'),
    ('bad', 'f', 't', 1, '\x0101');
SELECT wide_try($$SELECT s FROM fixed WHERE rowkey = 'bad'$$);
SELECT wide_try($$SELECT i FROM fixed WHERE rowkey = 'bad'$$);
SELECT wide_try($$SELECT b FROM fixed WHERE rowkey = 'bad'$$);
SELECT wide_try($$SELECT o FROM fixed WHERE rowkey = 'bad'$$);
SELECT wide_try($$SELECT t FROM fixed WHERE rowkey = 'bad'$$);
SELECT i FROM fixed WHERE rowkey = 'bad';
DROP FOREIGN TABLE fixed, fixed_cells;

-- other types: a cell that is not a binary form of its column's type is 22P03 naming the
-- column, also where the receive function says 08P01 (a client's message cut short) or
-- XX000; what the type itself checks (a domain's constraint) passes as it is
CREATE DOMAIN wide_pos AS int CHECK (VALUE > 0);
CREATE FOREIGN TABLE typed (
    rowkey text COLLATE "C",
    n numeric OPTIONS (cell 'f:n'), j jsonb OPTIONS (cell 'f:j'),
    at timestamptz OPTIONS (cell 'f:at'), d wide_pos OPTIONS (cell 'f:d')
) SERVER wide OPTIONS (families 'f');
CREATE FOREIGN TABLE typed_cells (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value bytea)
    SERVER wide OPTIONS (store 'typed');
INSERT INTO typed VALUES ('good', 1.5, '{"a": [1]}', '2020-01-01 00:00:00+00', 7);
SELECT rowkey, n, j, at = '2020-01-01 00:00:00+00' AS at_ok, d FROM typed;
INSERT INTO typed_cells VALUES ('bad', 'f', 'n', 1, '\x0001'), ('bad', 'f', 'j', 1, '\x05'),
    ('bad', 'f', 'at', 1, '\x0000'), ('bad', 'f', 'd', 1, '\x00'),
    ('long', 'f', 'n', 1, '\x0001000000000000000100'), ('zero', 'f', 'd', 1, '\x00000000');
SELECT n FROM typed WHERE rowkey = 'bad';
SELECT wide_try($$SELECT j FROM typed WHERE rowkey = 'bad'$$);
SELECT wide_try($$SELECT at FROM typed WHERE rowkey = 'bad'$$);
SELECT wide_try($$SELECT d FROM typed WHERE rowkey = 'bad'$$);
SELECT wide_try($$SELECT n FROM typed WHERE rowkey = 'long'$$);
SELECT wide_try($$SELECT d FROM typed WHERE rowkey = 'zero'$$);
SELECT rowkey, n FROM typed WHERE rowkey IN ('good', 'zero') ORDER BY rowkey;
-- timestamps: infinity passes, a value beyond timestamptz's range is the type's own 22008,
-- and a column with a precision rounds as the type's receive function does
INSERT INTO typed_cells VALUES ('inf', 'f', 'at', 1, '\x7fffffffffffffff'), ('far', 'f', 'at', 1, '\x7fffffffffffff00');
INSERT INTO typed (rowkey, at) VALUES ('frac', '2020-01-01 00:00:00.6+00');
SELECT rowkey, at FROM typed WHERE rowkey = 'inf';
SELECT wide_try($$SELECT at FROM typed WHERE rowkey = 'far'$$);
CREATE FOREIGN TABLE typed_round (rowkey text COLLATE "C", at timestamptz(0) OPTIONS (cell 'f:at'))
    SERVER wide OPTIONS (store 'typed');
SELECT rowkey, at = '2020-01-01 00:00:01+00' AS rounded FROM typed_round WHERE rowkey = 'frac';
DROP FOREIGN TABLE typed_round;
-- what an HBase client's Bytes.toBytes(int / long / short / float / double / boolean) writes
CREATE FOREIGN TABLE from_hbase (
    rowkey text COLLATE "C", i int OPTIONS (cell 'h:i'), l bigint OPTIONS (cell 'h:l'),
    s smallint OPTIONS (cell 'h:s'), f real OPTIONS (cell 'h:f'), d float8 OPTIONS (cell 'h:d'),
    b boolean OPTIONS (cell 'h:b')
) SERVER wide OPTIONS (families 'h');
CREATE FOREIGN TABLE from_hbase_cells (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value bytea)
    SERVER wide OPTIONS (store 'from_hbase');
INSERT INTO from_hbase_cells VALUES ('r', 'h', 'i', 1, '\xfffffffe'), ('r', 'h', 'l', 1, '\x0000000100000000'),
    ('r', 'h', 's', 1, '\x7fff'), ('r', 'h', 'f', 1, '\x3fc00000'), ('r', 'h', 'd', 1, '\xc00921fb54442d18'),
    ('r', 'h', 'b', 1, '\xff');
SELECT * FROM from_hbase;
DROP FOREIGN TABLE from_hbase, from_hbase_cells;
-- a tall table's value column says the same
CREATE FOREIGN TABLE typed_int (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value int)
    SERVER wide OPTIONS (store 'typed');
SELECT value FROM typed_int WHERE rowkey = 'bad' AND qualifier = 'n';
DROP FOREIGN TABLE typed, typed_cells, typed_int;
DROP DOMAIN wide_pos;

-- what a DELETE, an UPDATE to NULL and an UPDATE of a whole family delete:
-- every version of the cells the transaction sees, its own writes too, and
-- nothing committed after it looked (bounded markers; what other sessions
-- commit meanwhile: specs/iso_delete_insert.spec)
CREATE FOREIGN TABLE own (rowkey text COLLATE "C", n int OPTIONS (cell 'f:n'),
    note text OPTIONS (cell 'f:note'), attrs jsonb OPTIONS (cell 'j:*'))
    SERVER wide OPTIONS (families 'f,j');
CREATE FOREIGN TABLE own_cells (rowkey text COLLATE "C", family text, qualifier text, ts bigint, value bytea)
    SERVER wide OPTIONS (store 'own');
INSERT INTO own VALUES ('k', 0, 'committed', '{"a": 1}'), ('m0', 5, 'stays', NULL);
BEGIN;
INSERT INTO own VALUES ('x', 1, 'mine', '{"a": 1, "b": 2}');
UPDATE own SET n = 2 WHERE rowkey = 'x';
UPDATE own SET n = n + 1 WHERE note = 'mine';
SELECT count(DISTINCT (family, qualifier)) AS cells_of_x FROM own_cells WHERE rowkey = 'x';
DELETE FROM own WHERE rowkey = 'x';
SELECT count(DISTINCT (family, qualifier)) AS cells_of_x FROM own_cells WHERE rowkey = 'x';
INSERT INTO own VALUES ('y', 1, 'mine', '{"a": 1, "b": 2}');
UPDATE own SET note = NULL, attrs = '{"c": 3}' WHERE rowkey = 'y';
UPDATE own SET attrs = '{"d": 4}' WHERE rowkey = 'k';
UPDATE own SET note = NULL WHERE n = 0;
DELETE FROM own WHERE rowkey = 'k';
INSERT INTO own VALUES ('k', 9, NULL, NULL);
INSERT INTO own VALUES ('m1', 1, 'moved', '{"e": 5}');
UPDATE own SET rowkey = 'm2' WHERE rowkey = 'm1';
UPDATE own SET rowkey = 'm0', note = 'over' WHERE rowkey = 'm2';
SELECT * FROM own ORDER BY rowkey;
COMMIT;
SELECT * FROM own ORDER BY rowkey;
SELECT rowkey, family, qualifier, value FROM own_cells ORDER BY rowkey, family, qualifier, ts DESC;
SELECT widecol_flush('own');
SELECT * FROM own ORDER BY rowkey;
SELECT widecol_compact('own');
SELECT rowkey, family, qualifier, value FROM own_cells ORDER BY rowkey, family, qualifier, ts DESC;
DROP FOREIGN TABLE own, own_cells;

-- a family whose name holds ':' could never be mapped by a cell option: refused
CREATE FOREIGN TABLE colon (rowkey text, family text, qualifier text, ts bigint, value text)
    SERVER wide OPTIONS (families 'a:b,c');

-- constraints and RETURNING see a 'family:*' object as stored and read back (the jsonb rule:
-- no null members, a string whose text is JSON as that JSON), as an ordinary table would
-- hold it after the same rule
CREATE FOREIGN TABLE ck (rowkey text COLLATE "C",
    d jsonb OPTIONS (cell 'g:*') CHECK (d ? 'must') CHECK (jsonb_typeof(d->'s') = 'string'))
    SERVER wide OPTIONS (families 'g');
INSERT INTO ck VALUES ('a', '{"must": null, "s": "x"}') RETURNING *;
INSERT INTO ck VALUES ('b', '{"must": 1, "s": "42"}') RETURNING *;
INSERT INTO ck VALUES ('c', '{"must": 1, "s": "x", "n": null, "j": "[1, 2]", "k": "\"q\""}') RETURNING *;
UPDATE ck SET d = d || '{"must": null}' WHERE rowkey = 'c';
UPDATE ck SET d = d || '{"z": null, "y": "true"}' RETURNING *;
SELECT * FROM ck;
DROP FOREIGN TABLE ck;

-- a cell whose text is a JSON number beyond jsonb's numeric reads as a string, not an error
CREATE FOREIGN TABLE bignum (rowkey text COLLATE "C", d jsonb OPTIONS (cell 'g:*'))
    SERVER wide OPTIONS (families 'g');
CREATE FOREIGN TABLE bignum_cells (rowkey text COLLATE "C", family text, qualifier text, ts bigint,
    value text) SERVER wide OPTIONS (store 'bignum');
INSERT INTO bignum_cells VALUES ('b', 'g', 'big', 1, '1e999999'), ('b', 'g', 'fits', 1, '123e131068'),
    ('b', 'g', 'over', 1, '[1, 123e131070]'), ('b', 'g', 'tiny', 1, '1e-16383'),
    ('b', 'g', 'tinier', 1, '1.5e-16383'), ('b', 'g', 'zero', 1, '0e999999999'),
    ('b', 'g', 'huge_exp', 1, '1e99999999999999999999');
SELECT key, jsonb_typeof(value), CASE WHEN jsonb_typeof(value) = 'string' THEN value #>> '{}' END
  FROM bignum, jsonb_each(d) ORDER BY key;
DROP FOREIGN TABLE bignum, bignum_cells;

-- binary cells and qualifiers (an HBase client's counter, a binary qualifier) keep their bytes
-- through a read-modify-write of their family: a string "\x<hex>" whose bytes are not text
-- stands for those bytes; one whose bytes are text ("\x41") stays that text
CREATE FOREIGN TABLE hb (rowkey text COLLATE "C", d jsonb OPTIONS (cell 'g:*'))
    SERVER wide OPTIONS (families 'g');
CREATE FOREIGN TABLE hb_cells (rowkey text COLLATE "C", family text, qualifier bytea, ts bigint,
    value bytea) SERVER wide OPTIONS (store 'hb');
INSERT INTO hb_cells VALUES ('r', 'g', 'counter', 1, '\x0000000000000005'),
    ('r', 'g', '\xff01', 1, 'v'), ('r', 'g', 'name', 1, 'bob');
SELECT d FROM hb;
UPDATE hb SET d = d || '{"added": 1}' WHERE rowkey = 'r' RETURNING *;
SELECT qualifier, value FROM hb_cells ORDER BY qualifier;
INSERT INTO hb VALUES ('t', '{"lit": "\\x41", "bin": "\\xdeadbeef", "odd": "\\x0", "nothex": "\\xZZ"}')
    RETURNING *;
SELECT qualifier, value FROM hb_cells WHERE rowkey = 't' ORDER BY qualifier;
DROP FOREIGN TABLE hb, hb_cells;

-- a stored value that its type's receive function no longer takes (an enum's label renamed):
-- the error names the column and the table
CREATE TYPE wide_mood AS ENUM ('sad', 'ok');
CREATE FOREIGN TABLE moods (rowkey text COLLATE "C", m wide_mood OPTIONS (cell 'f:m'))
    SERVER wide OPTIONS (families 'f');
INSERT INTO moods VALUES ('a', 'sad'), ('b', 'ok');
ALTER TYPE wide_mood RENAME VALUE 'sad' TO 'blue';
SELECT * FROM moods ORDER BY rowkey;
ALTER TYPE wide_mood RENAME VALUE 'blue' TO 'sad';
SELECT * FROM moods ORDER BY rowkey;
DROP FOREIGN TABLE moods;
DROP TYPE wide_mood;

DROP FOREIGN TABLE scores, users;
DROP TABLE users_plain, picks;
DROP FUNCTION wide_try(text);
